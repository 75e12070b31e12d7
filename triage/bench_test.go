package triage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// benchNight makes a night of n exports in a temporary directory by
// copying the repository's fixtures and the shared corpus round-robin
// (the corpus export without a CUDA trace is among them, and fails as it
// would in a real night).
func benchNight(b *testing.B, n int) string {
	b.Helper()
	// The seven exports of fixtures/README.md, stored gzipped: copyFile
	// decompresses them into the night.
	var sources []string
	for _, prefix := range []string{"multiproc_", "patterns_", "syncs_"} {
		gz, _ := filepath.Glob(filepath.Join(fixturesDir, prefix+"*.sqlite.gz"))
		sources = append(sources, gz...)
	}
	corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	sources = append(sources, corpus...)
	if len(sources) == 0 {
		b.Fatal("no exports to copy")
	}
	dir := b.TempDir()
	for i := range n {
		src := sources[i%len(sources)]
		copyFile(b, src, filepath.Join(dir, fmt.Sprintf("night_%03d_%s", i, strings.TrimSuffix(filepath.Base(src), ".gz"))))
	}
	return dir
}

// peakRSSMiB reads the process's peak resident memory (VmHWM) on Linux;
// 0 elsewhere.
func peakRSSMiB() float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkBatch100 analyses 100 exports in one batch with as many jobs
// as GOMAXPROCS; docs/triage.md records it on 2 cores:
//
//	taskset -c 0,1 go test -run '^$' -bench Batch100 -cpu 2 -benchtime 5x ./triage/
func BenchmarkBatch100(b *testing.B) {
	const n = 100
	dir := benchNight(b, n)
	inputs := Expand([]string{dir})
	opt := Options{Analysis: noEstimate, Jobs: runtime.GOMAXPROCS(0)}
	var analysed, failed, syncs int
	for b.Loop() {
		analysed, failed, syncs = 0, 0, 0
		s := NewSummary()
		err := Batch(context.Background(), inputs, opt, func(r Result) error {
			s.Add(r)
			if r.Err != nil {
				failed++
				return nil
			}
			analysed++
			syncs += r.Doc.Totals.Syncs
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		s.Report(10)
	}
	if analysed+failed != n {
		b.Fatalf("%d analysed and %d failed of %d", analysed, failed, n)
	}
	b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "exports/s")
	b.ReportMetric(float64(analysed), "analysed")
	b.ReportMetric(float64(syncs), "syncs")
	b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
}
