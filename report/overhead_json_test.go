package report

import (
	"context"
	"testing"

	"github.com/nsyssync/nsyssync/estimate"
)

// TestProfilerOverheadInJSON: the document says which per-call profiler
// overhead the estimate took off, per API kind, and where each came from
// (the default here, and an option when one is given); a report without
// an estimate says nothing of it.
func TestProfilerOverheadInJSON(t *testing.T) {
	ctx := context.Background()
	l := load(t, "gt_item_small.sqlite.gz", "measured")
	a := l.analysis
	if d := a.BuildDocument(); d.Totals.ProfilerOverhead != nil {
		t.Errorf("no estimate ran, yet profiler_overhead %+v", d.Totals.ProfilerOverhead)
	}
	for _, tc := range []struct {
		opt    estimate.Options
		flat   int64
		source string
	}{
		{estimate.Options{}, estimate.DefaultCalibration().ProfilerOverheadNs, "default"},
		{estimate.Options{ProfilerOverheadNs: 2_000}, 2_000, "option"},
	} {
		res, err := estimate.Run(ctx, l.export, a.Trace, a.Sites, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		a.Estimates = FromEstimate(res)
		po := a.BuildDocument().Totals.ProfilerOverhead
		if po == nil {
			t.Fatalf("estimated, yet no profiler_overhead in the document")
		}
		if po.FlatNs != tc.flat || po.LaunchNs != tc.flat || po.SyncNs != tc.flat || po.Sources["profiler_overhead_ns"] != tc.source {
			t.Errorf("options %+v: profiler_overhead %+v, want %d ns from %q", tc.opt, *po, tc.flat, tc.source)
		}
	}
}
