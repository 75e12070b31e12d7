package cuda

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// TestPlanCorpus builds the plan of every third-party export of the
// shared corpus (whole trace; 2020 to 2025 exports, many tools): it must
// build or refuse with an error, and whatever it builds must be
// consistent.
func TestPlanCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "corpus", "*.sqlite"))
	if len(files) == 0 {
		t.Skip("no corpus at ../../shared/corpus")
	}
	built := 0
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ctx := context.Background()
			x, err := trace.Open(ctx, path)
			if err != nil {
				t.Skipf("not an export the reader takes: %v", err)
			}
			defer x.Close()
			tr, err := x.Load(ctx, trace.LoadOptions{})
			if err != nil {
				t.Skipf("no inventory: %v", err)
			}
			r := tr.Region
			tl, err := x.Timeline(ctx, trace.Interval{Start: r.Start, End: r.End + 1})
			if err != nil {
				t.Fatal(err)
			}
			p, err := BuildPlan(tl, tr, PlanOptions{})
			if err != nil {
				if errors.Is(err, ErrRegionTooLarge) || tr.Region.Duration <= 0 {
					return
				}
				t.Fatal(err)
			}
			built++
			checkIndices(t, p)
			all := make([]int, len(tr.Syncs))
			for i := range all {
				all[i] = i
			}
			q, err := BuildPlan(tl, tr, PlanOptions{Remove: [][]int{all}, ProfilerOverheadNs: 3_700})
			if err != nil {
				t.Fatal(err)
			}
			checkIndices(t, q)
			if q.Counts.Blocking > p.Counts.Blocking {
				t.Errorf("without every sync: %d blocking actions, %d with them", q.Counts.Blocking, p.Counts.Blocking)
			}
		})
	}
	if built == 0 {
		t.Error("no corpus export gave a plan")
	}
}
