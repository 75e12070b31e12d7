package sqlitefile

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"math"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
	_ "modernc.org/sqlite"
)

// table is what the tests need to know of a table: its root page and, per
// column, the record index to read (Rowid for an INTEGER PRIMARY KEY).
type table struct {
	name string
	root uint32
	cols []int
	// real marks columns of REAL affinity: SQLite stores their integral
	// values as integers and converts them when it reads them.
	real []bool
	// integer lists the columns declared INTEGER, by position.
	integer []int
}

func openSQL(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openBoth opens a database through SQLite and through this package,
// both closed when the test ends.
func openBoth(t testing.TB, path string) (*sql.DB, *File) {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return openSQL(t, path), f
}

// tables lists the rowid tables of a database with their column layout.
func tables(t testing.TB, db *sql.DB) []table {
	t.Helper()
	rows, err := db.Query(`SELECT name, rootpage FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE '%WITHOUT ROWID%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var out []table
	for rows.Next() {
		var tb table
		if err := rows.Scan(&tb.name, &tb.root); err != nil {
			t.Fatal(err)
		}
		out = append(out, tb)
	}
	rows.Close()
	for i := range out {
		info, err := db.Query(`SELECT cid, type, pk, (SELECT count(*) FROM pragma_table_info(?1) WHERE pk > 0) FROM pragma_table_info(?1) ORDER BY cid`, out[i].name)
		if err != nil {
			t.Fatal(err)
		}
		for info.Next() {
			var cid, pk, npk int
			var typ string
			if err := info.Scan(&cid, &typ, &pk, &npk); err != nil {
				t.Fatal(err)
			}
			if pk == 1 && npk == 1 && strings.EqualFold(typ, "INTEGER") {
				cid = Rowid
			}
			if strings.EqualFold(typ, "INTEGER") {
				out[i].integer = append(out[i].integer, len(out[i].cols))
			}
			out[i].cols = append(out[i].cols, cid)
			up := strings.ToUpper(typ)
			out[i].real = append(out[i].real, strings.Contains(up, "REAL") || strings.Contains(up, "FLOA") || strings.Contains(up, "DOUB"))
		}
		info.Close()
	}
	return out
}

// sqlRows reads a table through SQLite, one row per line.
func sqlRows(t testing.TB, db *sql.DB, tb table) []string {
	t.Helper()
	rows, err := db.Query(fmt.Sprintf(`SELECT * FROM "%s" ORDER BY rowid`, tb.name))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	vals := make([]any, len(tb.cols))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, v := range vals {
			switch v := v.(type) {
			case nil:
				b.WriteString("NULL|")
			case int64:
				fmt.Fprintf(&b, "i%d|", v)
			case float64:
				fmt.Fprintf(&b, "f%v|", math.Float64bits(v))
			case string:
				b.WriteString("t" + digest([]byte(v)) + "|")
			case []byte:
				b.WriteString("b" + digest(v) + "|")
			default:
				t.Fatalf("unexpected %T", v)
			}
		}
		out = append(out, b.String())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// digest names a text or blob by its length, head and hash.
func digest(b []byte) string {
	h := fnv.New64a()
	h.Write(b)
	return fmt.Sprintf("%d:%.12q:%x", len(b), b, h.Sum64())
}

// fileRows reads a table through this package, parts in order.
func fileRows(t testing.TB, f *File, tb table, nparts int) []string {
	t.Helper()
	parts, err := f.Parts(tb.root, nparts)
	if err != nil {
		t.Fatalf("%s: %v", tb.name, err)
	}
	var out []string
	for _, p := range parts {
		_, err := f.Scan(context.Background(), p, tb.cols, func(vals []Value) error {
			var b strings.Builder
			for i, v := range vals {
				if v.Type == Integer && tb.real[i] {
					v = Value{Type: Float, Float: float64(v.Int)}
				}
				switch v.Type {
				case Null:
					b.WriteString("NULL|")
				case Integer:
					fmt.Fprintf(&b, "i%d|", v.Int)
				case Float:
					fmt.Fprintf(&b, "f%v|", math.Float64bits(v.Float))
				case Text:
					b.WriteString("t" + digest(v.Bytes) + "|")
				case Blob:
					b.WriteString("b" + digest(v.Bytes) + "|")
				}
			}
			out = append(out, b.String())
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", tb.name, err)
		}
	}
	return out
}

// checkSame compares every table of a database read both ways.
func checkSame(t *testing.T, path string, nparts int) {
	t.Helper()
	db, f := openBoth(t, path)
	for _, tb := range tables(t, db) {
		want := sqlRows(t, db, tb)
		got := fileRows(t, f, tb, nparts)
		if len(got) != len(want) {
			t.Errorf("%s %s: %d rows, SQLite reads %d", filepath.Base(path), tb.name, len(got), len(want))
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s %s row %d:\n got %s\nwant %s", filepath.Base(path), tb.name, i, got[i], want[i])
				break
			}
		}
	}
}

// fixtureExports decompresses the real exports of fixtures/README.md's
// table (fixtures/{multiproc,patterns,syncs}_*.sqlite.gz) into a temporary
// directory and returns their paths: both readers take a plain SQLite file.
func fixtureExports(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for _, prefix := range []string{"multiproc_", "patterns_", "syncs_"} {
		gz, _ := filepath.Glob("../../fixtures/" + prefix + "*.sqlite.gz")
		for _, p := range gz {
			paths = append(paths, fixturegz.Gunzip(t, p, dir))
		}
	}
	return paths
}

// TestScanMatchesSQLiteOnFixtures reads every table of the real exports of
// fixtures/ (fixtureExports) both ways, whole and in parts.
func TestScanMatchesSQLiteOnFixtures(t *testing.T) {
	paths := fixtureExports(t)
	if len(paths) == 0 {
		t.Fatal("no fixtures found")
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			checkSame(t, p, 1)
			checkSame(t, p, 7)
		})
	}
}

// TestScanMatchesSQLiteOnCorpus does the same on the real exports of
// ../shared/corpus, from nsys 2020.3 to 2025.5, when they are present.
func TestScanMatchesSQLiteOnCorpus(t *testing.T) {
	paths, _ := filepath.Glob("../../../shared/corpus/*.sqlite")
	if len(paths) == 0 {
		t.Skip("../shared/corpus absent")
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) { checkSame(t, p, 3) })
	}
}

// checkInts compares ScanInts with SQLite on the INTEGER columns of every
// table, in reverse order (the targets need not follow the record), with
// one column absent.
func checkInts(t *testing.T, path string) {
	t.Helper()
	db, f := openBoth(t, path)
	for _, tb := range tables(t, db) {
		if len(tb.integer) == 0 {
			continue
		}
		names, err := db.Query(fmt.Sprintf(`SELECT name FROM pragma_table_info('%s') ORDER BY cid`, tb.name))
		if err != nil {
			t.Fatal(err)
		}
		var all []string
		for names.Next() {
			var n string
			names.Scan(&n)
			all = append(all, `"`+n+`"`)
		}
		names.Close()
		var exprs []string
		var cols []int
		for k := len(tb.integer) - 1; k >= 0; k-- {
			exprs = append(exprs, all[tb.integer[k]])
			cols = append(cols, tb.cols[tb.integer[k]])
		}
		exprs = append(exprs, "NULL")
		cols = append(cols, Absent)
		rows, err := db.Query(fmt.Sprintf(`SELECT %s FROM "%s" ORDER BY rowid`, strings.Join(exprs, ", "), tb.name))
		if err != nil {
			t.Fatal(err)
		}
		want := make([]sql.NullInt64, len(cols))
		ptrs := make([]any, len(cols))
		for i := range want {
			ptrs[i] = &want[i]
		}
		var wantRows []string
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			wantRows = append(wantRows, fmt.Sprint(want))
		}
		rows.Close()
		parts, err := f.Parts(tb.root, 3)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]sql.NullInt64, len(cols))
		var gotRows []string
		for _, p := range parts {
			if _, err := f.ScanInts(context.Background(), p, cols, got, func() error {
				gotRows = append(gotRows, fmt.Sprint(got))
				return nil
			}); err != nil {
				t.Fatalf("%s: %v", tb.name, err)
			}
		}
		if strings.Join(gotRows, "\n") != strings.Join(wantRows, "\n") {
			t.Errorf("%s %s: ScanInts reads other values than SQLite (%d rows, want %d)", filepath.Base(path), tb.name, len(gotRows), len(wantRows))
		}
	}
}

func TestScanIntsMatchesSQLite(t *testing.T) {
	paths := append(fixtureExports(t), buildDB(t, 4096))
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) { checkInts(t, p) })
	}
}
