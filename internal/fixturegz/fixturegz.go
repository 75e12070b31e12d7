// Package fixturegz finds and decompresses the gzipped fixtures
// (fixtures/gt_NAME.sqlite.gz, fixtures/labelled/NAME.MODE.sqlite.gz) for
// the tests of several packages: one helper, so that every test reads
// them the same way. trace.Open reads a gzipped export itself; Gunzip is
// for the tests that also read the file with SQLite directly.
package fixturegz

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Path is the fixture NAME in dir: dir/NAME.sqlite where that file
// exists, else its gzipped form dir/NAME.sqlite.gz.
func Path(dir, name string) string {
	plain := filepath.Join(dir, name+".sqlite")
	if _, err := os.Stat(plain); err == nil {
		return plain
	}
	return plain + ".gz"
}

// Plain is the fixture NAME in dir as a plain SQLite file, for tests
// that read or change it with SQLite itself: dir/NAME.sqlite where that
// file exists, else dir/NAME.sqlite.gz decompressed into a temporary
// directory of the test.
func Plain(tb testing.TB, dir, name string) string {
	tb.Helper()
	p := Path(dir, name)
	if !strings.HasSuffix(p, ".gz") {
		return p
	}
	return Gunzip(tb, p, tb.TempDir())
}

// Gunzip decompresses NAME.sqlite.gz into dir/NAME.sqlite and returns its
// path; any failure fails the test.
func Gunzip(tb testing.TB, gz, dir string) string {
	tb.Helper()
	in, err := os.Open(gz)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		tb.Fatalf("%s: %v", gz, err)
	}
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(gz), ".gz"))
	f, err := os.Create(out)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(f, zr); err != nil {
		tb.Fatalf("%s: %v", gz, err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return out
}
