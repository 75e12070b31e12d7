package whatif

import (
	"math"

	"github.com/nsyssync/nsyssync/trace"
)

// noTime is "no call yet", safe to add small values to.
const noTime = math.MinInt64 / 4

// Cut is the host time of the code that issues a sync, in the gaps before
// its first call and after its last: removing the sync removes that code
// too.
type Cut struct{ Before, After int64 }

// LaunchGaps appends, per thread (by globalTid), the host time between two
// consecutive launches with no sync between them, the second in the
// region (in[i]; nil: every call): the samples of the thread's typical
// gap.
func (h *Host) LaunchGaps(in []bool, byTid map[trace.GlobalTid][]int64) {
	lastEnd := make([]int64, len(h.Threads))
	for t := range lastEnd {
		lastEnd[t] = noTime
	}
	for i := range h.Calls {
		c := &h.Calls[i]
		if c.Sync >= 0 {
			lastEnd[c.Thread] = noTime
			continue
		}
		if !c.Launch {
			continue
		}
		if lastEnd[c.Thread] != noTime && (in == nil || in[i]) {
			tid := h.Threads[c.Thread].Tid
			byTid[tid] = append(byTid[tid], c.Start-lastEnd[c.Thread])
		}
		lastEnd[c.Thread] = c.End
	}
}

// TypicalGaps returns, per globalTid, the median of its launch gaps; a
// thread with fewer than 3 has none (0).
func TypicalGaps(byTid map[trace.GlobalTid][]int64, rule MedianRule) map[trace.GlobalTid]int64 {
	out := make(map[trace.GlobalTid]int64, len(byTid))
	for tid, xs := range byTid {
		if len(xs) >= 3 {
			out[tid] = Median(xs, rule)
		}
	}
	return out
}

// HostCode measures, for each sync, the host time of the code that issues
// it: how much the gaps before its first call and after its last exceed
// the thread's typical gap between two launches (typical, by globalTid),
// at most one typical gap on each side. The gap before is from the
// thread's previous launch or sync call, the gap after to its next.
func (h *Host) HostCode(typicalByTid map[trace.GlobalTid]int64) []Cut {
	cuts := make([]Cut, len(h.SyncCalls))
	typical := make([]int64, len(h.Threads))
	for th, t := range h.Threads {
		typical[th] = typicalByTid[t.Tid]
	}
	anchorEnd := make([]int64, len(h.Threads))
	pending := make([]int32, len(h.Threads)) // sync waiting for its next anchor
	for t := range anchorEnd {
		anchorEnd[t], pending[t] = noTime, noIndex
	}
	clamp := func(excess, typ int64) int64 { return min(max(excess-typ, 0), typ) }
	for i := range h.Calls {
		c := &h.Calls[i]
		th := c.Thread
		if !c.Launch && c.Sync < 0 {
			continue
		}
		typ := typical[th]
		if p := pending[th]; p >= 0 && (c.Sync < 0 || c.SyncFirst) {
			calls := h.SyncCalls[p]
			cuts[p].After = clamp(c.Start-h.Calls[calls[len(calls)-1]].End, typ)
			pending[th] = noIndex
		}
		if c.SyncFirst && anchorEnd[th] != noTime {
			cuts[c.Sync].Before = clamp(c.Start-anchorEnd[th], typ)
		}
		anchorEnd[th] = c.End
		if c.Sync >= 0 {
			pending[th] = c.Sync
		}
	}
	return cuts
}

// ShareCut is the host code every sync of a site is given: the median of
// its syncs' on each side, so that one occurrence next to unrelated host
// work (a Python pause, data loading) does not count as the site's own.
// before and after are reordered.
func ShareCut(before, after []int64, rule MedianRule) Cut {
	return Cut{Before: Median(before, rule), After: Median(after, rule)}
}

// KeepsHostCode says whether a removed sync's host code stays: it does
// when the sync-free rewrite keeps work on the host — ordering other
// streams after the awaited work (wait_stream, wait_event: orders) or a
// host-to-device copy made asynchronous (pin_memory: asyncCopy) — as
// that code takes about as long as the sync's did.
func KeepsHostCode(orders, asyncCopy bool) bool {
	return orders || asyncCopy
}
