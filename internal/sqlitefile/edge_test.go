package sqlitefile

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// buildDB makes a database that exercises what exports rarely hold: every
// integer width, negative numbers, reals, NULLs, text and blobs that
// overflow the page, a deep tree, a column added after rows were written,
// and an INTEGER PRIMARY KEY.
func buildDB(t testing.TB, pageSize int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edge.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{
		fmt.Sprintf("PRAGMA page_size = %d", pageSize),
		"CREATE TABLE nums (a INTEGER, b REAL, c TEXT, d BLOB)",
		"CREATE TABLE keyed (id INTEGER PRIMARY KEY, v INTEGER)",
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	ints := []int64{0, 1, -1, 127, -128, 32767, -32768, 1 << 23, -(1 << 23), 1<<31 - 1, -(1 << 31), 1 << 40, -(1 << 47), 1<<47 - 1, math.MaxInt64, math.MinInt64}
	for i := range 6000 {
		a := any(ints[i%len(ints)] + int64(i%3))
		if i%17 == 0 {
			a = nil
		}
		var c any = fmt.Sprintf("row %d", i)
		var d any = bytes.Repeat([]byte{byte(i)}, i%50)
		if i%997 == 0 {
			c = strings.Repeat("long text ", 700+i%300) // overflows
			d = bytes.Repeat([]byte{1, 2, 3}, 5000)
		}
		if _, err := tx.Exec("INSERT INTO nums VALUES (?, ?, ?, ?)", a, float64(i)/7, c, d); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("INSERT INTO keyed (id, v) VALUES (?, ?)", int64(i)*1000003-5000000, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"ALTER TABLE nums ADD COLUMN e INTEGER",
		"INSERT INTO nums (a, e) VALUES (5, 6)",
		"DELETE FROM nums WHERE rowid % 101 = 0", // free space inside pages
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestScanMatchesSQLiteOnEdgeCases(t *testing.T) {
	for _, ps := range []int{512, 4096, 65536} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			path := buildDB(t, ps)
			checkSame(t, path, 1)
			checkSame(t, path, 5)
		})
	}
}

func TestPartsCoverTheTableOnce(t *testing.T) {
	path := buildDB(t, 512)
	db, f := openBoth(t, path)
	for _, tb := range tables(t, db) {
		whole := fileRows(t, f, tb, 1)
		for _, n := range []int{2, 3, 8, 64, 1000} {
			parts, err := f.Parts(tb.root, n)
			if err != nil {
				t.Fatal(err)
			}
			if len(parts) > n || len(parts) == 0 {
				t.Errorf("%s: %d parts asked, %d given", tb.name, n, len(parts))
			}
			if got := fileRows(t, f, tb, n); strings.Join(got, "\n") != strings.Join(whole, "\n") {
				t.Errorf("%s: %d parts read other rows than one", tb.name, n)
			}
		}
	}
}

func TestScanStopsOnCallbackErrorAndCancel(t *testing.T) {
	path := buildDB(t, 4096)
	db, f := openBoth(t, path)
	tb := tables(t, db)[1] // nums
	parts, _ := f.Parts(tb.root, 1)
	stop := errors.New("stop")
	n, err := f.Scan(context.Background(), parts[0], []int{0}, func([]Value) error { return stop })
	if err != stop || n != 1 {
		t.Errorf("callback error: got %v after %d rows, want it as is after 1", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Scan(ctx, parts[0], []int{0}, func([]Value) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled scan: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	good := buildDB(t, 512)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	db := openSQL(t, good)
	nums := tables(t, db)[1]
	write := func(b []byte) string {
		p := filepath.Join(t.TempDir(), "bad.sqlite")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A cycle: the root's right-most child points back at the root.
	cyclic := bytes.Clone(data)
	off := int(nums.root-1) * 512
	if cyclic[off] != pageTableInterior {
		t.Fatalf("root of nums is not interior (%#x)", cyclic[off])
	}
	cyclic[off+8], cyclic[off+9], cyclic[off+10], cyclic[off+11] = byte(nums.root>>24), byte(nums.root>>16), byte(nums.root>>8), byte(nums.root)
	// A page of another type inside the tree.
	badType := bytes.Clone(data)
	badType[off] = 0x02
	for _, tc := range []struct {
		name string
		path string
		open bool // the error comes at Open
	}{
		{"text file", write([]byte("hello, not a database\n")), true},
		{"empty", write(nil), true},
		{"bad page size", write(append(append([]byte(headerMagic), 0, 3), data[18:]...)), true},
		{"truncated", write(data[:len(data)/3]), false},
		{"cycle", write(cyclic), false},
		{"page type", write(badType), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Open(tc.path)
			if tc.open {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("Open: %v, want ErrCorrupt", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			parts, err := f.Parts(nums.root, 4)
			for _, p := range parts {
				if err != nil {
					break
				}
				_, err = f.Scan(context.Background(), p, []int{0, 1, 2, 3}, func([]Value) error { return nil })
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestVarint(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want uint64
		n    int
	}{
		{[]byte{0x00}, 0, 1},
		{[]byte{0x7f}, 127, 1},
		{[]byte{0x81, 0x00}, 128, 2},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, math.MaxUint64, 9},
		{[]byte{0x81}, 0, 0},
		{nil, 0, 0},
	} {
		got, n := varint(tc.in)
		if got != tc.want || n != tc.n {
			t.Errorf("varint(%x) = %d, %d; want %d, %d", tc.in, got, n, tc.want, tc.n)
		}
	}
}

// TestRowidRange reads rowid ranges of every size and place, and compares
// them with the same rows of a whole scan.
func TestRowidRange(t *testing.T) {
	path := buildDB(t, 512)
	db, f := openBoth(t, path)
	for _, tb := range tables(t, db) {
		var rowids []int64
		whole, _ := f.Parts(tb.root, 1)
		if _, err := f.Scan(context.Background(), whole[0], []int{Rowid}, func(v []Value) error {
			rowids = append(rowids, v[0].Int)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		n := len(rowids)
		bounds := []int64{math.MinInt64, rowids[0] - 1, rowids[0], rowids[1], rowids[n/3], rowids[n/3] + 1, rowids[n-1], rowids[n-1] + 1, math.MaxInt64}
		for _, lo := range bounds {
			for _, hi := range bounds {
				var want []int64
				for _, r := range rowids {
					if r >= lo && r < hi {
						want = append(want, r)
					}
				}
				var got []int64
				if _, err := f.Scan(context.Background(), RowidRange(tb.root, lo, hi), []int{Rowid}, func(v []Value) error {
					got = append(got, v[0].Int)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s [%d, %d): %d rows, want %d", tb.name, lo, hi, len(got), len(want))
				}
			}
		}
	}
}
