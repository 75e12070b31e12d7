package estimate

import (
	"context"
	"math"
	"sort"

	"github.com/nsyssync/nsyssync/trace"
)

// sampleWindow is a stretch of a large region read and replayed alone.
type sampleWindow struct {
	trace.Interval
	// site >= 0: read for that site, which no time window holds; -1: a
	// window of the even sample of the region's syncs.
	site int
	rows int64 // calls and ops that start in it (trace.TimelineRows)
	// lead is where its model starts, before it: the calls from there
	// give its first syncs their host code, the threads their typical
	// gaps and the streams their recorded state, and are not replayed.
	// tail is where its replay ends, after it: past two drained syncs
	// that no estimate removes, so that host and GPU are back in step
	// after the last sync that one removes (only the syncs that begin in
	// the window are removed, and counted).
	lead, tail int64
}

// leadSyncs is how many drained syncs before a window its model starts.
const leadSyncs = 4

// minWindowSyncs is the fewest syncs a time window should hold (at the
// region's mean density) for its own boundaries not to matter: removing
// a sync lets the host run ahead, and the GPU work it then overlaps may
// lie many syncs later (a CuPy program's next iteration, or the next run
// of a replicated trace). Sparse syncs make for fewer, longer windows.
const minWindowSyncs = 256

// Per absent site, at most this many windows around its occurrences.
const siteWindowsEach = 4

// sampleWindows chooses what a sampled estimate reads: time windows
// (timeWindows), then windows around the sites they miss (siteWindows),
// each with the context its model needs before it and the replay after
// it (lead and tail). events is the region's calls and ops; siteIdx holds
// each site's sync indices, sorted.
func sampleWindows(ctx context.Context, x *trace.Export, t *trace.Trace, siteIdx [][]int, events int64, opt Options) ([]sampleWindow, error) {
	out, halfTime, err := timeWindows(ctx, x, t, events, opt)
	if err != nil {
		return nil, err
	}
	if out, err = siteWindows(ctx, x, t, out, siteIdx, halfTime, opt); err != nil {
		return nil, err
	}
	for i := range out {
		w := &out[i]
		w.lead = cutBeforeN(t.Syncs, w.Start, w.Start-halfTime, leadSyncs)
		if w.lead == w.Start { // no sync before it: context from before it
			w.lead = max(w.Start-(w.End-w.Start)/8, t.Region.Start)
		}
		w.tail = max(cutAfter(t.Syncs, w.End, min(w.End+halfTime, t.Region.End), 2), w.End)
	}
	return out, nil
}

// timeWindows returns opt.SampleWindows windows (fewer where syncs are
// sparse: minWindowSyncs) centred on evenly spaced syncs of the region
// (on evenly spaced times when it has none), cut where host and GPU are
// back in step, about opt.MaxEvents calls and ops in all: each is
// measured before it is read and halved while it holds more than twice
// its share. It also returns half a window's length at the region's mean
// density, which bounds how far a cut may move.
func timeWindows(ctx context.Context, x *trace.Export, t *trace.Trace, events int64, opt Options) ([]sampleWindow, int64, error) {
	sampledSyncs := float64(len(t.Syncs)) * float64(opt.MaxEvents) / float64(events)
	k := min(opt.SampleWindows, max(int(sampledSyncs/minWindowSyncs), 1))
	budget := max(opt.MaxEvents/int64(k), 1)
	halfSyncs := max(int64(float64(len(t.Syncs))*float64(budget)/float64(events))/2, 1)
	halfTime := max(int64(float64(t.Region.Duration)*float64(budget)/float64(events))/2, 1)
	var out []sampleWindow
	for i := range k {
		for half := halfSyncs; ; half /= 2 {
			w := centredWindow(t, i, k, half, int64(float64(halfTime)*float64(half)/float64(halfSyncs)))
			// All its rows, in the region or between its intervals: what
			// its model holds.
			rows, err := x.TimelineRows(ctx, []trace.Interval{w})
			if err != nil {
				return nil, 0, err
			}
			if rows <= 2*budget || half <= 1 {
				out = addWindow(out, sampleWindow{Interval: w, site: -1})
				break
			}
		}
	}
	for i := range out { // its rows in the region: what it samples
		rows, err := x.TimelineRows(ctx, clip(t.Region.Intervals, out[i].Interval))
		if err != nil {
			return nil, 0, err
		}
		out[i].rows = rows
	}
	return out, halfTime, nil
}

