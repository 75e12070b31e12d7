package estimate

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
)

// estimateFile classifies and estimates a whole export; ok is false for
// one that is not a CUDA trace or that the estimator cannot estimate.
func estimateFile(t *testing.T, path string) (*trace.Trace, []classify.Site, *Result, bool) {
	t.Helper()
	ctx := context.Background()
	x, err := trace.Open(ctx, path)
	if err != nil {
		return nil, nil, nil, false
	}
	defer x.Close()
	tr, err := x.Load(ctx, trace.LoadOptions{})
	if err != nil || len(tr.Syncs) == 0 {
		return nil, nil, nil, false
	}
	sites := classify.Sites(tr)
	if Unestimable(tr) != "" {
		return tr, sites, nil, true
	}
	res, err := Run(ctx, x, tr, sites, Options{})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tr, sites, res, true
}

// TestNeededAndPhaseSitesNeverRemovable: on every fixture and corpus
// export, no site of set-up, tear-down or the profiler saves anything or
// is in a scenario, and no site that copies data the host uses saves
// more than its copy-overlap bound or is replayed removed in a scenario.
func TestNeededAndPhaseSitesNeverRemovable(t *testing.T) {
	files, _ := filepath.Glob("../fixtures/*.sqlite*")
	corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	phased, neededN := 0, 0
	for _, path := range append(files, corpus...) {
		_, sites, res, ok := estimateFile(t, path)
		if !ok || res == nil {
			continue
		}
		name := filepath.Base(path)
		for i, s := range sites {
			est := res.Sites[i]
			switch {
			case !s.Phase.Counted():
				phased++
				if est.SavingsNs != 0 || est.Phase != string(s.Phase) || est.UncountedSavingsNs != est.DeleteSavingsNs {
					t.Errorf("%s %s (%s): saving %d ns, phase %q, uncounted %d of %d", name, s.ID, s.Phase, est.SavingsNs, est.Phase, est.UncountedSavingsNs, est.DeleteSavingsNs)
				}
				for _, sc := range []Scenario{res.FalseDependency, res.AllSyncs} {
					if slices.Contains(sc.SiteIDs, s.ID) || !slices.Contains(sc.ExcludedSiteIDs, s.ID) {
						t.Errorf("%s %s (%s): in scenario %v, excluded %v", name, s.ID, s.Phase, sc.SiteIDs, sc.ExcludedSiteIDs)
					}
				}
			case s.NeededCopyBytes > 0:
				neededN++
				if est.SavingsNs > est.CopyOverlapBoundNs || est.SavingsNs > est.DeleteSavingsNs || est.Bound == "" {
					t.Errorf("%s %s: saving %d ns, bound %d ns, delete %d ns (%q)", name, s.ID, est.SavingsNs, est.CopyOverlapBoundNs, est.DeleteSavingsNs, est.Bound)
				}
				if slices.Contains(res.AllSyncs.SiteIDs, s.ID) != slices.Contains(res.AllSyncs.BoundedSiteIDs, s.ID) {
					t.Errorf("%s %s: in the ceiling %v but not bounded %v", name, s.ID, res.AllSyncs.SiteIDs, res.AllSyncs.BoundedSiteIDs)
				}
			}
		}
	}
	if phased == 0 || neededN == 0 {
		t.Errorf("%d set-up/tear-down/profiler sites and %d needed-copy sites in the fixtures and corpus: the checks checked nothing", phased, neededN)
	}
}

