package fixturegz

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

// TestGunzip: the copy holds the bytes that were compressed, named without
// the .gz.
func TestGunzip(t *testing.T) {
	dir := t.TempDir()
	want := []byte("SQLite format 3\x00 and the rest")
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(want)
	zw.Close()
	gz := filepath.Join(dir, "a.lean.sqlite.gz")
	if err := os.WriteFile(gz, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := Gunzip(t, gz, t.TempDir())
	got, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(got, want) || filepath.Base(out) != "a.lean.sqlite" {
		t.Fatalf("%s: %q, %v", out, got, err)
	}
}
