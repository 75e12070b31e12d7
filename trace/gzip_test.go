package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// gzipped compresses data as gzip(1) would.
func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// privateTemp points $TMPDIR at a directory of the test's own and returns
// it, so that the test can see the unpacked copies Open makes.
func privateTemp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

func tempEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestGzippedExport opens a real export gzipped: it reads the same trace as
// the export itself, the user's file is left as it was, and the unpacked
// copy lives only while the export is open.
func TestGzippedExport(t *testing.T) {
	plain := leanPlain(t)
	tmp := privateTemp(t)
	raw, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	gz := writeFile(t, "syncs_lean.sqlite.gz", gzipped(t, raw))
	before := fileDigest(t, gz)

	x, err := Open(context.Background(), gz)
	if err != nil {
		t.Fatalf("Open(%s): %v", gz, err)
	}
	if x.Path != gz {
		t.Errorf("Export.Path = %q, want the user's file %q", x.Path, gz)
	}
	if n := len(tempEntries(t, tmp)); n != 1 {
		t.Errorf("%d files in $TMPDIR while the export is open, want its one unpacked copy", n)
	}
	got, err := x.Load(context.Background(), LoadOptions{})
	if err != nil {
		t.Fatalf("Load(%s): %v", gz, err)
	}
	if err := x.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if left := tempEntries(t, tmp); len(left) != 0 {
		t.Errorf("Close left %v in $TMPDIR", left)
	}
	if fileDigest(t, gz) != before {
		t.Error("the gzipped export changed")
	}

	want := loadFile(t, plain, LoadOptions{})
	if len(got.Syncs) == 0 || len(got.Syncs) != len(want.Syncs) || got.Stats != want.Stats {
		t.Fatalf("gzipped: %d syncs, %d calls, %d GPU ops; the export itself: %d, %d, %d",
			len(got.Syncs), got.Stats.APICalls, got.Stats.GPUOps, len(want.Syncs), want.Stats.APICalls, want.Stats.GPUOps)
	}
	for i := range want.Syncs {
		if !reflect.DeepEqual(got.Syncs[i], want.Syncs[i]) {
			t.Fatalf("sync %d differs: gzipped %+v, export %+v", i, got.Syncs[i], want.Syncs[i])
		}
	}
}

// TestBadGzip checks that a gzip file that holds no readable export gets
// one error line naming the file, and leaves no unpacked copy behind.
func TestBadGzip(t *testing.T) {
	raw, err := os.ReadFile(leanPlain(t))
	if err != nil {
		t.Fatal(err)
	}
	whole := gzipped(t, raw)
	badSum := bytes.Clone(whole)
	badSum[len(badSum)-8] ^= 0xff // the CRC-32 of the trailer
	tests := []struct {
		name    string
		data    []byte
		want    error
		problem string
	}{
		{"truncated gzip", whole[:len(whole)/2], ErrTruncated, "truncated gzip file"},
		{"gzip header only", whole[:10], ErrTruncated, "truncated gzip file"},
		{"checksum wrong", badSum, ErrCorrupt, "checksum"},
		{"gzipped text", gzipped(t, []byte("hello, not a database\n")), ErrNotSQLite, "unpacked from gzip: not an SQLite database"},
		{"gzipped nothing", gzipped(t, nil), ErrNotSQLite, "unpacks to nothing"},
		{"gzipped truncated export", gzipped(t, raw[:len(raw)/2]), ErrTruncated, "unpacked from gzip: truncated SQLite file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := privateTemp(t)
			path := writeFile(t, "bad.sqlite.gz", tc.data)
			_, err := loadErr(path)
			if err == nil {
				t.Fatal("want an error, got a trace")
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %q is not %v", err, tc.want)
			}
			var ie *InputError
			msg := err.Error()
			if !errors.As(err, &ie) || !strings.HasPrefix(msg, path+": ") || strings.Contains(msg, "\n") || !strings.Contains(msg, tc.problem) {
				t.Errorf("want one InputError line naming %s and %q, got %q", path, tc.problem, msg)
			}
			if left := tempEntries(t, tmp); len(left) != 0 {
				t.Errorf("left %v in $TMPDIR", left)
			}
		})
	}
}

// TestGzipCancelled: a cancelled unpacking stops and removes its copy.
func TestGzipCancelled(t *testing.T) {
	plain := leanPlain(t)
	tmp := privateTemp(t)
	raw, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, "syncs_lean.sqlite.gz", gzipped(t, raw))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, path); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context: %v, want context.Canceled", err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) != 0 {
		t.Errorf("left %v in $TMPDIR", left)
	}
}
