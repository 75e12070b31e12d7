package main

import (
	"math"
	"strings"
	"testing"
)

// TestSharesOfTheUnprofiledRegion checks that the report's savings shares
// are of the region as the program would run without the profiler (the
// simulator's baseline, totals.estimate_baseline_ns), as the savings
// themselves are and as a saving measured without the profiler is a share
// of a step timed so: on a host-bound capture the baseline is shorter than
// the recorded region, every fraction is its saving over the baseline, and
// the text report names the baseline.
func TestSharesOfTheUnprofiledRegion(t *testing.T) {
	const path = "../../fixtures/labelled/savings/d2h_item_rescale.lean.sqlite.gz"
	rep := analyzeMeasured(t, path)
	base := rep.Totals.BaselineNs
	if base <= 0 || base >= rep.Trace.Region.DurationNs {
		t.Fatalf("estimate_baseline_ns %d, want one below the recorded region's %d", base, rep.Trace.Region.DurationNs)
	}
	near := func(f float64, ns int64) bool { return math.Abs(f-float64(ns)/float64(base)) < 1e-9 }
	if !near(rep.Totals.EstimatedFraction, rep.Totals.EstimatedSavingsNs) {
		t.Errorf("totals: fraction %.4f, saving %d of baseline %d", rep.Totals.EstimatedFraction, rep.Totals.EstimatedSavingsNs, base)
	}
	for i, s := range rep.Sites {
		if !near(s.EstimatedFraction, s.EstimatedSavingsNs) {
			t.Errorf("site %d: fraction %.4f, saving %d of baseline %d", i, s.EstimatedFraction, s.EstimatedSavingsNs, base)
		}
	}
	code, text, _ := runCLI(t, "analyze", "--nvtx", "measured", path)
	if code != 0 || !strings.Contains(text, "the region without the profiler's overhead") {
		t.Errorf("the text report does not name the baseline of its shares:\n%s", text)
	}
}