// TestNamedExports: the exports of issue 16.
func TestNamedExports(t *testing.T) {
	t.Run("openmp-offload-heat", func(t *testing.T) {
		_, sites, res, ok := estimateFile(t, filepath.Join(corpusDir, "openmp-offload-heat_t4_nsys2023.3.sqlite"))
		if !ok {
			t.Skip("no shared corpus")
		}
		// 512 MB result copies: before, 7.28 s and 5.57 s "removable" and
		// 47.1% overall.
		for i, s := range sites {
			if s.NeededCopyBytes == 512_000_000 && res.Sites[i].SavingsNs > s.BlockedNs/100 {
				t.Errorf("%s: a 512 MB result copy saves %d ns of %d blocked", s.ID, res.Sites[i].SavingsNs, s.BlockedNs)
			}
		}
		if res.AllSyncs.SavingsFraction > 0.01 {
			t.Errorf("overall %.3f, want under 1%%: the rest is copies the program needs", res.AllSyncs.SavingsFraction)
		}
	})
	t.Run("wsl2-cupy-nokernels", func(t *testing.T) {
		tr, _, res, ok := estimateFile(t, filepath.Join(corpusDir, "wsl2-cupy-quda-lqcd-nokernels_rtx4060laptop_nsys2023.3.sqlite"))
		if !ok {
			t.Skip("no shared corpus")
		}
		if res != nil || Unestimable(tr) == "" || tr.BlockedNs() == 0 {
			t.Errorf("no GPU activity: estimated %v, reason %q, blocked %d ns", res != nil, Unestimable(tr), tr.BlockedNs())
		}
	})
	t.Run("cuda-gpudb-one-off-load", func(t *testing.T) {
		_, sites, res, ok := estimateFile(t, filepath.Join(corpusDir, "cuda-gpudb-hashjoin-mordred_quadro-rtx6000_nsys2021.2.sqlite"))
		if !ok {
			t.Skip("no shared corpus")
		}
		// 128 pageable copies of 4 MB load the column segments once, before
		// the first kernel; before, 127.88 ms of the 128.23 ms removable.
		loads := 0
		for _, s := range sites {
			if s.Phase == classify.PhaseSetup && len(s.Syncs) == 128 {
				loads++
			}
		}
		if loads != 1 {
			t.Errorf("%d set-up sites of the 128 segment loads, want 1", loads)
		}
		if res.FalseDependency.SavingsNs > 1_000_000 {
			t.Errorf("removable %d ns: the one-off load counts", res.FalseDependency.SavingsNs)
		}
	})
	t.Run("syncs_autograd", func(t *testing.T) {
		_, sites, res, _ := estimateFile(t, "../fixtures/syncs_autograd.sqlite.gz")
		// The truth file: the emit_nvtx synchronize (correlation id 131)
		// holds context creation, ~136 ms.
		for i, s := range sites {
			if s.BlockedNs > 100_000_000 && (s.Phase != classify.PhaseProfiler || res.Sites[i].SavingsNs != 0) {
				t.Errorf("%s: blocked %d ns, phase %q, saving %d ns", s.ID, s.BlockedNs, s.Phase, res.Sites[i].SavingsNs)
			}
		}
		if res.FalseDependency.SavingsFraction > 0.05 {
			t.Errorf("removable %.3f: the profiler's own synchronize counts", res.FalseDependency.SavingsFraction)
		}
	})
	t.Run("jax-alpa-nokernels", func(t *testing.T) {
		_, sites, res, ok := estimateFile(t, filepath.Join(corpusDir, "jax-alpa-report1-nokernels_reexport2025.3.sqlite"))
		if !ok {
			t.Skip("no shared corpus")
		}
		if len(sites) > 10 {
			t.Errorf("%d sites, want the one-per-stream syncs folded", len(sites))
		}
		for _, s := range sites {
			if s.Phase.Counted() {
				t.Errorf("%s %v in %v: phase %q, want NCCL set-up or tear-down", s.ID, s.APIs, s.NVTX, s.Phase)
			}
			if slices.Equal(s.APIs, []string{"cudaStreamSynchronize"}) && slices.Equal(s.NVTX, []string{"ncclCommInitRank"}) && len(s.Syncs) < 66 {
				t.Errorf("%s: %d syncs, want the ncclCommInitRank syncs of every stream in one site", s.ID, len(s.Syncs))
			}
		}
		if res.FalseDependency.SavingsNs != 0 || res.AllSyncs.SavingsNs != 0 {
			t.Errorf("removable %d ns, overall %d ns: NCCL set-up and tear-down count", res.FalseDependency.SavingsNs, res.AllSyncs.SavingsNs)
		}
	})
}
