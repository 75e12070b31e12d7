package classify

import (
	"path/filepath"
	"testing"
)

// TestBasis: on the real fixtures, a verdict's basis is the kind of
// evidence its capture holds — the call pattern and the GPU ops around a
// read on lean traces (every false or true verdict there is only likely), frames and lines
// with backtraces, aten ranges with autograd NVTX — and a site is decided
// only when all its syncs are.
func TestBasis(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		opt     Options
		allowed map[Basis]bool // the bases its known verdicts may have
		want    Basis          // a basis at least one verdict has
	}{
		{"syncs_lean", Options{}, map[Basis]bool{BasisPattern: true, BasisKernels: true}, BasisKernels},
		{"patterns_lean", Options{}, map[Basis]bool{BasisPattern: true, BasisKernels: true}, BasisKernels},
		{"multiproc_lean", Options{}, map[Basis]bool{BasisPattern: true, BasisKernels: true}, BasisPattern},
		{"syncs_backtrace", Options{SourceRoot: ".."}, map[Basis]bool{BasisSource: true, BasisBacktrace: true}, BasisSource},
		{"patterns_backtrace", Options{SourceRoot: ".."}, map[Basis]bool{BasisSource: true, BasisBacktrace: true}, BasisSource},
		{"syncs_backtrace", Options{}, map[Basis]bool{BasisBacktrace: true}, BasisBacktrace},
		{"patterns_autograd", Options{}, map[Basis]bool{BasisNVTX: true, BasisBacktrace: true, BasisKernels: true, BasisPattern: true}, BasisNVTX},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			tr := load(t, filepath.Join(fixturesDir, tc.fixture+".sqlite.gz"))
			seen := map[Basis]int{}
			for i, v := range tc.opt.Verdicts(tr) {
				switch {
				case v.Rule == "" && v.Basis != BasisNone:
					t.Errorf("sync e%d: no rule matched, basis %q", i+1, v.Basis)
				case v.Rule != "" && !tc.allowed[v.Basis]:
					t.Errorf("sync e%d (%s): basis %q", i+1, v.Rule, v.Basis)
				}
				seen[v.Basis]++
			}
			if seen[tc.want] == 0 {
				t.Errorf("no verdict on basis %q: %v", tc.want, seen)
			}
			for _, s := range tc.opt.Sites(tr) {
				if s.Likely() == s.Decided() && s.Dependency != DepUnknown {
					t.Errorf("site %s: likely %v and decided %v", s.ID, s.Likely(), s.Decided())
				}
				if s.Likely() && s.Basis != BasisPattern && s.Basis != BasisKernels {
					t.Errorf("site %s: likely on basis %q", s.ID, s.Basis)
				}
			}
		})
	}
}

// TestSiteBasisIsTheWeakest: a site whose syncs rest on different bases
// takes the weakest, so that one pattern-only sync makes it likely.
func TestSiteBasisIsTheWeakest(t *testing.T) {
	table := []Verdict{
		{Dependency: DepFalse, Category: CatExplicitSync, Confidence: 0.8, Basis: BasisBacktrace},
		{Dependency: DepFalse, Category: CatExplicitSync, Confidence: 0.6, Basis: BasisPattern},
		{Dependency: DepFalse, Category: CatExplicitSync, Confidence: 0.9, Basis: BasisSource},
	}
	for _, tc := range []struct {
		tallies []tally
		want    Basis
		likely  bool
	}{
		{[]tally{{0, 2}, {2, 1}}, BasisBacktrace, false},
		{[]tally{{0, 2}, {1, 1}}, BasisPattern, true},
		{[]tally{{2, 1}}, BasisSource, false},
		{[]tally{{1, 3}}, BasisPattern, true},
	} {
		var s Site
		fillVerdict(&s, tc.tallies, table)
		if s.Basis != tc.want || s.Likely() != tc.likely || s.Decided() == tc.likely {
			t.Errorf("tallies %v: basis %q likely %v decided %v, want %q likely %v", tc.tallies, s.Basis, s.Likely(), s.Decided(), tc.want, tc.likely)
		}
	}
}
