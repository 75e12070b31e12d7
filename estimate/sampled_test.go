package estimate

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/internal/tracegen"
)

// Sampled estimates must agree with the whole-region replay within 10% of
// its saving or 0.05 percentage points of the region, whichever is larger
// (docs/estimator.md, "Large traces").
const (
	sampledRelTol = 0.10
	sampledAbsTol = 0.0005
)

// mediumExport replicates a real fixture copies times into a temporary
// export (internal/tracegen), as nsysgen makes the 1 GB benchmarks.
func mediumExport(t testing.TB, fixture string, copies int) string {
	t.Helper()
	if strings.HasSuffix(fixture, ".gz") { // tracegen reads a plain SQLite file
		fixture = fixturegz.Gunzip(t, fixture, t.TempDir())
	}
	out := filepath.Join(t.TempDir(), fmt.Sprintf("%s-x%d.sqlite", strings.TrimSuffix(filepath.Base(fixture), ".sqlite"), copies))
	if _, err := tracegen.Generate(context.Background(), tracegen.Options{Source: fixture, Output: out, Copies: copies}); err != nil {
		t.Fatalf("generating %s: %v", out, err)
	}
	return out
}

// TestSampledAgreesWithWholeRegion builds medium exports from real
// fixtures, lowers MaxEvents below their size so that Run samples them,
// and compares every estimate with the whole-region replay.
func TestSampledAgreesWithWholeRegion(t *testing.T) {
	if testing.Short() {
		t.Skip("generates exports of a few MB")
	}
	for _, tc := range []struct {
		name, fixture, nvtx string
		copies              int
		maxEvents           int64
	}{
		// Every kind of sync, one thread, 600 calls and ops a copy (the
		// 1 GB sync-heavy benchmark's source), in 200 ranges.
		{"syncs_lean measured", "../fixtures/syncs_lean.sqlite.gz", "measured", 200, 20_000},
		// Two threads with hand-offs, three sites a step, in 30 ranges.
		{"mlp_train measured", gtFixture("mlp_train"), "measured", 30, 30_000},
		// Two streams ordered by event waits, the whole trace.
		{"twostream_event whole", gtFixture("twostream_event"), "", 50, 40_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := loadFixture(t, mediumExport(t, tc.fixture, tc.copies), tc.nvtx)
			whole := f.run(t, Options{MaxEvents: math.MaxInt64})
			smp := f.run(t, Options{MaxEvents: tc.maxEvents})
			if whole.Sampled || whole.SampleWindows != 0 {
				t.Fatalf("whole region: sampled %v, %d windows", whole.Sampled, whole.SampleWindows)
			}
			if !smp.Sampled || smp.SampleWindows == 0 || int64(smp.Calls+smp.Ops) > 3*tc.maxEvents {
				t.Fatalf("sampled: %v, %d windows, %d calls and ops for MaxEvents %d", smp.Sampled, smp.SampleWindows, smp.Calls+smp.Ops, tc.maxEvents)
			}
			t.Logf("whole: %d calls and ops; sampled: %d windows, %d calls and ops", whole.Calls+whole.Ops, smp.SampleWindows, smp.Calls+smp.Ops)
			if math.Abs(smp.SelfCheckError) > 1e-6 {
				t.Errorf("self-check on the windows: %g", smp.SelfCheckError)
			}
			agree := func(what string, got, want float64) {
				t.Helper()
				t.Logf("%-16s whole %8.5f sampled %8.5f", what, want, got)
				if math.Abs(got-want) > math.Max(sampledRelTol*math.Abs(want), sampledAbsTol) {
					t.Errorf("%s: sampled %.5f, whole region %.5f", what, got, want)
				}
			}
			for i, s := range whole.Sites {
				if got := smp.Sites[i]; got.ID != s.ID || got.Syncs != s.Syncs || !got.Sampled {
					t.Errorf("site %s: sampled %+v, whole %+v", s.ID, got, s)
				}
				agree("site "+s.ID, smp.Sites[i].SavingsFraction, s.SavingsFraction)
			}
			agree("false dependency", smp.FalseDependency.SavingsFraction, whole.FalseDependency.SavingsFraction)
			agree("all syncs", smp.AllSyncs.SavingsFraction, whole.AllSyncs.SavingsFraction)
			if smp.AllSyncs.Syncs != whole.AllSyncs.Syncs || smp.FalseDependency.Syncs != whole.FalseDependency.Syncs {
				t.Errorf("syncs removed: sampled %d and %d, whole %d and %d", smp.FalseDependency.Syncs, smp.AllSyncs.Syncs, whole.FalseDependency.Syncs, whole.AllSyncs.Syncs)
			}
		})
	}
}

