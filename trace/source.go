package trace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/nsyssync/nsyssync/internal/sqlitefile"
	"github.com/nsyssync/nsyssync/internal/sqlitescan"
)

// source is the SQLite side of an export: the database handle, the pool
// of scan connections, the file read page by page, and the schema. Its
// methods run the queries and scans (query.go, tablescan.go); the loaders
// of the parts of a Trace read through it. It is safe for concurrent
// readers.
type source struct {
	Path   string // the user's file, as errors name it
	Schema *Schema
	sqlDB  *sql.DB
	// data is the SQLite file read: Path, or the temporary file a gzipped
	// export was unpacked into (unpacked, removed by close; "" otherwise).
	data     string
	unpacked string
	uri      string

	mu     sync.Mutex
	idle   []*sqlitescan.Conn // scan connections not in use
	closed bool

	// The large tables are read from the file's pages (tablescan.go).
	fileMu  sync.Mutex
	file    *sqlitefile.File
	fileErr error // the file cannot be read so: SQL only
	layouts map[string]*tableLayout
	sqlOnly bool // tests: every scan through SQL
}

// close releases the database handles. Scans still running close their
// connections when they end.
func (src *source) close() error {
	src.mu.Lock()
	idle := src.idle
	src.idle, src.closed = nil, true
	src.mu.Unlock()
	for _, c := range idle {
		c.Close()
	}
	src.fileMu.Lock()
	if src.file != nil {
		src.file.Close()
		src.file = nil
	}
	src.fileErr = errors.New("export closed")
	src.fileMu.Unlock()
	err := src.sqlDB.Close()
	if src.unpacked != "" {
		if rerr := os.Remove(src.unpacked); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = fmt.Errorf("%s: removing its unpacked copy: %w", src.Path, rerr)
		}
	}
	return err
}

// maxIdleConns bounds the scan connections a source keeps open between
// queries: one per core is what the parallel scans use.
const maxIdleConns = 4

// conn takes an idle scan connection or opens one (read-only, immutable,
// without a connection mutex: each is used by one goroutine at a time).
func (src *source) conn() (*sqlitescan.Conn, error) {
	src.mu.Lock()
	if src.closed {
		src.mu.Unlock()
		return nil, fmt.Errorf("export closed")
	}
	if n := len(src.idle); n > 0 {
		c := src.idle[n-1]
		src.idle = src.idle[:n-1]
		src.mu.Unlock()
		return c, nil
	}
	src.mu.Unlock()
	return sqlitescan.Open(src.uri)
}

// release returns a connection to the pool, or closes it when the query
// failed (its state is unknown) or the pool is full or closed.
func (src *source) release(c *sqlitescan.Conn, err error) {
	src.mu.Lock()
	if err == nil && !src.closed && len(src.idle) < maxIdleConns {
		src.idle = append(src.idle, c)
		c = nil
	}
	src.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// dbErr turns a database error into an InputError when it reveals a bad
// file, and wraps it with what was being read otherwise.
func (src *source) dbErr(err error, what string) error {
	if err == nil {
		return nil
	}
	var ie *InputError
	if errors.As(err, &ie) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "file is not a database"), strings.Contains(msg, "(26)"):
		return inputErr(src.Path, ErrNotSQLite, "not an SQLite database (%s)", what)
	case strings.Contains(msg, "malformed"), strings.Contains(msg, "(11)"), strings.Contains(msg, "corrupt"):
		return inputErr(src.Path, ErrCorrupt, "corrupt or truncated SQLite file (while %s)", what)
	case strings.Contains(msg, "converting") || strings.Contains(msg, "Scan error"):
		return inputErr(src.Path, ErrUnreadableRow, "unexpected value while %s: %v", what, err)
	}
	return fmt.Errorf("%s: %s: %w", src.Path, what, err)
}
