package estimate

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
)

// Options tune a run.
type Options struct {
	// FalseSites are the IDs of the sites removed together for the
	// false-dependency estimate. Nil: the sites whose Dependency is
	// "false". An empty, non-nil slice removes none.
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
	// ProfilerOverheadNs is the host time the profiler added to each
	// traced API call; savings are estimated for the program run without
	// the profiler. Zero: the calibration's value, else the default;
	// negative: no correction.
	ProfilerOverheadNs int64
}

// profilerOverhead picks the per-call profiler overhead and says where it
// came from.
func (o Options) profilerOverhead() (int64, string) {
	switch {
	case o.ProfilerOverheadNs < 0:
		return 0, "none"
	case o.ProfilerOverheadNs > 0:
		return o.ProfilerOverheadNs, "option"
	case o.Calibration != nil && o.Calibration.ProfilerOverheadNs > 0:
		return o.Calibration.ProfilerOverheadNs, "calibration: " + o.Calibration.Source
	}
	return DefaultCalibration().ProfilerOverheadNs, "default"
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
	// Sites are in the order given, each with its syncs removed alone.
	Sites []SiteEstimate `json:"sites"`
	// FalseDependency removes the false-dependency sites together.
	FalseDependency Scenario `json:"false_dependency"`
	// AllSyncs removes every sync of the region: the ceiling.
	AllSyncs Scenario `json:"all_syncs"`
	// Sampled is true when any site's estimate was extrapolated from a
	// sample of its occurrences.
	Sampled   bool      `json:"sampled"`
	Constants Constants `json:"constants"`
	Calls     int       `json:"calls"`
	Ops       int       `json:"ops"`
	Warnings  []string  `json:"warnings,omitempty"`
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
}

// Scenario is the saving of removing several sites together.
type Scenario struct {
	SiteIDs         []string `json:"site_ids"`
	Syncs           int      `json:"syncs"`
	SavingsNs       int64    `json:"estimated_savings_ns"`
	SavingsFraction float64  `json:"estimated_savings_fraction"`
}

// ErrEmptyRegion is returned for a region of no duration.
var ErrEmptyRegion = errors.New("the region has no duration")

// Run estimates, for the trace's region, the wall time saved by removing
// each site's syncs, the false-dependency sites' together, and all syncs.
func Run(ctx context.Context, x *trace.Export, t *trace.Trace, sites []classify.Site, opt Options) (*Result, error) {
	r := t.Region
	if r.Duration <= 0 || len(r.Intervals) == 0 {
		return nil, fmt.Errorf("estimating savings in %s: %w", t.Path, ErrEmptyRegion)
	}
	window := trace.Interval{Start: r.Start, End: r.End}
	if r.Name != "" { // GPU work launched in the range may run past its end
		window.End += min(r.Duration, 2_000_000_000)
	}
	tl, err := x.Timeline(ctx, window)
	if err != nil {
		return nil, fmt.Errorf("estimating savings: %w", err)
	}
	return FromTimeline(ctx, tl, t, sites, opt)
}

// FromTimeline is Run on a timeline already read: tl must cover the
// trace's region.
func FromTimeline(ctx context.Context, tl *trace.Timeline, t *trace.Trace, sites []classify.Site, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	r := t.Region
	if r.Duration <= 0 || len(r.Intervals) == 0 {
		return nil, fmt.Errorf("estimating savings in %s: %w", t.Path, ErrEmptyRegion)
	}
	m := buildModel(tl, t, r.Start, r.End, opt.Calibration)
	var src string
	m.profilerOverheadNs, src = opt.profilerOverhead()
	m.consts.ProfilerOverheadNs, m.consts.Sources["profiler_overhead_ns"] = m.profilerOverheadNs, src
	e := &estimator{m: m, sim: newSimulator(m), t: t, res: &Result{
		Region:    RegionTiming{StartNs: r.Start, EndNs: r.End, DurationNs: r.Duration, Intervals: len(r.Intervals)},
		Constants: m.consts, Calls: len(m.calls), Ops: len(m.ops),
	}}
	e.siteSyncs = make([][]int, len(sites))
	for i := range sites {
		e.siteSyncs[i] = e.validSyncs(&sites[i])
		m.shareHostCode(e.siteSyncs[i])
	}
	if err := e.replayUnchanged(ctx); err != nil {
		return nil, err
	}
	if err := e.siteEstimates(ctx, sites, opt); err != nil {
		return nil, err
	}
	if err := e.scenarios(ctx, sites, opt); err != nil {
		return nil, err
	}
	return e.res, nil
}

// estimator carries one run's model, replay and result.
type estimator struct {
	m       *model
	sim     *simulator
	t       *trace.Trace
	res     *Result
	windows []window
	base    []int64 // unchanged replay end per window
	// siteSyncs: per site, its sync indices found in the model.
	siteSyncs [][]int
	// threadSyncs lists each thread's syncs in call order and syncPos
	// each sync's place there (built for windowed estimates only).
	threadSyncs [][]int
	syncPos     []int
}

