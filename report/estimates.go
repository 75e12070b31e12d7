package report

import (
	"context"
	"github.com/nsyssync/nsyssync/contract"
	"strings"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/internal/format"
	"github.com/nsyssync/nsyssync/trace"
)

// Estimates is what the savings estimator (estimate/) hands to the
// renderers. Until it runs, Analysis.Estimates is nil and every report
// shows savings as not estimated ("-" in tables, 0 in JSON).
type Estimates struct {
	// Sites holds each site's savings when its syncs alone are removed,
	// by site ID.
	Sites map[string]SiteEstimate
	// TotalNs is the region's estimated saving with every sync removed
	// together (totals.estimated_savings_ns): not a sum of the sites'.
	TotalNs int64
	// FalseDependencyNs is the saving when every false-dependency sync is
	// removed together (totals.false_dependency_savings_ns).
	FalseDependencyNs int64
	// TotalInterval and FalseDependencyInterval are their intervals
	// (estimate.Scenario.Interval); nil where they rest on one window.
	TotalInterval, FalseDependencyInterval *estimate.Interval
	// WithoutSyncs, when set, simulates a window of the trace with the
	// site's syncs removed; the HTML report draws it under the recorded
	// timeline. Nil: the HTML report draws the recorded one alone.
	WithoutSyncs SimulateFunc
	// SelfCheckError is the simulator's relative error replaying the
	// region unchanged.
	SelfCheckError float64
	// Sampled: some estimate was extrapolated from a sample (of a site's
	// occurrences, or of the region's windows).
	Sampled bool
	// Warnings are the estimator's notes on its model.
	Warnings []string
	// ProfilerOverhead is the profiler's per-call host overhead the
	// simulator took off, per API kind, and where each value came from.
	ProfilerOverhead contract.ProfilerOverheadJSON
	// PinnedHtoDNsPerMiB is the pinned host-to-device copy speed the
	// pinned rewrite of a pageable copy assumes, and PinnedHtoDSource
	// where it came from (the trace's pinned copies, a calibration, the
	// default measured on an H100).
	PinnedHtoDNsPerMiB int64
	PinnedHtoDSource   string
	// BaselineNs is the region's duration as the program would run it
	// without the profiler (estimate.Result.UnprofiledRegionNs): every
	// savings share is of it, as a saving measured without the profiler
	// is a share of a step timed so. 0: the recorded duration.
	BaselineNs int64
}

// shareBase is the whole a saving's share is of: the region without the
// profiler where the estimator gave it, else the recorded region.
func (a *Analysis) shareBase() int64 {
	if e := a.Estimates; e != nil && e.BaselineNs > 0 {
		return e.BaselineNs
	}
	return a.Trace.Region.Duration
}

// SiteEstimate is one site's estimated saving.
type SiteEstimate struct {
	SavingsNs int64
	// Sampled: the estimator simulated a sample of the site's occurrences.
	Sampled bool
	// DeleteNs is what deleting the site's waits saves in the replay,
	// before the bounds (estimate.SiteEstimate.DeleteSavingsNs);
	// UncountedNs that saving for a site of set-up, tear-down or the
	// profiler, which counts nowhere.
	DeleteNs, UncountedNs int64
	// CopyBoundNs and Bound: for a site that copies data the host uses,
	// the copy-overlap bound and which limit gave SavingsNs
	// (estimate.BoundCopyOverlap, estimate.BoundDelete).
	CopyBoundNs int64
	Bound       string
	// Parts are what the saving is made of.
	Parts estimate.SavingsParts
	// Interval is the spread of SavingsNs over the repeated windows it
	// rests on (estimate.SiteEstimate.Interval); nil where it rests on
	// one.
	Interval *estimate.Interval
}

// SimulateFunc returns the timeline of window as simulated without the
// site's syncs.
type SimulateFunc func(ctx context.Context, site *classify.Site, window trace.Interval) (*trace.Timeline, error)

// TimelineReader reads every API call and GPU op of a time window;
// *trace.Export is one.
type TimelineReader interface {
	Timeline(ctx context.Context, window trace.Interval) (*trace.Timeline, error)
}

// Estimated reports whether the analysis carries savings estimates.
func (a *Analysis) Estimated() bool { return a.Estimates != nil }

// SavingsNs is a site's estimated saving; 0 without estimates.
func (a *Analysis) SavingsNs(s *classify.Site) int64 {
	if a.Estimates == nil {
		return 0
	}
	return a.Estimates.Sites[s.ID].SavingsNs
}

// savingsText formats a site's saving for tables: "-" when not estimated.
func (a *Analysis) savingsText(s *classify.Site) string {
	if !s.Phase.Counted() {
		return "not counted (" + s.Phase.Label() + ")"
	}
	if s.HostRead != "" {
		return "not counted (host reads)"
	}
	if a.Estimates == nil {
		return "-"
	}
	e, ok := a.Estimates.Sites[s.ID]
	if !ok {
		return "-"
	}
	text := savingsWithin(e.SavingsNs, e.Interval, a.shareBase())
	if e.Sampled {
		text += " sampled"
	}
	return text
}

