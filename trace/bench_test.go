package trace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/internal/tracegen"
)

// benchExport returns a large export made by replicating a real one, built
// once under the temp dir and reused across runs. NSYSSYNC_BENCH_GB sets
// the size (default 1).
func benchExport(b *testing.B, src string) string {
	b.Helper()
	if _, err := os.Stat(src); err != nil {
		b.Skipf("source export %s absent", src)
	}
	gb := 1.0
	if v := os.Getenv("NSYSSYNC_BENCH_GB"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			b.Fatalf("NSYSSYNC_BENCH_GB=%q: %v", v, err)
		}
		gb = f
	}
	name := fmt.Sprintf("nsyssync-bench-%s-%gGB.sqlite", strings.TrimSuffix(filepath.Base(src), ".sqlite"), gb)
	out := filepath.Join(os.TempDir(), name)
	if st, err := os.Stat(out); err == nil && st.Size() > 0 {
		return out
	}
	start := time.Now()
	res, err := tracegen.Generate(context.Background(), tracegen.Options{Source: src, Output: out, TargetBytes: int64(gb * (1 << 30))})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %s: %d copies, %d rows, %d bytes in %s", out, res.Copies, res.Rows, res.Bytes, time.Since(start).Round(time.Second))
	return out
}

// tableRows counts the rows of the tables an inventory reads, with the
// test's own SQL.
func tableRows(b *testing.B, path string) int64 {
	db := rawDB(&testing.T{}, path)
	defer db.Close()
	var total int64
	for _, t := range []string{tableRuntime, tableKernel, tableMemcpy, tableMemset, tableSync, tableCudaEvent, tableGraphTrace, tableNVTX} {
		var n int64
		if err := db.QueryRow("SELECT count(*) FROM " + t).Scan(&n); err == nil {
			total += n
		}
	}
	return total
}

// peakRSS returns the process's peak resident set in MiB, and resetPeak
// starts a new peak (Linux: /proc/self/clear_refs 5).
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func resetPeak() {
	runtime.GC()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

func benchInventory(b *testing.B, src string) {
	path := benchExport(b, src)
	rows := tableRows(b, path)
	st, _ := os.Stat(path)
	resetPeak()
	b.ResetTimer()
	var syncs int
	start := time.Now()
	for i := 0; i < b.N; i++ {
		x, err := Open(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		tr, err := x.Load(context.Background(), LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		syncs = len(tr.Syncs)
		x.Close()
	}
	sec := time.Since(start).Seconds() / float64(b.N)
	b.ReportMetric(sec, "s/op")
	b.ReportMetric(float64(rows)/sec, "rows/s")
	b.ReportMetric(peakRSS(), "peakRSS-MiB")
	b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
	b.ReportMetric(float64(syncs), "syncs")
}

// BenchmarkInventorySyncHeavy: the lean PyTorch fixture (43 syncs in 67
// kernels) replicated to NSYSSYNC_BENCH_GB.
func BenchmarkInventorySyncHeavy(b *testing.B) {
	benchInventory(b, fixturegz.Plain(b, "../fixtures", "syncs_lean"))
}

// BenchmarkInventoryKernelHeavy: a CuPy trace of the corpus (30 syncs in
// 23k kernels) replicated likewise.
func BenchmarkInventoryKernelHeavy(b *testing.B) {
	benchInventory(b, filepath.Join(corpusDir, "cupy-gtls_rtx3060_nsys2023.1.sqlite"))
}

// BenchmarkInventoryTraining: a PyTorch training loop of the corpus
// (pytorch-aiprofiler-train-baseline: 159 syncs in 9.3k kernels) replicated
// likewise; the shape of a nightly training trace.
func BenchmarkInventoryTraining(b *testing.B) {
	benchInventory(b, filepath.Join(corpusDir, "pytorch-aiprofiler-train-baseline_reexport2025.3.sqlite"))
}

// BenchmarkInventoryPythonSampled: a capture with Python periodic samples
// (round 8's ps_loss_logged_count_branches with --python-sampling=true:
// 7.3k sample marks with their JSON payloads beside 11 syncs) replicated
// to NSYSSYNC_BENCH_GB: the cost of reading the samples' times and the
// payloads of those inside syncs, against BenchmarkInventorySyncHeavy.
func BenchmarkInventoryPythonSampled(b *testing.B) {
	src := filepath.Join(os.TempDir(), "nsyssync-bench-ps_loss_logged_count_branches.pysample.sqlite")
	if _, err := os.Stat(src); err != nil {
		fixturegz.Gunzip(b, "../fixtures/labelled/ps_loss_logged_count_branches.pysample.sqlite.gz", os.TempDir())
		if err := os.Rename(filepath.Join(os.TempDir(), "ps_loss_logged_count_branches.pysample.sqlite"), src); err != nil {
			b.Fatal(err)
		}
	}
	benchInventory(b, src)
}
