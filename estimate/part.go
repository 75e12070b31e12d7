package estimate

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
	"github.com/nsyssync/nsyssync/whatif"
)

// estimator carries one run's models, replays and result. An exact run
// has one part, the whole region; a sampled run has one part per window.
type estimator struct {
	t       *trace.Trace
	opt     Options
	res     *Result
	parts   []*part
	sampled bool
	// siteIdx: per site, its valid trace sync indices, sorted (all its
	// occurrences, in a sampled region as in the whole).
	siteIdx [][]int
	// correction is the region's unprofiled replay less its replay:
	// measured whole, or extrapolated from the time windows by the calls
	// and ops they replay against the region's regionRows (the
	// profiler's overhead is a cost per call). sampledRows: the calls
	// and ops that start in the time windows.
	correction              int64
	regionRows, sampledRows int64
}

// part is one model and its replays: the whole region, or one window of a
// sampled region.
type part struct {
	m   *model
	sim *simulator
	// ivs are the recorded intervals replayed: the region's, or the
	// window.
	ivs     []trace.Interval
	windows []window // one per interval
	base    []int64  // unchanged replay end per window
	// site >= 0: a window read for that site alone, which has no
	// occurrence in the time windows; -1: the region or a time window.
	site int
	// count is, for a window of a sampled region, the stretch whose
	// syncs are removed and counted (the replay goes on past it, and the
	// model starts before it); zero for the whole region.
	count trace.Interval
	// siteSyncs: per site, its syncs in the model (m.syncs indices).
	siteSyncs [][]int
	// recNs, replayNs, unprofNs sum, over the intervals, the recording,
	// the unchanged replay and the replay without the profiler; events
	// counts the calls replayed and the ops they launched.
	recNs, replayNs, unprofNs int64
	events                    int64
	// threadSyncs lists each thread's syncs in call order and syncPos
	// each sync's place there (built for windowed estimates only).
	threadSyncs [][]int
	syncPos     []int
}

func newEstimator(t *trace.Trace, opt Options, consts Constants, sampled bool) *estimator {
	r := t.Region
	consts.setProfilerOverheads(opt)
	return &estimator{t: t, opt: opt, sampled: sampled, res: &Result{
		Region:    RegionTiming{StartNs: r.Start, EndNs: r.End, DurationNs: r.Duration, Intervals: len(r.Intervals)},
		Constants: consts,
	}}
}

// addPart adds a model replayed over the given recorded intervals.
func (e *estimator) addPart(m *model, ivs []trace.Interval, site int) {
	m.overheads = e.res.Constants.ProfilerOverheads.ByKind()
	e.parts = append(e.parts, &part{m: m, sim: newSimulator(m), ivs: ivs, site: site})
	e.res.Calls += len(m.calls)
	e.res.Ops += len(m.ops)
}

// run replays every part unchanged and then without each site's syncs,
// the false-dependency sites' and all syncs.
func (e *estimator) run(ctx context.Context, sites []classify.Site) (*Result, error) {
	e.indexSites(sites)
	var timeRec, timeCorr, timeEvents int64 // over the time windows
	for _, p := range e.parts {
		if err := p.replayUnchanged(ctx); err != nil {
			return nil, err
		}
		e.res.BaseNs += p.recNs
		e.res.ReplayNs += p.replayNs
		e.res.UnprofiledNs += p.unprofNs
		if p.site < 0 {
			for _, iv := range clip(e.t.Region.Intervals, p.count) {
				timeRec += iv.End - iv.Start
			}
			timeCorr += p.unprofNs - p.replayNs
			timeEvents += p.events
		}
	}
	if e.res.BaseNs > 0 {
		e.res.SelfCheckError = float64(e.res.ReplayNs-e.res.BaseNs) / float64(e.res.BaseNs)
	}
	e.correction = e.res.UnprofiledNs - e.res.ReplayNs
	if e.sampled {
		e.res.Sampled, e.res.SampleWindows, e.res.SampledNs = true, len(e.parts), timeRec
		e.correction = int64(float64(timeCorr) * float64(e.regionRows) / float64(max(timeEvents, 1)))
	}
	e.res.UnprofiledRegionNs = e.regionNs()
	if err := e.siteEstimates(ctx, sites); err != nil {
		return nil, err
	}
	if err := e.scenarios(ctx, sites); err != nil {
		return nil, err
	}
	return e.res, nil
}

