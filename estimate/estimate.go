package estimate

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
)

// Options tune a run.
type Options struct {
	// FalseSites are the IDs of the sites removed together for the
	// false-dependency estimate. Nil: the sites whose Dependency is
	// "false". An empty, non-nil slice removes none. A site named here
	// that copies data to the host is replayed removed, copy and all (the
	// caller says the program does not need it); unnamed, such a site
	// adds only its bounded saving. Sites of set-up, tear-down or the
	// profiler are never removed.
	FalseSites []string
	// Calibration supplies constants the trace does not show; nil: the
	// defaults.
	Calibration *Calibration
	// MaxFullWork bounds (calls + ops) × sites replayed in full. Above it,
	// each site is replayed in windows around its occurrences. Zero: 50
	// million.
	MaxFullWork int64
	// MaxWindows bounds the windows replayed per site; more chunks of
	// occurrences than this are sampled evenly. Zero: 32.
	MaxWindows int
	// ChunkSize is the number of consecutive occurrences one window
	// removes. Zero: 8.
	ChunkSize int
	// MaxEvents bounds the API calls and GPU ops of a region that Run
	// reads and replays whole, as estimated before reading from the
	// export's row count and the region's share of the trace. Above it,
	// Run samples: it reads SampleWindows windows of the region holding
	// about MaxEvents in all and extrapolates (Result.Sampled). Zero: 1
	// million. FromTimeline replays the timeline it is given whole.
	MaxEvents int64
	// SampleWindows is the number of time windows a sampled estimate
	// reads. Zero: 16.
	SampleWindows int
	// ProfilerOverheadNs is the host time the profiler added to each
	// traced API call; savings are estimated for the program run without
	// the profiler. Zero: the calibration's value (per kind of call,
	// else flat), else the default; negative: no correction. A value
	// here is taken off every kind of call.
	ProfilerOverheadNs int64
	// InferProfilerOverhead: where neither this option nor the
	// calibration gives a kind of call's overhead, read it off the trace
	// (whatif.InferOverheads) instead of taking the default. Off by
	// default: on the ground truth it scored worse (docs/estimator.md).
	InferProfilerOverhead bool
	// LaunchProfilerOverhead: where neither this option nor the
	// calibration gives the overhead (and InferProfilerOverhead is off),
	// read it off the region's recorded kernel launches
	// (whatif.OverheadFromLaunches) instead of taking the default. Off by
	// default: fitted on one set, it reads the direction right and the
	// size about twice too high on the sets it was not fitted on
	// (docs/estimator.md).
	LaunchProfilerOverhead bool
}

func (o Options) withDefaults() Options {
	if o.MaxFullWork <= 0 {
		o.MaxFullWork = 50_000_000
	}
	if o.MaxWindows <= 0 {
		o.MaxWindows = 32
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = 8
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = 1_000_000
	}
	if o.SampleWindows <= 0 {
		o.SampleWindows = 16
	}
	return o
}

// Result is the estimate for one region.
type Result struct {
	Region RegionTiming `json:"region"`
	// BaseNs is the recorded time the replay reproduces: the region plus
	// any GPU work launched in it that ran past its end.
	BaseNs int64 `json:"base_ns"`
	// ReplayNs is the replay with nothing removed.
	ReplayNs int64 `json:"replay_ns"`
	// SelfCheckError is (ReplayNs - BaseNs) / BaseNs.
	SelfCheckError float64 `json:"self_check_error"`
	// UnprofiledNs is the replay with the profiler's per-call overhead
	// taken off: the baseline savings are measured from.
	UnprofiledNs int64 `json:"unprofiled_ns"`
	// UnprofiledRegionNs is the region's duration as the program would
	// run it without the profiler (the recorded duration less what
	// deflating the replay took off, extrapolated in a sampled region):
	// the whole every savings fraction is a share of, as a saving
	// measured without the profiler is a share of a step timed so.
	UnprofiledRegionNs int64 `json:"unprofiled_region_ns"`
	// Sites are in the order given, each with its syncs removed alone.
	Sites []SiteEstimate `json:"sites"`
	// FalseDependency removes the false-dependency sites together.
	FalseDependency Scenario `json:"false_dependency"`
	// AllSyncs removes every sync of the region: the ceiling.
	AllSyncs Scenario `json:"all_syncs"`
	// Sampled is true when any estimate was extrapolated from a sample:
	// of a site's occurrences, or of the region's time.
	Sampled bool `json:"sampled"`
	// SampleWindows is the number of windows of a sampled region read and
	// replayed (0: the region was replayed whole); SampledNs is the
	// recorded time of its time windows, the share of the region every
	// estimate is extrapolated from. BaseNs, ReplayNs and UnprofiledNs
	// are then sums over the windows.
	SampleWindows int       `json:"sample_windows,omitempty"`
	SampledNs     int64     `json:"sampled_ns,omitempty"`
	Constants     Constants `json:"constants"`
	Calls         int       `json:"calls"`
	Ops           int       `json:"ops"`
	Warnings      []string  `json:"warnings,omitempty"`
}

// RegionTiming is the analysed region.
type RegionTiming struct {
	StartNs    int64 `json:"start_ns"`
	EndNs      int64 `json:"end_ns"`
	DurationNs int64 `json:"duration_ns"`
	Intervals  int   `json:"intervals"`
}

