package classify

import (
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// BenchmarkVerdicts classifies the real backtrace fixture's syncs repeated
// 1000 times (72,000 syncs with native and Python frames, 1,000 threads):
// go test ./classify/ -run '^$' -bench Verdicts -benchmem
func BenchmarkVerdicts(b *testing.B) {
	tr := benchTrace(b, "../fixtures/patterns_backtrace.sqlite.gz")
	const copies = 1000
	big := *tr
	big.Syncs = make([]trace.Sync, 0, copies*len(tr.Syncs))
	for c := 0; c < copies; c++ {
		for _, s := range tr.Syncs {
			s.GlobalTid += trace.GlobalTid(c) // one thread per copy keeps each copy's order
			big.Syncs = append(big.Syncs, s)
		}
	}
	opt := Options{SourceRoot: ".."}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v := opt.Verdicts(&big); len(v) != len(big.Syncs) {
			b.Fatal("wrong count")
		}
	}
	b.ReportMetric(float64(len(big.Syncs))*float64(b.N)/b.Elapsed().Seconds(), "syncs/s")
}

// BenchmarkProgramReads measures the program matcher's one-time cost per
// analysis (leanmatch.go): reading, parsing and listing the places of
// fixtures/programs/syncs.py, the script a lean capture's command line
// names.
func BenchmarkProgramReads(b *testing.B) {
	b.Chdir("..")
	for b.Loop() {
		l := newLeanReads(newSourceReader(Options{FindSources: true}, ""), []string{"python3", "/elsewhere/fixtures/programs/syncs.py"})
		l.load()
		if len(l.places) == 0 {
			b.Fatalf("no places read (%s)", l.why)
		}
		l.close()
	}
}

// BenchmarkProgramAcrossFiles classifies a lean export of a program of two
// files (a script whose class lives in its own module, held-out round 17),
// its program found without flags: the program matcher's reading, its
// places and every attribute read across the files, once per analysis:
// go test ./classify/ -run '^$' -bench AcrossFiles -benchmem
func BenchmarkProgramAcrossFiles(b *testing.B) {
	b.Chdir("..")
	tr := benchTrace(b, "fixtures/labelled/ps17_metric_history_csv.lean.sqlite.gz")
	opt := Options{FindSources: true}
	for b.Loop() {
		if v := opt.Verdicts(tr); len(v) != len(tr.Syncs) {
			b.Fatal("wrong count")
		}
	}
}

// benchTrace loads the export at path.
func benchTrace(b *testing.B, path string) *trace.Trace {
	b.Helper()
	x, err := trace.Open(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	tr, err := x.Load(b.Context(), trace.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return tr
}
