package classify_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/trace"
)

// hostileBytes is the size of the one absurd string a hostile export holds.
const hostileBytes = 10 << 20

// hostileString is an SQL expression for a string of about hostileBytes:
// unit repeated, between prefix and suffix (SQL literals).
func hostileString(prefix, unit, suffix string) string {
	return fmt.Sprintf("%s || replace(hex(zeroblob(%d)), '00', '%s') || %s", prefix, hostileBytes/len(unit), unit, suffix)
}

// hostileExport copies the fixture NAME, decompressed, into a temporary
// directory, runs the statements on the copy and compacts it; it returns
// the copy's path and size.
func hostileExport(t *testing.T, fixture string, stmts ...string) (string, int64) {
	t.Helper()
	src, err := os.Open(fixturegz.Plain(t, filepath.Join("..", "fixtures"), fixture))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "hostile.sqlite")
	dst, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range append(stmts, "VACUUM") {
		res, err := db.Exec(q)
		if err != nil {
			t.Fatalf("%.80s: %v", q, err)
		}
		if n, _ := res.RowsAffected(); n == 0 && !strings.HasPrefix(q, "VACUUM") {
			t.Fatalf("%.80s changed no row", q)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, st.Size()
}

// analyse runs what `nsyssync analyze` runs before rendering — Open, Load,
// the sites with their verdicts (with a source root, so that frames' files
// are looked up) and the savings estimate — and returns the bytes it
// allocated.
func analyse(t *testing.T, path string) (allocated uint64, sites []classify.Site) {
	t.Helper()
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x, err := trace.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	tr, err := x.Load(ctx, trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sites = classify.Options{SourceRoot: t.TempDir()}.Sites(tr)
	if _, err := estimate.Run(ctx, x, tr, sites, estimate.Options{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, sites
}

// TestHostileNameBoundsMemory builds exports in which one string — a
// Python file or function name, a native symbol, an NVTX range name — is
// 10 MiB, and checks that analysing one allocates no more than a small
// multiple of its size: every name is held once, and what is built from a
// name per sync, per frame or per site is built from a bounded prefix.
func TestHostileNameBoundsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 10 MiB exports")
	}
	cases := []struct {
		name    string
		fixture string
		stmts   []string
	}{
		{"program's Python file", "syncs_backtrace", []string{
			"UPDATE StringIds SET value = " + hostileString("'/work/main/'", "ab/c&amp;", "'/syncs.py'") +
				" WHERE value = '/work/main/fixtures/programs/syncs.py'"}},
		{"Python function", "syncs_backtrace", []string{
			"UPDATE StringIds SET value = " + hostileString("'&lt;mod'", "ule&gt;", "''") + " WHERE value = '&lt;module&gt;'"}},
		{"torch's Python file", "syncs_backtrace", []string{
			"UPDATE StringIds SET value = " + hostileString("'/opt/'", "ab/", "'/site-packages/torch/cuda/streams.py'") +
				" WHERE value LIKE '%/site-packages/torch/cuda/streams.py'"}},
		{"native symbols, no Python frames", "syncs_backtrace", []string{
			"DELETE FROM NVTX_EVENTS WHERE eventType = 34",
			"UPDATE StringIds SET value = " + hostileString("'_PyEval_'", "EvalFrame", "''") + " WHERE value = '_PyEval_EvalFrameDefault'",
			"UPDATE StringIds SET value = " + hostileString("'torch::autograd::THPVariable_item<'", "(anonymous namespace)::x, ", "'>(_object*)'") +
				" WHERE value LIKE 'torch::autograd::THPVariable_item(%'"}},
		{"NVTX range", "syncs_autograd", []string{
			"UPDATE NVTX_EVENTS SET text = " + hostileString("'measured'", "step1 ", "''") + " WHERE text = 'measured'"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, size := hostileExport(t, c.fixture, c.stmts...)
			allocated, sites := analyse(t, path)
			limit := 8*uint64(size) + 32<<20
			t.Logf("%s: %d sites, %.1f MiB allocated from a %.1f MiB export (limit %.0f MiB)",
				c.name, len(sites), float64(allocated)/(1<<20), float64(size)/(1<<20), float64(limit)/(1<<20))
			if allocated > limit {
				t.Errorf("analysing a %d-byte export allocated %d bytes, over %d", size, allocated, limit)
			}
			if len(sites) == 0 {
				t.Error("no sites")
			}
		})
	}
}
