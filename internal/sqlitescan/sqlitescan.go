// Package sqlitescan runs read-only queries through SQLite's C API as
// modernc.org/sqlite compiles it to Go, without the database/sql driver in
// between.
//
// It exists for speed on the multi-gigabyte tables of an nsys export. The
// driver opens every connection with SQLITE_OPEN_FULLMUTEX, so each
// sqlite3_column_* call takes and releases the connection's mutex (two
// calls per column and row), and it boxes every value into a
// driver.Value. A Conn here is opened with SQLITE_OPEN_NOMUTEX and is used
// by one goroutine at a time, and a Row reads integers in place: a third
// of the time of a full scan of an export's kernel table goes away.
package sqlitescan

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Column types, as sqlite3_column_type returns them.
const (
	TypeInteger = sqlite3.SQLITE_INTEGER
	TypeFloat   = sqlite3.SQLITE_FLOAT
	TypeText    = sqlite3.SQLITE_TEXT
	TypeBlob    = sqlite3.SQLITE_BLOB
	TypeNull    = sqlite3.SQLITE_NULL
)

// Error is an SQLite result code with its message. Its text ends in the
// code in parentheses, as the driver's errors do ("... (11)").
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d)", e.Msg, e.Code) }

// Conn is a read-only SQLite connection for one goroutine at a time.
type Conn struct {
	tls *libc.TLS
	db  uintptr
}

// Open opens a connection read-only. uri is an SQLite URI filename
// ("file:/path?mode=ro&immutable=1"); the connection never writes.
func Open(uri string) (*Conn, error) {
	tls := libc.NewTLS()
	c := &Conn{tls: tls}
	name, err := libc.CString(uri)
	if err != nil {
		tls.Close()
		return nil, err
	}
	defer libc.Xfree(tls, name)
	pdb := libc.Xmalloc(tls, 8)
	if pdb == 0 {
		tls.Close()
		return nil, errors.New("sqlite: out of memory")
	}
	defer libc.Xfree(tls, pdb)
	flags := int32(sqlite3.SQLITE_OPEN_READONLY | sqlite3.SQLITE_OPEN_NOMUTEX | sqlite3.SQLITE_OPEN_URI)
	rc := sqlite3.Xsqlite3_open_v2(tls, name, pdb, flags, 0)
	c.db = libc.AtomicLoadPUintptr(pdb) // sqlite3_open_v2 always sets *ppDb
	if rc != sqlite3.SQLITE_OK {
		err := c.errorOf(rc)
		c.Close()
		return nil, err
	}
	sqlite3.Xsqlite3_extended_result_codes(tls, c.db, 1)
	return c, nil
}

// Close closes the connection; a closed Conn must not be used.
func (c *Conn) Close() error {
	if c.db != 0 {
		sqlite3.Xsqlite3_close_v2(c.tls, c.db)
		c.db = 0
	}
	if c.tls != nil {
		c.tls.Close()
		c.tls = nil
	}
	return nil
}

// errorOf builds the error for a result code from the connection's message.
func (c *Conn) errorOf(rc int32) error {
	msg := libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))
	if c.db != 0 {
		if m := libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db)); m != "" && m != msg {
			msg += ": " + m
		}
	}
	return &Error{Code: int(rc), Msg: msg}
}

// Row is the current row of a query; it is valid only inside the callback
// that received it.
type Row struct {
	tls  *libc.TLS
	stmt uintptr
}

// Type returns the type of column i (0-based): TypeInteger, TypeNull, ….
func (r Row) Type(i int) int {
	return int(sqlite3.Xsqlite3_column_type(r.tls, r.stmt, int32(i)))
}

// Int64 reads column i as an integer: the value of an INTEGER column, the
// integer part of a REAL one. It does not check the type; use Type first
// where NULLs and text matter.
func (r Row) Int64(i int) int64 {
	return sqlite3.Xsqlite3_column_int64(r.tls, r.stmt, int32(i))
}

// IntValue reads column i with its type in one step: the value when the
// type is TypeInteger, else 0. It costs one column lookup where Type and
// Int64 cost two.
func (r Row) IntValue(i int) (v int64, typ int) {
	p := sqlite3.Xsqlite3_column_value(r.tls, r.stmt, int32(i))
	typ = int(sqlite3.Xsqlite3_value_type(r.tls, p))
	if typ == TypeInteger {
		v = sqlite3.Xsqlite3_value_int64(r.tls, p)
	}
	return v, typ
}

// Float64 reads column i as a floating-point number.
func (r Row) Float64(i int) float64 {
	return sqlite3.Xsqlite3_column_double(r.tls, r.stmt, int32(i))
}