// TestSampledSiteWindows: a site whose occurrences the time windows miss
// is estimated from windows read around a few of its occurrences.
func TestSampledSiteWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("generates an export of a few MB")
	}
	ctx := context.Background()
	f := loadFixture(t, mediumExport(t, "../fixtures/syncs_lean.sqlite.gz", 100), "")
	whole := f.run(t, Options{MaxEvents: math.MaxInt64})
	// One time window of about 20 syncs: sites that occur once in a copy
	// of 43 have no occurrence in it.
	opt := Options{MaxEvents: 300}
	smp := f.run(t, opt)
	events, _, err := regionEvents(ctx, f.x, f.tr)
	if err != nil {
		t.Fatal(err)
	}
	siteIdx := make([][]int, len(f.sites))
	for i := range f.sites {
		siteIdx[i] = f.sites[i].Syncs
	}
	ws, err := sampleWindows(ctx, f.x, f.tr, siteIdx, events, opt.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	own := map[int]int{}
	for _, w := range ws {
		if w.site >= 0 {
			own[w.site]++
		}
	}
	if len(own) == 0 || len(ws) != smp.SampleWindows {
		t.Fatalf("windows %+v: none for a site of its own, or not the %d the estimate read", ws, smp.SampleWindows)
	}
	for i, n := range own {
		s, w := smp.Sites[i], whole.Sites[i]
		t.Logf("site %-4s %d windows of its own: whole %8.5f sampled %8.5f", s.ID, n, w.SavingsFraction, s.SavingsFraction)
		if s.Windows != n || !s.Sampled {
			t.Errorf("site %s: %d windows, sampled %v; want its %d", s.ID, s.Windows, s.Sampled, n)
		}
		if math.Abs(s.SavingsFraction-w.SavingsFraction) > math.Max(0.5*math.Abs(w.SavingsFraction), sampledAbsTol) {
			t.Errorf("site %s: sampled %.5f, whole %.5f", s.ID, s.SavingsFraction, w.SavingsFraction)
		}
	}
}

// TestSmallRegionStaysExact: a region under MaxEvents is replayed whole,
// with the same result as before sampling existed (the ground-truth tables
// check the numbers).
func TestSmallRegionStaysExact(t *testing.T) {
	f := loadFixture(t, gtFixture("mlp_train"), "measured")
	res := f.run(t, Options{})
	if res.Sampled || res.SampleWindows != 0 || res.SampledNs != 0 {
		t.Errorf("small region sampled: %v, %d windows, %d ns", res.Sampled, res.SampleWindows, res.SampledNs)
	}
	for _, s := range res.Sites {
		if s.Sampled || s.Windows != 0 {
			t.Errorf("site %s: %+v", s.ID, s)
		}
	}
}

// BenchmarkRunSampled runs the whole estimate of a medium export
// (syncs_lean × 1,000: 494,000 calls, 103,000 ops, 43,000 syncs in 14
// sites) sampled under the default bound, against its whole-region
// replay.
func BenchmarkRunSampled(b *testing.B) {
	f := loadFixture(b, mediumExport(b, "../fixtures/syncs_lean.sqlite.gz", 1000), "")
	for _, bc := range []struct {
		name string
		opt  Options
	}{{"sampled", Options{MaxEvents: 100_000}}, {"whole", Options{MaxEvents: math.MaxInt64}}} {
		b.Run(bc.name, func(b *testing.B) {
			var res *Result
			for b.Loop() {
				res = f.run(b, bc.opt)
			}
			b.ReportMetric(float64(res.Calls+res.Ops), "events")
		})
	}
}
