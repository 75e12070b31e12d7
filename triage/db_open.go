package triage

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/nsyssync/nsyssync/internal/safefile"
)

// busyTimeoutMs is how long a statement waits for another process's lock
// on the findings database before it fails with "database is locked".
const busyTimeoutMs = 30000

// querier is what schemaVersion reads through: a database or a
// transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// OpenDBReadOnly opens an existing findings database for reading only:
// nothing is created, migrated or written, and the file keeps its bytes
// and modification time. A database older than SchemaVersion() is read
// as it is when its schema can answer the queries; one too old for them
// fails with ErrNeedsMigration and says how to migrate it.
func OpenDBReadOnly(ctx context.Context, path string) (*DB, error) {
	if err := safefile.CheckRegular(path); err != nil {
		return nil, fmt.Errorf("%s: cannot open the findings database: %w", path, fileProblem(err))
	}
	db, err := openSQLite(path, true)
	if err != nil {
		return nil, err
	}
	v, err := checkedVersion(ctx, db, path)
	if err == nil {
		err = readableVersion(path, v)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return &DB{db: db, path: path, version: v}, nil
}

// readableVersion says whether the read-only queries can answer from a
// database of schema version v.
func readableVersion(path string, v int) error {
	switch {
	case v == 0:
		return fmt.Errorf("%s: %w (empty: record runs with 'nsyssync batch --db %s DIR')", path, ErrNotFindingsDB, path)
	case v < minReadVersion:
		return fmt.Errorf("%s: %w: its schema version %d is older than this nsyssync reads (%d); the next 'nsyssync batch --db %s' run migrates it",
			path, ErrNeedsMigration, v, minReadVersion, path)
	}
	return nil
}

// openSQLite opens a database file, read-write (created when absent) or
// read-only, with foreign keys on and a busy timeout. One connection:
// writes are serial and a read sees the writes before it. A read-write
// handle begins every transaction IMMEDIATE, taking the write lock at
// BEGIN, where the busy timeout applies: a deferred transaction that read
// first and then wrote could fail at once with "database is locked"
// when another process holds the lock. A read-only handle is also
// query_only, so that no statement can change the file.
func openSQLite(path string, readOnly bool) (*sql.DB, error) {
	// SQLite's own open of a FIFO would wait for a writer for ever, and a
	// device is no database: only a regular file, or none yet.
	if _, err := os.Stat(path); err == nil {
		if err := safefile.CheckRegular(path); err != nil {
			return nil, fmt.Errorf("%s: cannot open the findings database: %w", path, fileProblem(err))
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	params := fmt.Sprintf("?mode=rwc&_txlock=immediate&_pragma=foreign_keys(1)&_pragma=busy_timeout(%d)", busyTimeoutMs)
	if readOnly {
		params = fmt.Sprintf("?mode=ro&_pragma=query_only(1)&_pragma=foreign_keys(1)&_pragma=busy_timeout(%d)", busyTimeoutMs)
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: abs}).EscapedPath()+params)
	if err != nil {
		return nil, fmt.Errorf("%s: opening the findings database: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// schemaVersion returns the database's version: 0 for an empty database.
// A database with tables but no schema_version was not written by
// nsyssync, and is left alone.
func schemaVersion(ctx context.Context, q querier, path string) (int, error) {
	var tables, versioned int
	err := q.QueryRowContext(ctx, `SELECT count(*), count(CASE WHEN name = 'schema_version' THEN 1 END)
		FROM sqlite_master WHERE type = 'table'`).Scan(&tables, &versioned)
	if err != nil {
		if strings.Contains(err.Error(), "not a database") {
			return 0, fmt.Errorf("%s: %w (not an SQLite file)", path, ErrNotFindingsDB)
		}
		return 0, fmt.Errorf("%s: reading the findings database: %w", path, err)
	}
	if versioned == 0 {
		if tables > 0 {
			return 0, fmt.Errorf("%s: %w (it has tables but no schema_version; is it an nsys export?)", path, ErrNotFindingsDB)
		}
		return 0, nil
	}
	var v sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT max(version) FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("%s: reading the schema version: %w", path, err)
	}
	return int(v.Int64), nil
}