// Bytes returns the text or blob of column i, borrowed: the slice is valid
// until the next row. NULL gives nil.
func (r Row) Bytes(i int) []byte {
	var p uintptr
	if r.Type(i) == TypeBlob {
		p = sqlite3.Xsqlite3_column_blob(r.tls, r.stmt, int32(i))
	} else {
		p = sqlite3.Xsqlite3_column_text(r.tls, r.stmt, int32(i))
	}
	n := sqlite3.Xsqlite3_column_bytes(r.tls, r.stmt, int32(i))
	if p == 0 || n <= 0 {
		if p != 0 {
			return []byte{}
		}
		return nil
	}
	return libc.GoBytes(p, int(n))
}

// Text returns column i as a new string (a number formatted as SQLite
// would); NULL gives "".
func (r Row) Text(i int) string {
	switch r.Type(i) {
	case TypeInteger:
		return strconv.FormatInt(r.Int64(i), 10)
	case TypeFloat:
		return strconv.FormatFloat(r.Float64(i), 'g', -1, 64)
	}
	return string(r.Bytes(i))
}

// Columns returns the number of columns of the query.
func (r Row) Columns() int { return int(sqlite3.Xsqlite3_column_count(r.tls, r.stmt)) }

// Scan runs query with its arguments (int64, int or string) and calls fn for
// each row, in order; it returns the number of rows. A cancelled ctx
// interrupts SQLite, also inside a long scan that returns no rows, and
// Scan returns ctx's error. An error from fn stops the scan and is
// returned as it is.
func (c *Conn) Scan(ctx context.Context, query string, args []any, fn func(Row) error) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	stmt, err := c.prepare(query)
	if err != nil {
		return 0, err
	}
	defer sqlite3.Xsqlite3_finalize(c.tls, stmt)
	if err := c.bind(stmt, args); err != nil {
		return 0, err
	}
	stop := c.interruptOn(ctx)
	defer stop()
	row := Row{tls: c.tls, stmt: stmt}
	var n int64
	for {
		switch rc := sqlite3.Xsqlite3_step(c.tls, stmt); rc {
		case sqlite3.SQLITE_ROW:
			n++
			if err := fn(row); err != nil {
				return n, err
			}
		case sqlite3.SQLITE_DONE:
			return n, nil
		default:
			if err := ctx.Err(); err != nil {
				return n, err
			}
			return n, c.errorOf(rc)
		}
	}
}

func (c *Conn) prepare(query string) (uintptr, error) {
	z, err := libc.CString(query)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(c.tls, z)
	pstmt := libc.Xmalloc(c.tls, 8)
	if pstmt == 0 {
		return 0, errors.New("sqlite: out of memory")
	}
	defer libc.Xfree(c.tls, pstmt)
	if rc := sqlite3.Xsqlite3_prepare_v2(c.tls, c.db, z, -1, pstmt, 0); rc != sqlite3.SQLITE_OK {
		return 0, c.errorOf(rc)
	}
	stmt := libc.AtomicLoadPUintptr(pstmt)
	if stmt == 0 {
		return 0, errors.New("sqlite: empty query")
	}
	return stmt, nil
}

func (c *Conn) bind(stmt uintptr, args []any) error {
	for i, a := range args {
		pos := int32(i + 1)
		var rc int32
		switch v := a.(type) {
		case int64:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, stmt, pos, v)
		case int:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, stmt, pos, int64(v))
		case string:
			// SQLITE_TRANSIENT (-1): SQLite copies the text before
			// the C string is freed.
			z, err := libc.CString(v)
			if err != nil {
				return err
			}
			rc = sqlite3.Xsqlite3_bind_text(c.tls, stmt, pos, z, int32(len(v)), ^uintptr(0))
			libc.Xfree(c.tls, z)
		default:
			return fmt.Errorf("sqlite: argument %d: unsupported type %T", i+1, a)
		}
		if rc != sqlite3.SQLITE_OK {
			return c.errorOf(rc)
		}
	}
	return nil
}

// interruptOn interrupts the connection when ctx is done, until stop is
// called; stop waits for an interrupt under way, so the connection is not
// closed under it.
func (c *Conn) interruptOn(ctx context.Context) (stop func()) {
	if ctx.Done() == nil {
		return func() {}
	}
	db := c.db
	var wg sync.WaitGroup
	wg.Add(1)
	cancel := context.AfterFunc(ctx, func() {
		defer wg.Done()
		// A TLS of its own: c.tls belongs to the goroutine stepping the
		// query. sqlite3_interrupt is one atomic store.
		tls := libc.NewTLS()
		sqlite3.Xsqlite3_interrupt(tls, db)
		tls.Close()
	})
	return func() {
		if cancel() {
			wg.Done()
			return
		}
		wg.Wait()
	}
}