// siteWindows appends, for the sites with no occurrence in the time
// windows, windows around their occurrences: from the end of the drained
// sync before one to its own end. One for each such site in the order
// given, then a second, … (at most siteWindowsEach, evenly spaced over
// its occurrences), until they hold opt.MaxEvents calls and ops.
func siteWindows(ctx context.Context, x *trace.Export, t *trace.Trace, timed []sampleWindow, siteIdx [][]int, halfTime int64, opt Options) ([]sampleWindow, error) {
	var missed []int
	for s, idx := range siteIdx {
		if len(idx) > 0 && !holdsAny(timed, t.Syncs, idx) {
			missed = append(missed, s)
		}
	}
	out := timed
	var spent int64
	for j := 0; j < siteWindowsEach && spent < opt.MaxEvents; j++ {
		for _, s := range missed {
			idx := siteIdx[s]
			n := min(len(idx), siteWindowsEach)
			if j >= n || spent >= opt.MaxEvents {
				continue
			}
			sy := &t.Syncs[idx[(2*j+1)*len(idx)/(2*n)]]
			iv := t.Region.Intervals[intervalAt(t.Region.Intervals, sy.Start)]
			w := trace.Interval{Start: cutBefore(t.Syncs, sy.Start, max(sy.Start-halfTime, iv.Start)), End: sy.End}
			rows, err := x.TimelineRows(ctx, clip(t.Region.Intervals, w))
			if err != nil {
				return nil, err
			}
			out = append(out, sampleWindow{Interval: w, site: s, rows: rows})
			spent += rows
		}
	}
	return out, nil
}

// centredWindow is window i of k: around a sync of the i-th of k equal
// runs of the region's syncs, half syncs each side, moved out to the
// nearest ends of drained syncs (it may span several of the region's
// intervals), or around a point of the i-th of k equal slices of the
// region's time, halfTime each side, within its interval. The point's
// place in its run is the fractional part of (i+1) times the golden
// ratio: deterministic, and never in step with a loop whose iterations
// divide the runs evenly, as the middle of each run would be.
func centredWindow(t *trace.Trace, i, k int, half, halfTime int64) trace.Interval {
	r := t.Region
	_, u := math.Modf(float64(i+1) * 0.6180339887498949)
	at := (float64(i) + u) / float64(k) // in [0, 1)
	if n := int64(len(t.Syncs)); n > 0 {
		c := min(int64(at*float64(n)), n-1)
		first, last := &t.Syncs[max(c-half, 0)], &t.Syncs[min(c+half, n-1)]
		lo := cutBefore(t.Syncs, first.Start, first.Start-halfTime)
		hi := cutAfter(t.Syncs, last.End, min(last.End+halfTime, r.End), 1)
		return trace.Interval{Start: lo, End: max(hi, last.End)}
	}
	ivIdx, p := locate(r.Intervals, int64(at*float64(r.Duration)))
	iv := r.Intervals[ivIdx]
	return trace.Interval{Start: max(p-halfTime, iv.Start), End: min(p+halfTime, iv.End)}
}

// addWindow appends w, merged into the last window when they overlap.
func addWindow(ws []sampleWindow, w sampleWindow) []sampleWindow {
	if n := len(ws); n > 0 && w.Start < ws[n-1].End {
		ws[n-1].End = max(ws[n-1].End, w.End)
		return ws
	}
	return append(ws, w)
}

