package cuda

import (
	"reflect"
	"testing"

	"github.com/nsyssync/nsyssync/whatif"
)

// planGap sums the host time before every action of the plan.
func planGap(p *Plan) int64 {
	var gap int64
	for _, iv := range p.Intervals {
		for _, tp := range iv.Threads {
			for _, a := range tp.Actions {
				gap += a.Gap
			}
		}
	}
	return gap
}

// TestPlanProfilerOverheadsPerKind: the replay's per-kind profiler
// overhead (PlanOptions.ProfilerOverheads, whatif.OverheadKindOf) is the
// flat one when every kind has the same value, none when all are zero,
// and in between when only launches have one.
func TestPlanProfilerOverheadsPerKind(t *testing.T) {
	for _, name := range []string{"gt_item_tiny", "gt_mlp_train", "gt_twostream_event"} {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, name, "measured")
			build := func(opt PlanOptions) *Plan {
				t.Helper()
				p, err := BuildPlan(f.tl, f.t, opt)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			flat3700, zero := whatif.Flat(3_700), whatif.Overheads{}
			launchOnly := whatif.Overheads{whatif.OverheadLaunch: 3_700}
			base, flat := build(PlanOptions{}), build(PlanOptions{ProfilerOverheadNs: 3_700})
			if got := build(PlanOptions{ProfilerOverheads: &flat3700}); !reflect.DeepEqual(got, flat) {
				t.Errorf("per kind, all 3.7 µs: the plan differs from the flat 3.7 µs one")
			}
			if got := build(PlanOptions{ProfilerOverheadNs: 3_700, ProfilerOverheads: &zero}); !reflect.DeepEqual(got, base) {
				t.Errorf("per kind, all zero: the plan differs from the recording's")
			}
			b, l, fl := planGap(base), planGap(build(PlanOptions{ProfilerOverheads: &launchOnly})), planGap(flat)
			if !(fl < l && l < b) {
				t.Errorf("host time: launches only %d ns, want strictly between the flat correction's %d and none %d", l, fl, b)
			}
		})
	}
}
