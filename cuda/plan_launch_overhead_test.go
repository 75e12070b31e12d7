package cuda

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/internal/fixturegz"
)

// TestPlanLaunchOverheadIsTheSimulators: the replay reads the profiler's
// overhead off the region's launches (Plan.LaunchOverhead) as the
// simulator does with LaunchProfilerOverhead, to the nanosecond and from the same
// launches, on real captures: a host-bound labelled program whose
// launches were recorded long, a ground-truth loop, and a region of graph
// launches, which gives none.
func TestPlanLaunchOverheadIsTheSimulators(t *testing.T) {
	for _, tc := range []struct {
		name, gz string
		ok       bool
	}{
		{"d2h_numpy_epoch.lean", filepath.Join("..", "fixtures", "labelled", "savings", "d2h_numpy_epoch.lean.sqlite.gz"), true},
		{"gt_mlp_train", filepath.Join("..", "fixtures", "gt_mlp_train.sqlite.gz"), true},
		{"gt_graph_item", filepath.Join("..", "fixtures", "gt_graph_item.sqlite.gz"), false},
	} {
		f := loadFixtureFile(t, fixturegz.Gunzip(t, tc.gz, t.TempDir()), tc.name, "measured")
		p, err := BuildPlan(f.tl, f.t, PlanOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		lo := p.LaunchOverhead
		if lo.Ok != tc.ok {
			t.Errorf("%s: launches read %v (%d launches), want %v", tc.name, lo.Ok, lo.Launches, tc.ok)
		}
		res, err := estimate.FromTimeline(context.Background(), f.tl, f.t, nil, estimate.Options{LaunchProfilerOverhead: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		c := res.Constants
		if !tc.ok {
			if src := c.Sources["profiler_overhead_ns"]; src != "default" {
				t.Errorf("%s: the simulator's overhead from %q, want the default", tc.name, src)
			}
			continue
		}
		if c.ProfilerOverheadNs != lo.Ns || c.Sources["profiler_overhead_ns"] != lo.Source() {
			t.Errorf("%s: simulator %d ns from %q, replay %d ns from %q", tc.name, c.ProfilerOverheadNs,
				c.Sources["profiler_overhead_ns"], lo.Ns, lo.Source())
		}
	}
}
