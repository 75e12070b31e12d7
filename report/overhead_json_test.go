package report

import (
	"context"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/estimate"
)

// TestProfilerOverheadInJSON: the document says which per-call profiler
// overhead the estimate took off, per API kind, and where each came from
// (the default here, saying what the capture's launches would have
// given; an option when one is given; the launches' value when asked
// for); a report without an estimate says nothing of it.
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
		{estimate.Options{}, estimate.DefaultCalibration().ProfilerOverheadNs, "default (the launches would give "},
		{estimate.Options{ProfilerOverheadNs: 2_000}, 2_000, "option"},
		{estimate.Options{LaunchProfilerOverhead: true}, 0, "trace (median launch "}, // flat: what the launches give
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
		flat := tc.flat
		if flat == 0 {
			flat = po.FlatNs
		}
		if flat <= 0 || po.FlatNs != flat || po.LaunchNs != flat || po.SyncNs != flat || !strings.HasPrefix(po.Sources["profiler_overhead_ns"], tc.source) {
			t.Errorf("options %+v: profiler_overhead %+v, want %d ns from %q", tc.opt, *po, tc.flat, tc.source)
		}
	}
}