// indexSites finds each site's syncs in every part and gives them the
// site's median host code.
func (e *estimator) indexSites(sites []classify.Site) {
	e.siteIdx = make([][]int, len(sites))
	for _, p := range e.parts {
		p.siteSyncs = make([][]int, len(sites))
	}
	for i := range sites {
		site := &sites[i]
		valid := make([]int, 0, len(site.Syncs))
		for _, si := range site.Syncs {
			if si >= 0 && si < len(e.t.Syncs) && (e.sampled || e.parts[0].m.syncs[si].calls != nil) {
				valid = append(valid, si)
			}
		}
		if len(valid) < len(site.Syncs) {
			e.res.Warnings = append(e.res.Warnings, fmt.Sprintf("site %s: %d of its %d syncs are not in the region's timeline", site.ID, len(site.Syncs)-len(valid), len(site.Syncs)))
		}
		if !slices.IsSorted(valid) {
			slices.Sort(valid)
		}
		e.siteIdx[i] = valid
		var before, after []int64
		for _, p := range e.parts {
			p.siteSyncs[i] = p.localSyncs(valid)
			for _, l := range p.siteSyncs[i] {
				before, after = append(before, p.m.syncs[l].cutBefore), append(after, p.m.syncs[l].cutAfter)
			}
		}
		if len(before) < 2 {
			continue
		}
		cut := whatif.ShareCut(before, after, whatif.LowerMiddle)
		for _, p := range e.parts {
			for _, l := range p.siteSyncs[i] {
				p.m.syncs[l].cutBefore, p.m.syncs[l].cutAfter = cut.Before, cut.After
			}
		}
	}
}

// localSyncs returns the model indices of the sorted trace syncs that the
// part's model holds.
func (p *part) localSyncs(sorted []int) []int {
	lo, hi := p.m.syncLo, p.m.syncLo+len(p.m.syncs)
	var out []int
	for _, si := range sorted[sort.SearchInts(sorted, lo):] {
		if si >= hi {
			break
		}
		if p.counted(si - lo) {
			out = append(out, si-lo)
		}
	}
	return out
}

// counted reports whether the part's replay removes model sync l: one
// found in the model and, in a window, beginning inside it.
func (p *part) counted(l int) bool {
	ss := &p.m.syncs[l]
	if ss.calls == nil {
		return false
	}
	at := p.m.host.Calls[ss.calls[0]].Start
	return p.count.End == 0 || at >= p.count.Start && at < p.count.End
}

// replayUnchanged replays each interval of the part as recorded: the
// self-check, and the baseline every saving is measured from.
func (p *part) replayUnchanged(ctx context.Context) error {
	m := p.m
	for _, iv := range p.ivs {
		lo := int32(sort.Search(len(m.calls), func(i int) bool { return m.host.Calls[i].Start >= iv.Start }))
		hi := int32(sort.Search(len(m.calls), func(i int) bool { return m.host.Calls[i].Start >= iv.End }))
		w := window{lo: lo, hi: hi, start: iv.Start, anchor: noIndex}
		recEnd := iv.End
		var lastEnd int64 = minTime
		p.events += int64(hi - lo)
		for i := lo; i < hi; i++ {
			c, h := &m.calls[i], &m.host.Calls[i]
			p.events += int64(c.opHi - c.opLo)
			if h.End > lastEnd {
				lastEnd, w.anchor = h.End, h.Thread
			}
			for o := c.opLo; o < c.opHi; o++ {
				recEnd = max(recEnd, m.ops[o].recEnd)
			}
		}
		if w.anchor >= 0 {
			w.trailing = max(0, iv.End-lastEnd)
		}
		p.sim.deflate = false
		end, err := p.sim.replay(ctx, w, nil)
		if err != nil {
			return err
		}
		p.sim.deflate = m.overheads != whatif.Overheads{}
		unprofiled, err := p.sim.replay(ctx, w, nil)
		if err != nil {
			return err
		}
		if w.anchor < 0 { // nothing happened in the interval
			end, unprofiled = iv.End, iv.End
		}
		p.windows = append(p.windows, w)
		p.base = append(p.base, unprofiled)
		p.recNs += recEnd - iv.Start
		p.replayNs += end - iv.Start
		p.unprofNs += unprofiled - iv.Start
	}
	return nil
}

// savings replays every interval of the part with the syncs removed and
// returns the time saved.
func (p *part) savings(ctx context.Context, remove []int) (int64, error) {
	var saved int64
	for k, w := range p.windows {
		if w.anchor < 0 {
			continue
		}
		end, err := p.sim.replay(ctx, w, remove)
		if err != nil {
			return 0, err
		}
		saved += p.base[k] - end
	}
	return saved, nil
}

// fraction is of the region's duration, as the program would run it
// without the profiler.
func (e *estimator) fraction(ns int64) float64 {
	return float64(ns) / float64(e.regionNs())
}

// regionNs is the region's duration without the profiler: the recorded
// one less the correction, never below a tenth of it.
func (e *estimator) regionNs() int64 {
	return max(e.t.Region.Duration+e.correction, e.t.Region.Duration/10, 1)
}
