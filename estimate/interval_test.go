package estimate

import (
	"path/filepath"
	"testing"
)

// intervalFixtures are real exports whose sites repeat (training loop,
// loop of reads, two-stream loop, needed copies: 30 steps each) or do not
// (the sync patterns: 1 to 6 occurrences a site).
var intervalFixtures = []struct{ name, nvtx string }{
	{"gt_mlp_train.sqlite.gz", "measured"},
	{"gt_item_tiny.sqlite.gz", "measured"},
	{"gt_twostream_event.sqlite.gz", "measured"},
	{"gt_cpu_copy.sqlite.gz", "measured"},
	{"gt_item_many.sqlite.gz", "measured"},
	{"gt_devsync_small.sqlite.gz", "measured"},
	{"gt_gemm_medium_item.sqlite.gz", "measured"},
	{"gt_graph_item.sqlite.gz", "measured"},
	{"gt_twostream_gemm.sqlite.gz", "measured"},
	{"syncs_lean.sqlite.gz", ""},
	{"syncs_backtrace.sqlite.gz", "measured"},
}

// TestSiteIntervals: on real fixtures, replayed whole, in windows and (the
// training loop) from a sample of the region, each
// site's interval contains its saving and rests on at least two windows;
// a site that repeats over two windows or more and is not held to its
// copy bound has one, wider than a point (its iterations vary); a site
// whose occurrences fit one window has none.
func TestSiteIntervals(t *testing.T) {
	for _, fx := range intervalFixtures {
		f := loadFixture(t, filepath.Join("../fixtures", fx.name), fx.nvtx)
		for _, mode := range []struct {
			name string
			opt  Options
		}{{"whole", Options{}}, {"windowed", Options{MaxFullWork: 1}}, {"sampled", Options{MaxEvents: 3000}}} {
			t.Run(fx.name+"/"+mode.name, func(t *testing.T) {
				res := f.run(t, mode.opt)
				if mode.name == "sampled" && fx.name == "gt_mlp_train.sqlite.gz" && res.SampleWindows == 0 {
					t.Fatal("not sampled")
				}
				withInterval := 0
				for _, s := range res.Sites {
					iv := s.Interval
					repeats := s.Syncs > 2*defaultChunk && s.Phase == "" && s.Bound != BoundCopyOverlap
					switch {
					case s.Syncs <= defaultChunk && iv != nil:
						t.Errorf("%s: %d syncs, one window, but interval %+v", s.ID, s.Syncs, *iv)
					case repeats && iv == nil:
						t.Errorf("%s: %d syncs, saving %d, no interval", s.ID, s.Syncs, s.SavingsNs)
					case repeats && iv.HighNs <= iv.LowNs:
						t.Errorf("%s: %d syncs, degenerate interval %+v", s.ID, s.Syncs, *iv)
					}
					if iv == nil {
						continue
					}
					withInterval++
					t.Logf("%s %-3s %3d syncs: %d ns, interval %d to %d ns (%+.1f%% to %+.1f%%), %d windows", fx.name, s.ID, s.Syncs,
						s.SavingsNs, iv.LowNs, iv.HighNs, pct(iv.LowNs-s.SavingsNs, s.SavingsNs), pct(iv.HighNs-s.SavingsNs, s.SavingsNs), iv.Windows)
					if iv.LowNs > s.SavingsNs || iv.HighNs < s.SavingsNs {
						t.Errorf("%s: interval [%d, %d] misses the saving %d", s.ID, iv.LowNs, iv.HighNs, s.SavingsNs)
					}
					if iv.Windows < 2 {
						t.Errorf("%s: interval rests on %d windows", s.ID, iv.Windows)
					}
				}
				t.Logf("%d of %d sites with an interval; %d sample windows", withInterval, len(res.Sites), res.SampleWindows)
				for _, sc := range []struct {
					name string
					s    Scenario
				}{{"false set", res.FalseDependency}, {"all syncs", res.AllSyncs}} {
					iv := sc.s.Interval
					switch {
					case iv == nil && sc.s.Syncs > 2*defaultChunk && len(sc.s.BoundedSiteIDs) == 0:
						t.Errorf("%s: %d syncs, no interval", sc.name, sc.s.Syncs)
					case iv == nil:
					case iv.LowNs > sc.s.SavingsNs || iv.HighNs < sc.s.SavingsNs || iv.Windows < 2:
						t.Errorf("%s: interval %+v about %d", sc.name, *iv, sc.s.SavingsNs)
					default:
						t.Logf("%s %s: %d syncs, %d ns, interval %+.1f%% to %+.1f%%, %d windows", fx.name, sc.name, sc.s.Syncs, sc.s.SavingsNs,
							pct(iv.LowNs-sc.s.SavingsNs, sc.s.SavingsNs), pct(iv.HighNs-sc.s.SavingsNs, sc.s.SavingsNs), iv.Windows)
					}
				}
			})
		}
	}
}

