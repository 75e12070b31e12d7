package trace

import (
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
)

const leanFixture = "../fixtures/syncs_lean.sqlite.gz"

// leanPlain is leanFixture as a plain SQLite file, decompressed into the
// test's temporary directory, for the tests that copy, cut, corrupt or
// change its bytes.
func leanPlain(tb testing.TB) string {
	tb.Helper()
	return fixturegz.Plain(tb, "../fixtures", "syncs_lean")
}

// makeDB builds a small SQLite file from statements, for the bad-input and
// old-schema cases that no real export provides.
func makeDB(t *testing.T, name string, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	execAll(t, path, stmts)
	return path
}

// execAll runs statements on a database file, creating it when absent.
func execAll(t *testing.T, path string, stmts []string) {
	t.Helper()
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
}

// copyFixture copies a real fixture and applies statements to the copy.
func copyFixture(t *testing.T, src string, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), filepath.Base(src))
	copyFile(t, src, path, -1)
	execAll(t, path, stmts)
	return path
}

func copyFile(t *testing.T, src, dst string, limit int64) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var r io.Reader = in
	if limit >= 0 {
		r = io.LimitReader(in, limit)
	}
	if _, err := io.Copy(out, r); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const runtimeDDL = `CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
	globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER)`

// TestBadInput checks that every kind of bad file gives one error line that
// names the file and the problem, and leaves the file unchanged.
func TestBadInput(t *testing.T) {
	lean := leanPlain(t)
	stat, err := os.Stat(lean)
	if err != nil {
		t.Fatal(err)
	}
	half := stat.Size() / 2
	tests := []struct {
		name    string
		path    func(t *testing.T) string
		want    error
		problem string
	}{
		{"text file", func(t *testing.T) string { return writeFile(t, "notes.sqlite", []byte("hello, not a database\n")) }, ErrNotSQLite, "not an SQLite database"},
		{"empty file", func(t *testing.T) string { return writeFile(t, "empty.sqlite", nil) }, ErrNotSQLite, "empty file"},
		{"nsys report", func(t *testing.T) string { return writeFile(t, "r.nsys-rep", []byte("NSYS\x00binary")) }, ErrNotSQLite, "nsys export --type sqlite"},
		{"directory", func(t *testing.T) string { return t.TempDir() }, ErrNotSQLite, "is a directory"},
		{"missing file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "absent.sqlite") }, os.ErrNotExist, "no such file"},
		{"truncated export", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "truncated.sqlite")
			copyFile(t, lean, p, half)
			return p
		}, ErrTruncated, "truncated"},
		{"truncated header", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "header.sqlite")
			copyFile(t, lean, p, 40)
			return p
		}, ErrTruncated, "truncated"},
		{"not an nsys export", func(t *testing.T) string {
			return makeDB(t, "app.sqlite", `CREATE TABLE users (id INTEGER, name TEXT)`, `INSERT INTO users VALUES (1, 'a')`)
		}, ErrNotNsys, "not an nsys export"},
		{"empty SQLite database", func(t *testing.T) string { return makeDB(t, "blank.sqlite", `PRAGMA user_version = 1`) }, ErrNotNsys, "no tables"},
		{"nvprof database", func(t *testing.T) string {
			return makeDB(t, "nvprof.sqlite", `CREATE TABLE StringTable (_id_ INTEGER, value TEXT)`,
				`CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (start INTEGER, end INTEGER)`)
		}, ErrNotNsys, "nvprof"},
		{"no CUDA trace", func(t *testing.T) string {
			return makeDB(t, "osrt.sqlite", `CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)`,
				`CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER)`,
				`CREATE TABLE OSRT_API (start INTEGER, end INTEGER, globalTid INTEGER, nameId INTEGER)`)
		}, ErrNoCUDATrace, "no CUDA trace"},
		{"empty CUDA trace", func(t *testing.T) string {
			return makeDB(t, "emptytrace.sqlite", `CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)`, runtimeDDL)
		}, ErrNoCUDATrace, "is empty"},
		{"schema too old", func(t *testing.T) string {
			return makeDB(t, "old.sqlite", `CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)`,
				`CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER, correlationId INTEGER, name TEXT)`,
				`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1, 2, 3, 4, 'cudaStreamSynchronize')`)
		}, ErrUnsupported, "has no column \"nameId\""},
		{"wrong column type", func(t *testing.T) string {
			return makeDB(t, "types.sqlite", `CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)`, runtimeDDL,
				`INSERT INTO StringIds VALUES (1, 'cudaStreamSynchronize_v3020')`,
				`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ('soon', 'later', 0, 1, 2, 1, 0, NULL)`)
		}, ErrUnreadableRow, "unexpected value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t)
			var before []byte
			if st, err := os.Stat(path); err == nil && !st.IsDir() {
				before, _ = os.ReadFile(path)
			}
			tr, err := loadErr(path)
			if err == nil {
				t.Fatalf("want an error, got a trace with %d syncs", len(tr.Syncs))
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %q is not %v", err, tc.want)
			}
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Errorf("error %q is not an InputError", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+": ") || strings.Contains(msg, "\n") || !strings.Contains(msg, tc.problem) {
				t.Errorf("want one line naming %s and %q, got %q", path, tc.problem, msg)
			}
			if before != nil {
				after, _ := os.ReadFile(path)
				if string(after) != string(before) {
					t.Errorf("the input file changed")
				}
			}
			if entries, _ := filepath.Glob(path + "-*"); len(entries) > 0 {
				t.Errorf("files created beside the input: %v", entries)
			}
		})
	}
}

// TestCorruptPages flips bytes inside a real export: the reader may fail,
// with one clear line, or succeed, but never panic.
func TestCorruptPages(t *testing.T) {
	data, err := os.ReadFile(leanPlain(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{4096, len(data) / 3, len(data) / 2, len(data) - 4096} {
		bad := append([]byte(nil), data...)
		for i := at; i < at+512 && i < len(bad); i++ {
			bad[i] ^= 0x5A
		}
		path := writeFile(t, "corrupt.sqlite", bad)
		_, err := loadErr(path)
		if err != nil && (!strings.HasPrefix(err.Error(), path+": ") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("offset %d: want one line naming the file, got %q", at, err)
		}
	}
}