// totalSavingsText describes the region's estimated savings in one line.
func (a *Analysis) totalSavingsText() string {
	if a.Estimates == nil {
		if a.NoEstimate != "" {
			return "not estimated: " + a.NoEstimate
		}
		return "not estimated"
	}
	d := a.shareBase()
	e := a.Estimates
	text := savingsWithin(e.FalseDependencyNs, e.FalseDependencyInterval, d) + " removable (false dependencies together); " +
		savingsWithin(e.TotalNs, e.TotalInterval, d) + " with all syncs removed together"
	if a.Estimates.Sampled {
		text += "; sampled"
	}
	if r := a.Trace.Region.Duration; d*100 < r*99 {
		text += "; shares of " + format.Duration(d) + ", the region without the profiler's overhead"
	}
	return text
}

// savingsWithin is savingsAmount with the saving's interval, where it has
// one and saves something: "1.92ms (1.87–1.96ms, 2.7%)".
func savingsWithin(ns int64, iv *estimate.Interval, d int64) string {
	text := savingsAmount(ns, d)
	if iv == nil || ns <= 0 {
		return text
	}
	head, share, _ := strings.Cut(text, " (")
	return head + " (" + durationRange(iv.LowNs, iv.HighNs) + ", " + share
}

// savingsAmount formats a saving of region time d: "1.46ms (12.4%)";
// "none" for no saving, and a negative one as what it costs, never as a
// negative share ("- (-0.0%)").
func savingsAmount(ns, d int64) string {
	switch {
	case ns > 0:
		return format.Duration(ns) + " (" + format.Percent(ns, d) + ")"
	case ns == 0:
		return "none"
	}
	return signedDuration(ns) + " (the rewrite costs more)"
}

// savingsLegend says what a saving's interval is, for the sites table:
// "" when no saving shown has one.
func (a *Analysis) savingsLegend() string {
	e := a.Estimates
	if e == nil {
		return ""
	}
	has := e.TotalInterval != nil && e.TotalNs > 0 || e.FalseDependencyInterval != nil && e.FalseDependencyNs > 0
	for _, s := range e.Sites {
		has = has || s.Interval != nil && s.SavingsNs > 0
	}
	if !has {
		return ""
	}
	return "SAVINGS: low–high in parentheses, where a saving rests on two or more repeated windows: " +
		"the 10th to 90th percentile of that saving over them."
}

// durationRange formats lo to hi compactly: "1.87–1.96ms", with the unit
// once when both ends share it, and a sign on a negative end.
func durationRange(lo, hi int64) string {
	l, h := signedDuration(lo), signedDuration(hi)
	unit := strings.TrimLeft(h, "−0123456789.")
	if strings.HasSuffix(l, unit) && strings.TrimLeft(l, "−0123456789.") == unit {
		l = strings.TrimSuffix(l, unit)
	}
	return l + "–" + h
}

// signedDuration is Duration with a minus sign for a negative duration.
func signedDuration(ns int64) string {
	if ns < 0 {
		return "−" + format.Duration(-ns)
	}
	return format.Duration(ns)
}

// FromEstimate turns the estimator's result into what the renderers show:
// each site's saving alone, the false-dependency sites' saving together,
// and, as the overall figure, the saving with every sync removed (the
// ceiling, which true dependencies reach only by restructuring).
func FromEstimate(r *estimate.Result) *Estimates {
	e := &Estimates{Sites: map[string]SiteEstimate{}, TotalNs: r.AllSyncs.SavingsNs,
		FalseDependencyNs: r.FalseDependency.SavingsNs, TotalInterval: r.AllSyncs.Interval, FalseDependencyInterval: r.FalseDependency.Interval,
		SelfCheckError: r.SelfCheckError, Warnings: r.Warnings, BaselineNs: r.UnprofiledRegionNs}
	c := r.Constants
	e.ProfilerOverhead = contract.ProfilerOverheadJSON{FlatNs: c.ProfilerOverheadNs, LaunchNs: c.LaunchNs, AsyncCopyNs: c.AsyncCopyNs,
		SyncNs: c.SyncNs, OtherNs: c.OtherNs, Sources: map[string]string{}}
	for k, v := range c.Sources {
		if strings.HasPrefix(k, "profiler_overhead") {
			e.ProfilerOverhead.Sources[k] = v
		}
	}
	e.PinnedHtoDNsPerMiB, e.PinnedHtoDSource = c.PinnedHtoDNsPerMiB, c.Sources["pinned_htod_ns_per_mib"]
	e.Sampled = r.Sampled
	for _, s := range r.Sites {
		e.Sites[s.ID] = SiteEstimate{SavingsNs: s.SavingsNs, Sampled: s.Sampled, DeleteNs: s.DeleteSavingsNs, UncountedNs: s.UncountedSavingsNs,
			CopyBoundNs: s.CopyOverlapBoundNs, Bound: s.Bound, Parts: s.Parts, Interval: s.Interval}
		e.Sampled = e.Sampled || s.Sampled
	}
	return e
}

// intervalEnds are an interval's ends for the JSON contract: nil, nil
// without one.
func intervalEnds(iv *estimate.Interval) (low, high *int64) {
	if iv == nil {
		return nil, nil
	}
	return &iv.LowNs, &iv.HighNs
}
