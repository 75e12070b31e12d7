package cuda

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
)

// TestReplayTotalLeavesOutPhaseAndNeededCopies checks, without a GPU, on
// the exports issue 16 names, that the replay's removable total neither
// removes nor counts a site of set-up, tear-down or the profiler, and
// counts a site that copies needed data at most at the simulator's
// copy-overlap bound: the plan the total replays removes exactly the
// syncs of the sites that count whole, and the total summed from
// measured savings adds nothing for the others beyond their bound.
func TestReplayTotalLeavesOutPhaseAndNeededCopies(t *testing.T) {
	corpus := filepath.Join("..", "..", "shared", "corpus")
	for _, tc := range []struct {
		path              string
		excluded, bounded []string
	}{
		{filepath.Join("..", "fixtures", "syncs_autograd.sqlite.gz"), []string{"s1"}, []string{"s7", "s14"}},
		{filepath.Join(corpus, "openmp-offload-heat_t4_nsys2023.3.sqlite"), nil, []string{"s2", "s3"}},
		{filepath.Join(corpus, "mpi-cuda-saxpy_perlmutter-a100_nsys2022.2.sqlite"), []string{"s4"}, []string{"s1"}},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			ctx := context.Background()
			x, err := trace.Open(ctx, tc.path)
			if err != nil {
				t.Skipf("export not here: %v", err)
			}
			defer x.Close()
			tr, err := x.Load(ctx, trace.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sites := classify.Sites(tr)
			groups := GroupsOf(sites)
			if err := copyBounds(ctx, x, tr, sites, groups); err != nil {
				t.Fatal(err)
			}
			// Every site measured as saving 1 ms, plus its index.
			res := make([]SiteReplay, len(groups))
			wholeSyncs := map[int]bool{}
			for i, g := range groups {
				res[i] = SiteReplay{ID: g.ID, Syncs: len(g.Syncs), SavedNs: 1_000_000 + int64(i)}
				count(g, &res[i])
				if g.Counting == classify.CountWhole {
					for _, s := range g.Syncs {
						wholeSyncs[s] = true
					}
				}
			}
			const jointNs = 5_000_000
			tot := total(groups, res, jointNs, tr.Region.Duration)
			if !slices.Equal(tot.ExcludedSiteIDs, tc.excluded) || !slices.Equal(tot.BoundedSiteIDs, tc.bounded) {
				t.Fatalf("excluded %v, bounded %v; want %v and %v", tot.ExcludedSiteIDs, tot.BoundedSiteIDs, tc.excluded, tc.bounded)
			}
			want := int64(jointNs)
			if len(tot.SiteIDs) == 1 {
				want = res[slices.IndexFunc(groups, func(g Group) bool { return g.ID == tot.SiteIDs[0] })].SavedNs
			}
			for i, g := range groups {
				switch {
				case slices.Contains(tc.excluded, g.ID):
					if res[i].CountedNs != 0 || res[i].Phase == "" || slices.Contains(tot.SiteIDs, g.ID) {
						t.Errorf("%s (phase %q) counts %d ns in a total of %v", g.ID, res[i].Phase, res[i].CountedNs, tot.SiteIDs)
					}
				case slices.Contains(tc.bounded, g.ID):
					if g.CopyBoundNs == nil || res[i].CountedNs > *g.CopyBoundNs || res[i].Bound == "" || slices.Contains(tot.SiteIDs, g.ID) {
						t.Errorf("%s copies %d needed bytes: counts %d ns (bound %v, %q) in a total of %v", g.ID, sites[i].NeededCopyBytes, res[i].CountedNs, g.CopyBoundNs, res[i].Bound, tot.SiteIDs)
					}
					// On these exports nothing the thread launches after
					// the copy could overlap it: the simulator's bound,
					// and so what the site counts, is 0 of its 1 ms.
					if res[i].CountedNs != 0 || res[i].Bound != BoundCopyOverlap {
						t.Errorf("%s counts %d ns (%s), want 0 (copy-overlap)", g.ID, res[i].CountedNs, res[i].Bound)
					}
					want += res[i].CountedNs
				default:
					if res[i].CountedNs != res[i].SavedNs {
						t.Errorf("%s counts %d ns of %d", g.ID, res[i].CountedNs, res[i].SavedNs)
					}
				}
			}
			if tot.SavedNs != want {
				t.Errorf("total %d ns, want %d", tot.SavedNs, want)
			}
			// The plan the total replays removes the whole sites' syncs
			// and nothing else.
			rm := jointRemove(groups)
			if rm == nil {
				if len(tot.SiteIDs) > 1 {
					t.Fatalf("no joint plan for %v", tot.SiteIDs)
				}
				return
			}
			r := tr.Region
			tl, err := x.Timeline(ctx, trace.Interval{Start: r.Start, End: r.End + min(r.Duration, 2_000_000_000)})
			if err != nil {
				t.Fatal(err)
			}
			p, err := BuildPlan(tl, tr, PlanOptions{Remove: rm})
			if err != nil {
				t.Fatal(err)
			}
			if p.Removed != len(wholeSyncs) {
				t.Errorf("the total's plan removes %d syncs, the whole sites hold %d", p.Removed, len(wholeSyncs))
			}
		})
	}
}
