package triage

import (
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/analysis"
	"github.com/nsyssync/nsyssync/contract"
	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/report"
	"github.com/nsyssync/nsyssync/trace"
)

const (
	fixturesDir = "../fixtures"
	corpusDir   = "../../shared/corpus"
)

// goodFixtures are real exports of the repository that analyse cleanly,
// by the name of their copy in a night (storedFixture finds the file).
var goodFixtures = []string{"syncs_lean.sqlite", "syncs_autograd.sqlite", "syncs_backtrace.sqlite", "multiproc_lean.sqlite",
	"patterns_lean.sqlite", "gt_item_small.sqlite.gz"}

// storedFixture is the repository's file of the fixture NAME.sqlite or
// NAME.sqlite.gz: NAME.sqlite where it exists, else NAME.sqlite.gz, as
// the fixtures are stored (copyFile decompresses it into a plain name).
func storedFixture(name string) string {
	return fixturegz.Path(fixturesDir, strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".sqlite"))
}

// corpusGood are real third-party exports of the shared corpus that
// analyse cleanly; corpusNoCUDA is one that has no CUDA trace.
var corpusGood = []string{"pytorch-cnn-dlprof_rtx2070s_nsys2022.1.sqlite", "openacc-jacobi_4xv100_reexport2025.3.sqlite",
	"mpi-cuda-saxpy_perlmutter-a100_nsys2022.2.sqlite"}

const corpusNoCUDA = "icon-graupel-no-cuda-trace_reexport2025.3.sqlite"

// copyFile copies src to dst; a gzipped src (NAME.sqlite.gz, as the
// fixtures are stored) is decompressed unless dst ends in .gz too.
func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var r io.Reader = in
	if strings.HasSuffix(src, ".gz") && !strings.HasSuffix(dst, ".gz") {
		zr, err := gzip.NewReader(in)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		r = zr
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, r); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// haveCorpus reports whether the shared corpus sits beside the checkout.
func haveCorpus() bool {
	_, err := os.Stat(filepath.Join(corpusDir, corpusNoCUDA))
	return err == nil
}

// directDocument analyses an export the way `analyze` does, without this
// package, as the reference the batch must match.
func directDocument(t testing.TB, path string) contract.Document {
	t.Helper()
	ctx := context.Background()
	x, err := trace.Open(ctx, path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer x.Close()
	tr, err := x.Load(ctx, trace.LoadOptions{})
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return report.New(tr).BuildDocument()
}

// collect runs a batch and returns its results in emitted order.
func collect(t testing.TB, inputs []Input, opt Options) []Result {
	t.Helper()
	var out []Result
	if err := Batch(context.Background(), inputs, opt, func(r Result) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatalf("batch: %v", err)
	}
	return out
}

// recordRun records the results as one finished run.
func recordRun(t testing.TB, db *DB, label string, results []Result) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := db.BeginRun(ctx, RunInfo{Label: label})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if err := db.AddResult(ctx, id, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.FinishRun(ctx, id); err != nil {
		t.Fatal(err)
	}
	return id
}

// noEstimate analyses without the savings simulator: the tests that do not
// look at savings stay quick.
var noEstimate = analysis.Options{NoEstimate: true}