// locate returns the interval holding the point off nanoseconds into the
// region's (concatenated) time, and that point's timestamp.
func locate(ivs []trace.Interval, off int64) (int, int64) {
	for i, iv := range ivs {
		if d := iv.End - iv.Start; off < d || i == len(ivs)-1 {
			return i, iv.Start + min(off, d)
		} else {
			off -= d
		}
	}
	return 0, 0
}

// clip returns the parts of the sorted intervals inside w.
func clip(ivs []trace.Interval, w trace.Interval) []trace.Interval {
	var out []trace.Interval
	for _, iv := range ivs[intervalAt(ivs, w.Start):] {
		if iv.Start >= w.End {
			break
		}
		if lo, hi := max(iv.Start, w.Start), min(iv.End, w.End); lo < hi {
			out = append(out, trace.Interval{Start: lo, End: hi})
		}
	}
	return out
}

// intervalAt returns the index of the interval that holds t (the last one
// that starts at or before it).
func intervalAt(ivs []trace.Interval, t int64) int {
	return max(sort.Search(len(ivs), func(i int) bool { return ivs[i].Start > t })-1, 0)
}

// drained reports whether a sync returned with its process's GPU work
// done: host and GPU in step, where a window may begin or end.
func drained(s *trace.Sync) bool { return !s.Gap.DeviceBusy }

// cutBefore moves t back to the latest end of a drained sync in [floor,
// t]; t itself when there is none.
func cutBefore(syncs []trace.Sync, t, floor int64) int64 {
	best := int64(minTime)
	for j := sort.Search(len(syncs), func(j int) bool { return syncs[j].Start >= t }) - 1; j >= 0 && syncs[j].Start >= floor; j-- {
		if s := &syncs[j]; drained(s) && s.End <= t && s.End >= floor {
			best = max(best, s.End)
		}
	}
	if best == minTime {
		return t
	}
	return best
}

// cutBeforeN moves t back to the end of the nth drained sync before it,
// or of the earliest one in [floor, t]; t itself when there is none.
func cutBeforeN(syncs []trace.Sync, t, floor int64, nth int) int64 {
	best := t
	for j := sort.Search(len(syncs), func(j int) bool { return syncs[j].Start >= t }) - 1; j >= 0 && syncs[j].Start >= floor && nth > 0; j-- {
		if s := &syncs[j]; drained(s) && s.End <= t && s.End >= floor {
			best = min(best, s.End)
			nth--
		}
	}
	return best
}

// cutAfter moves t on to the end of the nth drained sync that starts at
// or after it, no later than ceil; t itself when there is none.
func cutAfter(syncs []trace.Sync, t, ceil int64, nth int) int64 {
	for j := sort.Search(len(syncs), func(j int) bool { return syncs[j].Start >= t }); j < len(syncs) && syncs[j].End <= ceil; j++ {
		if drained(&syncs[j]) {
			if nth--; nth == 0 {
				return syncs[j].End
			}
		}
	}
	return t
}

// holdsAny reports whether a sorted, disjoint list of windows holds the
// start of any of the syncs.
func holdsAny(ws []sampleWindow, syncs []trace.Sync, idx []int) bool {
	for _, si := range idx {
		at := syncs[si].Start
		k := sort.Search(len(ws), func(k int) bool { return ws[k].End > at })
		if k < len(ws) && ws[k].Start <= at {
			return true
		}
	}
	return false
}

// syncRange returns the trace syncs [lo, hi) that may have a call starting
// inside w: those that start in it and those before it that end in it
// (looked for among the few syncs just before it).
func syncRange(syncs []trace.Sync, w trace.Interval) (int, int) {
	const lookBack = 64
	lo := sort.Search(len(syncs), func(j int) bool { return syncs[j].Start >= w.Start })
	hi := sort.Search(len(syncs), func(j int) bool { return syncs[j].Start >= w.End })
	first := lo
	for j := lo - 1; j >= 0 && j >= lo-lookBack; j-- {
		if syncs[j].End > w.Start {
			first = j
		}
	}
	// A window that ends before it starts (times at the int64 limits of a
	// damaged export) holds no sync, and must not give hi < first.
	return first, max(first, hi)
}
