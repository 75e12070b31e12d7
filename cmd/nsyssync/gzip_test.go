package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnalyzeGzipped runs analyze and batch on a gzipped export: the same
// report as the export itself (but for its name), the .gz file unchanged,
// and no unpacked copy left in $TMPDIR when the command ends.
func TestAnalyzeGzipped(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	plain := copyInto(t, dir, "../../fixtures/syncs_lean.sqlite.gz", "night.sqlite")
	raw, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	gzDir := t.TempDir()
	gz := filepath.Join(gzDir, "night.sqlite.gz")
	if err := os.WriteFile(gz, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	unchanged(t, gz)

	codePlain, want, _ := runCLI(t, "analyze", "--format", "json", "--nvtx", "measured", plain)
	code, got, errOut := runCLI(t, "analyze", "--format", "json", "--nvtx", "measured", gz)
	if code != exitOK || codePlain != exitOK {
		t.Fatalf("analyze: exit %d (plain %d): %s", code, codePlain, errOut)
	}
	if !strings.Contains(got, `"syncs"`) || strings.ReplaceAll(got, gz, plain) != want {
		t.Errorf("the gzipped export's report differs from the export's own")
	}
	if left := listDir(t, tmp); len(left) != 0 {
		t.Errorf("analyze left %v in $TMPDIR", left)
	}

	// batch over a directory holding both: the export once, the gzipped
	// copy beside it skipped; over the gzipped copy alone: analysed.
	copyInto(t, dir, gz, "night.sqlite.gz")
	for _, tc := range []struct {
		dir, want string
	}{{dir, "night.sqlite "}, {gzDir, "night.sqlite.gz "}} {
		code, out, errOut := runCLI(t, "batch", tc.dir)
		if code != exitOK || !strings.Contains(out, "1 input: 1 analysed, 0 failed") || !strings.Contains(out, tc.want) {
			t.Errorf("batch %s: exit %d, want %q in:\n%s%s", tc.dir, code, tc.want, out, errOut)
		}
	}
	if left := listDir(t, tmp); len(left) != 0 {
		t.Errorf("batch left %v in $TMPDIR", left)
	}
}
