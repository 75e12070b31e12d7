// Package fixturegz decompresses the gzipped fixtures of the labelled set
// (fixtures/labelled/NAME.MODE.sqlite.gz) for the tests of several
// packages: one helper, so that every test reads them the same way.
package fixturegz

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
