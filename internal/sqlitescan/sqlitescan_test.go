package sqlitescan

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// testDB builds a small database with the driver and returns its read-only
// URI.
func testDB(t *testing.T, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro&immutable=1"
}

func openT(t *testing.T, uri string) *Conn {
	t.Helper()
	c, err := Open(uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestScanValues(t *testing.T) {
	uri := testDB(t,
		`CREATE TABLE v (id INTEGER PRIMARY KEY, x)`,
		`INSERT INTO v VALUES (1, 42), (2, NULL), (3, 2.75), (4, 'text'), (5, x'00ff'), (6, -9223372036854775808), (7, '')`)
	c := openT(t, uri)
	tests := []struct {
		id       int64
		typ      int
		i64      int64
		text     string
		bytesNil bool
	}{
		{1, TypeInteger, 42, "42", false},
		{2, TypeNull, 0, "", true},
		{3, TypeFloat, 2, "2.75", false},
		{4, TypeText, 0, "text", false},
		{5, TypeBlob, 0, "\x00\xff", false},
		{6, TypeInteger, -9223372036854775808, "-9223372036854775808", false},
		{7, TypeText, 0, "", false},
	}
	for _, tc := range tests {
		n, err := c.Scan(context.Background(), `SELECT x FROM v WHERE id = ?`, []any{tc.id}, func(r Row) error {
			if r.Columns() != 1 {
				t.Errorf("id %d: %d columns", tc.id, r.Columns())
			}
			if got := r.Type(0); got != tc.typ {
				t.Errorf("id %d: type %d, want %d", tc.id, got, tc.typ)
			}
			if tc.typ == TypeInteger || tc.typ == TypeFloat {
				if got := r.Int64(0); got != tc.i64 {
					t.Errorf("id %d: Int64 %d, want %d", tc.id, got, tc.i64)
				}
			}
			wantInt := int64(0)
			if tc.typ == TypeInteger {
				wantInt = tc.i64
			}
			if v, typ := r.IntValue(0); typ != tc.typ || v != wantInt {
				t.Errorf("id %d: IntValue %d, %d; want %d, %d", tc.id, v, typ, wantInt, tc.typ)
			}
			if got := r.Text(0); got != tc.text {
				t.Errorf("id %d: Text %q, want %q", tc.id, got, tc.text)
			}
			if tc.typ == TypeText || tc.typ == TypeBlob {
				if got := string(r.Bytes(0)); got != tc.text {
					t.Errorf("id %d: Bytes %q, want %q", tc.id, got, tc.text)
				}
			}
			if got := r.Bytes(0) == nil; got != tc.bytesNil {
				t.Errorf("id %d: Bytes nil = %v, want %v", tc.id, got, tc.bytesNil)
			}
			return nil
		})
		if err != nil || n != 1 {
			t.Errorf("id %d: %d rows, %v", tc.id, n, err)
		}
	}
}

func TestScanArgsAndCount(t *testing.T) {
	uri := testDB(t, `CREATE TABLE s (id INTEGER PRIMARY KEY, name TEXT)`,
		`INSERT INTO s VALUES (1, 'cudaFree'), (2, 'cuMemFree_v2'), (3, 'cudaFree')`)
	c := openT(t, uri)
	tests := []struct {
		query string
		args  []any
		want  []int64
	}{
		{`SELECT id FROM s ORDER BY id`, nil, []int64{1, 2, 3}},
		{`SELECT id FROM s WHERE name = ? ORDER BY id`, []any{"cudaFree"}, []int64{1, 3}},
		{`SELECT id FROM s WHERE id > ?`, []any{int64(2)}, []int64{3}},
		{`SELECT id FROM s WHERE id < ?`, []any{2}, []int64{1}},
		{`SELECT id FROM s WHERE id > 10`, nil, nil},
	}
	for _, tc := range tests {
		var got []int64
		n, err := c.Scan(context.Background(), tc.query, tc.args, func(r Row) error {
			got = append(got, r.Int64(0))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		if n != int64(len(tc.want)) || len(got) != len(tc.want) {
			t.Fatalf("%s: %d rows %v, want %v", tc.query, n, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: row %d = %d, want %d", tc.query, i, got[i], tc.want[i])
			}
		}
	}
}

func TestScanErrors(t *testing.T) {
	uri := testDB(t, `CREATE TABLE s (id INTEGER PRIMARY KEY)`, `INSERT INTO s VALUES (1), (2)`)
	c := openT(t, uri)
	stop := errors.New("stop")
	tests := []struct {
		name  string
		query string
		args  []any
		fn    func(Row) error
		want  string // in the error text
		is    error
	}{
		{"no such table", `SELECT x FROM nope`, nil, nil, "no such table: nope (1)", nil},
		{"syntax", `SELEKT 1`, nil, nil, "syntax error", nil},
		{"empty", `  `, nil, nil, "empty query", nil},
		{"bad argument type", `SELECT ?`, []any{1.5}, nil, "unsupported type float64", nil},
		{"callback error", `SELECT id FROM s`, nil, func(Row) error { return stop }, "", stop},
		{"read-only", `INSERT INTO s VALUES (3)`, nil, nil, "readonly", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fn := tc.fn
			if fn == nil {
				fn = func(Row) error { return nil }
			}
			_, err := c.Scan(context.Background(), tc.query, tc.args, fn)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v, want %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
	// The connection still works after every error.
	if n, err := c.Scan(context.Background(), `SELECT id FROM s`, nil, func(Row) error { return nil }); err != nil || n != 2 {
		t.Errorf("after errors: %d rows, %v", n, err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "text.sqlite")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database ", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	uri := "file:" + (&url.URL{Path: notDB}).EscapedPath() + "?mode=ro&immutable=1"
	c, err := Open(uri)
	if err == nil {
		// SQLite opens lazily: the header is read by the first query.
		defer c.Close()
		_, err = c.Scan(context.Background(), `SELECT 1 FROM sqlite_master`, nil, func(Row) error { return nil })
	}
	var se *Error
	if !errors.As(err, &se) || se.Code&0xff != 26 {
		t.Errorf("not a database: got %v, want SQLITE_NOTADB (26)", err)
	}
	if _, err := Open("file:" + filepath.Join(dir, "absent.sqlite") + "?mode=ro"); err == nil {
		t.Error("absent file opened read-only")
	}
}

// TestScanCancel: a cancelled context stops a long scan that returns no
// rows, through sqlite3_interrupt, and the connection stays usable.
func TestScanCancel(t *testing.T) {
	uri := testDB(t, `CREATE TABLE s (id INTEGER PRIMARY KEY)`, `INSERT INTO s VALUES (1)`)
	c := openT(t, uri)
	// An endless recursive query: only an interrupt ends it.
	endless := `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n WHERE i < 0`
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Scan(ctx, endless, nil, func(Row) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %v", d)
	}
	done, stop := context.WithCancel(context.Background())
	stop()
	if _, err := c.Scan(done, `SELECT id FROM s`, nil, func(Row) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before the scan: %v", err)
	}
	if n, err := c.Scan(context.Background(), `SELECT id FROM s`, nil, func(Row) error { return nil }); err != nil || n != 1 {
		t.Errorf("after cancel: %d rows, %v", n, err)
	}
}
