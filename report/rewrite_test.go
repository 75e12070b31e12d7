package report

import (
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/program"
)

// TestRewriteAssumed: the rewrite each ground-truth site's saving models,
// as the JSON names it and the text says it. Each fixture's truth file
// says what its sync-free variant measured (fixtures/gt_*.truth.json).
func TestRewriteAssumed(t *testing.T) {
	for _, tc := range []struct {
		fixture, kind string
		words         []string
	}{
		{"gt_h2d_large.sqlite.gz", RewritePinnedCopy, []string{"pinned memory", "non_blocking=True", "GB/s"}},
		{"gt_h2d_mixed.sqlite.gz", RewritePinnedCopy, []string{"trace (n="}}, // the trace's own pinned copies give the speed
		{"gt_unique_scatter.sqlite.gz", RewriteFixedShape, []string{"torch.where", "passes"}},
		{"gt_nonzero_where.sqlite.gz", RewriteFixedShape, []string{"fixed-shape op"}},
		{"gt_twostream_event.sqlite.gz", RewriteGPUOrdering, []string{"wait_stream / wait_event"}},
		{"gt_item_tiny.sqlite.gz", RewriteKeepOnGPU, []string{"kept on the GPU"}},
		{"gt_devsync_small.sqlite.gz", RewriteWaitRemoved, []string{"the wait deleted"}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			a := estimated(t, tc.fixture, false)
			found := false
			for i := range a.Sites {
				s := &a.Sites[i]
				if !strings.HasPrefix(strings.Join(s.NVTX, ">"), "measured>sync:") {
					continue
				}
				rw, ok := a.RewriteAssumed(s)
				if !ok {
					t.Fatalf("site %s (%s): no rewrite", s.ID, s.Category)
				}
				found = true
				if rw.Kind != tc.kind {
					t.Errorf("site %s (%s): rewrite %q, want %q (%s)", s.ID, s.Category, rw.Kind, tc.kind, rw.Assumes)
				}
				for _, w := range tc.words {
					if !strings.Contains(rw.Assumes, w) {
						t.Errorf("site %s: %q does not say %q", s.ID, rw.Assumes, w)
					}
				}
			}
			if !found {
				t.Fatal("no site in measured > sync:…")
			}
			doc := a.BuildDocument()
			for _, sj := range doc.Sites {
				if strings.HasPrefix(strings.Join(sj.NVTX, ">"), "measured>sync:") && (sj.Rewrite == nil || sj.Rewrite.Kind != tc.kind) {
					t.Errorf("JSON site %s: rewrite %+v, want kind %q", sj.ID, sj.Rewrite, tc.kind)
				}
			}
		})
	}
}

// TestRewriteWordsFollowTheProgram: outside PyTorch the rewrite names
// CUDA's calls.
func TestRewriteWordsFollowTheProgram(t *testing.T) {
	a := estimated(t, "gt_h2d_large.sqlite.gz", false)
	a.Program = program.Program{Framework: program.CUDA}
	for i := range a.Sites {
		if rw, ok := a.RewriteAssumed(&a.Sites[i]); ok && rw.Kind == RewritePinnedCopy {
			if strings.Contains(rw.Assumes, "non_blocking") || !strings.Contains(rw.Assumes, "cudaHostAlloc") {
				t.Errorf("CUDA program: %q", rw.Assumes)
			}
			return
		}
	}
	t.Fatal("no pinned rewrite")
}