// replayUnchanged replays each interval of the region as recorded: the
// self-check, and the baseline every saving is measured from.
func (e *estimator) replayUnchanged(ctx context.Context) error {
	m := e.m
	for _, iv := range e.t.Region.Intervals {
		lo := int32(sort.Search(len(m.calls), func(i int) bool { return m.calls[i].start >= iv.Start }))
		hi := int32(sort.Search(len(m.calls), func(i int) bool { return m.calls[i].start >= iv.End }))
		w := window{lo: lo, hi: hi, start: iv.Start, anchor: noIndex}
		recEnd := iv.End
		var lastEnd int64 = minTime
		for i := lo; i < hi; i++ {
			c := &m.calls[i]
			if c.end > lastEnd {
				lastEnd, w.anchor = c.end, c.thread
			}
			for o := c.opLo; o < c.opHi; o++ {
				recEnd = max(recEnd, m.ops[o].recEnd)
			}
		}
		if w.anchor >= 0 {
			w.trailing = max(0, iv.End-lastEnd)
		}
		e.sim.deflate = false
		end, err := e.sim.replay(ctx, w, nil)
		if err != nil {
			return err
		}
		e.sim.deflate = m.profilerOverheadNs > 0
		unprofiled, err := e.sim.replay(ctx, w, nil)
		if err != nil {
			return err
		}
		if w.anchor < 0 { // nothing happened in the interval
			end, unprofiled = iv.End, iv.End
		}
		e.windows = append(e.windows, w)
		e.base = append(e.base, unprofiled)
		e.res.BaseNs += recEnd - iv.Start
		e.res.ReplayNs += end - iv.Start
		e.res.UnprofiledNs += unprofiled - iv.Start
	}
	if e.res.BaseNs > 0 {
		e.res.SelfCheckError = float64(e.res.ReplayNs-e.res.BaseNs) / float64(e.res.BaseNs)
	}
	return nil
}

// savings replays every interval with the syncs removed and returns the
// time saved.
func (e *estimator) savings(ctx context.Context, remove []int) (int64, error) {
	var saved int64
	for k, w := range e.windows {
		if w.anchor < 0 {
			continue
		}
		end, err := e.sim.replay(ctx, w, remove)
		if err != nil {
			return 0, err
		}
		saved += e.base[k] - end
	}
	return saved, nil
}

// fraction is of the region's duration, as the program would run it
// without the profiler.
func (e *estimator) fraction(ns int64) float64 {
	return float64(ns) / float64(e.t.Region.Duration+e.res.UnprofiledNs-e.res.ReplayNs)
}

// validSyncs keeps the site's sync indices that name a sync of the model.
func (e *estimator) validSyncs(site *classify.Site) []int {
	out := make([]int, 0, len(site.Syncs))
	for _, i := range site.Syncs {
		if i >= 0 && i < len(e.m.syncs) && e.m.syncs[i].calls != nil {
			out = append(out, i)
		}
	}
	if len(out) < len(site.Syncs) {
		e.res.Warnings = append(e.res.Warnings, fmt.Sprintf("site %s: %d of its %d syncs are not in the region's timeline", site.ID, len(site.Syncs)-len(out), len(site.Syncs)))
	}
	return out
}

func (e *estimator) siteEstimates(ctx context.Context, sites []classify.Site, opt Options) error {
	work := int64(len(e.m.calls)+len(e.m.ops)) * int64(len(sites))
	for i := range sites {
		site := &sites[i]
		syncs := e.siteSyncs[i]
		est := SiteEstimate{ID: site.ID, Syncs: len(syncs)}
		var err error
		if work <= opt.MaxFullWork {
			est.SavingsNs, err = e.savings(ctx, syncs)
		} else {
			err = e.windowed(ctx, syncs, opt, &est)
		}
		if err != nil {
			return fmt.Errorf("site %s: %w", site.ID, err)
		}
		est.SavingsFraction = e.fraction(est.SavingsNs)
		e.res.Sampled = e.res.Sampled || est.Sampled
		e.res.Sites = append(e.res.Sites, est)
	}
	return nil
}

// scenarios estimates the false-dependency sites together and all syncs.
func (e *estimator) scenarios(ctx context.Context, sites []classify.Site, opt Options) error {
	chosen := map[string]bool{}
	if opt.FalseSites == nil {
		for _, s := range sites {
			if s.Dependency == classify.DepFalse {
				chosen[s.ID] = true
			}
		}
	} else {
		for _, id := range opt.FalseSites {
			chosen[id] = true
		}
	}
	var falseSyncs, all []int
	falseIDs := []string{}
	for i := range sites {
		if chosen[sites[i].ID] {
			falseIDs = append(falseIDs, sites[i].ID)
			falseSyncs = append(falseSyncs, e.siteSyncs[i]...)
		}
	}
	for i := range e.m.syncs {
		if e.m.syncs[i].calls != nil {
			all = append(all, i)
		}
	}
	allIDs := make([]string, len(sites))
	for i := range sites {
		allIDs[i] = sites[i].ID
	}
	for _, sc := range []struct {
		dst   *Scenario
		ids   []string
		syncs []int
	}{{&e.res.FalseDependency, falseIDs, falseSyncs}, {&e.res.AllSyncs, allIDs, all}} {
		saved, err := e.savings(ctx, sc.syncs)
		if err != nil {
			return err
		}
		*sc.dst = Scenario{SiteIDs: sc.ids, Syncs: len(sc.syncs), SavingsNs: saved, SavingsFraction: e.fraction(saved)}
	}
	return nil
}