// pct is part as a percentage of whole.
func pct(part, whole int64) float64 { return 100 * float64(part) / float64(max(whole, 1)) }

// defaultChunk is Options.ChunkSize's default.
const defaultChunk = 8

// TestSiteIntervalRules: the interval of chunk savings, on the rules that
// do not need a replay.
func TestSiteIntervalRules(t *testing.T) {
	varied := []chunkSaving{{800, 8}, {960, 8}, {720, 8}, {1200, 6}}
	same := []chunkSaving{{800, 8}, {800, 8}, {800, 8}}
	tests := []struct {
		name      string
		samples   []chunkSaving
		all       int
		est       SiteEstimate
		want      bool // an interval
		point     bool // LowNs == HighNs
		highAtMax int64
	}{
		{"varied", varied, 30, SiteEstimate{SavingsNs: 3300}, true, false, 0},
		{"identical windows", same, 24, SiteEstimate{SavingsNs: 2400}, true, true, 0},
		{"one window", varied[:1], 8, SiteEstimate{SavingsNs: 800}, false, false, 0},
		{"no occurrences", varied, 0, SiteEstimate{}, false, false, 0},
		{"phase site", varied, 30, SiteEstimate{Phase: "setup", UncountedSavingsNs: 3300}, false, false, 0},
		{"held to its copy bound", varied, 30, SiteEstimate{SavingsNs: 1000, Bound: BoundCopyOverlap, CopyOverlapBoundNs: 1000}, false, false, 0},
		{"deletion under the copy bound", varied, 30, SiteEstimate{SavingsNs: 3300, Bound: BoundDelete, CopyOverlapBoundNs: 3350}, true, false, 3350},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			iv := siteInterval(tc.samples, tc.all, &tc.est)
			if (iv != nil) != tc.want {
				t.Fatalf("interval %+v, want one: %v", iv, tc.want)
			}
			if iv == nil {
				return
			}
			if iv.LowNs > tc.est.SavingsNs || iv.HighNs < tc.est.SavingsNs {
				t.Errorf("interval [%d, %d] misses the saving %d", iv.LowNs, iv.HighNs, tc.est.SavingsNs)
			}
			if got := iv.LowNs == iv.HighNs; got != tc.point {
				t.Errorf("interval [%d, %d]: a point = %v, want %v", iv.LowNs, iv.HighNs, got, tc.point)
			}
			if tc.highAtMax > 0 && iv.HighNs > tc.highAtMax {
				t.Errorf("high %d above the copy bound %d", iv.HighNs, tc.highAtMax)
			}
			if iv.Windows != len(tc.samples) {
				t.Errorf("rests on %d windows, want %d", iv.Windows, len(tc.samples))
			}
			again := siteInterval(tc.samples, tc.all, &tc.est)
			if *again != *iv {
				t.Errorf("not deterministic: %+v then %+v", *iv, *again)
			}
		})
	}
}