// SiteEstimate is the saving of removing one site's syncs.
type SiteEstimate struct {
	ID              string  `json:"id"`
	Syncs           int     `json:"syncs"`
	SavingsNs       int64   `json:"estimated_savings_ns"`
	SavingsFraction float64 `json:"estimated_savings_fraction"`
	// Windows is 0 for a replay of the whole region, else the number of
	// windows replayed around the site's occurrences.
	Windows int  `json:"windows"`
	Sampled bool `json:"sampled"`
	// DeleteSavingsNs is what the replay saves with the site's waits
	// deleted. SavingsNs is that, but for a site outside the removable
	// totals (0) or one that copies data the host uses (at most
	// CopyOverlapBoundNs).
	DeleteSavingsNs       int64   `json:"delete_savings_ns"`
	DeleteSavingsFraction float64 `json:"delete_savings_fraction"`
	// Phase is the site's phase when it is set-up, tear-down or the
	// profiler's own: its SavingsNs is 0 and it stays out of every
	// scenario; UncountedSavingsNs is what deleting its waits would save.
	Phase              string `json:"phase,omitempty"`
	UncountedSavingsNs int64  `json:"uncounted_savings_ns,omitempty"`
	// CopyOverlapBoundNs, for a site that copies data the host uses, is
	// the most an asynchronous copy into pinned memory overlaps with
	// other work (see model.copyOverlap); Bound says which limit gave
	// SavingsNs (BoundCopyOverlap or BoundDelete), "" for other sites.
	CopyOverlapBoundNs int64  `json:"copy_overlap_bound_ns,omitempty"`
	Bound              string `json:"bound,omitempty"`
	// Parts are what the saving is made of.
	Parts SavingsParts `json:"parts"`
	// Interval is the spread of SavingsNs over the repeated windows it
	// rests on; nil where it rests on fewer than two, or where SavingsNs
	// is not the replay's (a phase site, or one held to its copy bound).
	Interval *Interval `json:"interval,omitempty"`
}

// Scenario is the saving of removing several sites together. Sites of
// set-up, tear-down or the profiler are never in one (ExcludedSiteIDs);
// sites that copy data the host uses are not replayed with the others but
// add their bounded saving (BoundedSiteIDs).
type Scenario struct {
	SiteIDs         []string `json:"site_ids"`
	Syncs           int      `json:"syncs"`
	SavingsNs       int64    `json:"estimated_savings_ns"`
	SavingsFraction float64  `json:"estimated_savings_fraction"`
	ExcludedSiteIDs []string `json:"excluded_site_ids,omitempty"`
	BoundedSiteIDs  []string `json:"bounded_site_ids,omitempty"`
	// Interval is the spread of SavingsNs over the repeated windows of
	// its syncs (chunks of consecutive removed syncs on a thread), the
	// bounded sites' savings added as they are; nil on fewer than two.
	Interval *Interval `json:"interval,omitempty"`
}

// ErrEmptyRegion is returned for a region of no duration.
var ErrEmptyRegion = errors.New("the region has no duration")

// Unestimable says why the trace's savings cannot be estimated, "" when
// they can. Without GPU activity (no kernel, memcpy or memset rows: the
// export lacks CUPTI's activity tables) the replay knows neither what a
// sync waited for nor what the GPU did after it, and would call every
// blocked nanosecond removable.
func Unestimable(t *trace.Trace) string {
	if !t.Evidence.GPUActivity {
		return "the export has CUDA API calls but no GPU activity (no kernel, memcpy or memset rows), " +
			"so what each sync waited for is unknown; profile again with GPU activity traced " +
			"('nsys profile -t cuda' traces it by default; on WSL2 and some virtual GPUs it needs a driver that supports CUPTI activity)"
	}
	return ""
}

// Run estimates, for the trace's region, the wall time saved by removing
// each site's syncs, the false-dependency sites' together, and all syncs.
// A region of more than opt.MaxEvents calls and ops is sampled.
func Run(ctx context.Context, x *trace.Export, t *trace.Trace, sites []classify.Site, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	r := t.Region
	if r.Duration <= 0 || len(r.Intervals) == 0 {
		return nil, fmt.Errorf("estimating savings in %s: %w", t.Path, ErrEmptyRegion)
	}
	events, whole, err := regionEvents(ctx, x, t)
	if err != nil {
		return nil, savingsErr(t.Path, err)
	}
	if whole > opt.MaxEvents {
		return runSampled(ctx, x, t, sites, opt, events)
	}
	tl, err := x.Timeline(ctx, regionWindow(r))
	if err != nil {
		return nil, savingsErr(t.Path, err)
	}
	return FromTimeline(ctx, tl, t, sites, opt)
}

// savingsErr names the file first: an error that already does (a
// *trace.InputError: "FILE: corrupt …") or that is the context's is
// returned as it is, any other is prefixed with the file and the step.
func savingsErr(path string, err error) error {
	var ie *trace.InputError
	if errors.As(err, &ie) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%s: estimating savings: %w", path, err)
}

// regionWindow is the stretch of the trace a whole replay of the region
// reads.
func regionWindow(r trace.Region) trace.Interval {
	w := trace.Interval{Start: r.Start, End: r.End}
	if r.Name != "" { // GPU work launched in the range may run past its end
		w.End += min(r.Duration, 2_000_000_000)
	}
	return w
}

// FromTimeline is Run on a timeline already read: tl must cover the
// trace's region, which is replayed whole.
func FromTimeline(ctx context.Context, tl *trace.Timeline, t *trace.Trace, sites []classify.Site, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	r := t.Region
	if r.Duration <= 0 || len(r.Intervals) == 0 {
		return nil, fmt.Errorf("estimating savings in %s: %w", t.Path, ErrEmptyRegion)
	}
	d := newDraft(tl, t, r.Start, r.End, 0, len(t.Syncs), math.MaxInt64)
	e := newEstimator(t, opt, finishModels([]*draft{d}, opt.Calibration), false)
	e.addPart(d.m, r.Intervals, -1)
	res, err := e.run(ctx, sites)
	if err != nil {
		return nil, err
	}
	if w := d.late.warning(r.Duration); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	return res, nil
}
