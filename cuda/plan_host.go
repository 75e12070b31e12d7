package cuda

import "github.com/nsyssync/nsyssync/trace"

// Host-side rules of a plan. They follow the simulator's (package
// estimate), so that the replay and the simulator differ only in what the
// replay measures: the GPU and the driver.

// hostCut is the host time of the code that issues a sync, before its
// first call and after its last: removing the sync removes that code too.
type hostCut struct{ before, after int64 }

// handOff: a call that waited on the host for another thread (PyTorch's
// autograd thread runs backward while the main thread waits, then hands
// back) starts lag after that thread's call dep ended.
type handOff struct {
	dep int
	lag int64
}

const (
	// handOffMinGapNs: a thread idle at least this long before a call may
	// have been waiting on the host for another thread.
	handOffMinGapNs = 20_000
	// handOffLookBack bounds the calls searched for a hand-off's origin.
	handOffLookBack = 512
)

// syncCalls returns, per sync, its call indices in time order.
func (b *planBuilder) syncCalls() map[int][]int {
	out := map[int][]int{}
	for ci := range b.calls {
		if si, ok := b.syncOf[ci]; ok {
			out[si] = append(out[si], ci)
		}
	}
	return out
}

// hostCode measures, for each removed sync, how much the host gaps before
// its first call and after its last exceed the thread's typical gap
// between two launches (at most one typical gap on each side), and gives
// every sync of a group the group's median.
func (b *planBuilder) hostCode() map[int]hostCut {
	if b.opt.KeepHostCode || len(b.removed) == 0 {
		return nil
	}
	typical := b.typicalLaunchGaps()
	calls := b.syncCalls()
	clamp := func(gap, typ int64) int64 { return min(max(gap-typ, 0), typ) }
	raw := map[int]hostCut{}
	anchorEnd := map[int64]int64{}
	pending := map[int64]int{}
	for ci, c := range b.calls {
		si, isSync := b.syncOf[ci]
		if !isSync && len(b.opsOf[ci]) == 0 {
			continue
		}
		tid, typ := c.GlobalTid, typical[c.GlobalTid]
		first := isSync && calls[si][0] == ci
		if p, ok := pending[tid]; ok && (!isSync || first) {
			list := calls[p]
			hc := raw[p]
			hc.after = clamp(c.Start-b.calls[list[len(list)-1]].End, typ)
			raw[p] = hc
			delete(pending, tid)
		}
		if end, ok := anchorEnd[tid]; ok && first {
			hc := raw[si]
			hc.before = clamp(c.Start-end, typ)
			raw[si] = hc
		}
		anchorEnd[tid] = c.End
		if isSync {
			pending[tid] = si
		}
	}
	groups := map[int][]int{}
	for si, g := range b.removed {
		groups[g] = append(groups[g], si)
	}
	out := map[int]hostCut{}
	for _, syncs := range groups {
		var before, after []int64
		for _, si := range syncs {
			before, after = append(before, raw[si].before), append(after, raw[si].after)
		}
		shared := hostCut{before: median(before), after: median(after)}
		for _, si := range syncs {
			out[si] = shared
		}
	}
	return out
}

// typicalLaunchGaps returns, per thread, the median host time between two
// consecutive launches with no sync between them; 0 when too few.
func (b *planBuilder) typicalLaunchGaps() map[int64]int64 {
	spans := map[int64][]int64{}
	lastEnd := map[int64]int64{}
	for ci, c := range b.calls {
		tid := c.GlobalTid
		if _, isSync := b.syncOf[ci]; isSync {
			delete(lastEnd, tid)
			continue
		}
		if len(b.opsOf[ci]) == 0 {
			continue
		}
		if end, ok := lastEnd[tid]; ok {
			spans[tid] = append(spans[tid], c.Start-end)
		}
		lastEnd[tid] = c.End
	}
	out := map[int64]int64{}
	for tid, s := range spans {
		if len(s) >= 3 {
			out[tid] = median(s)
		}
	}
	return out
}

// handOffs finds host hand-offs between threads of a process: a thread
// resumes after an idle gap right after another thread made its last call
// before going idle itself.
func (b *planBuilder) handOffs() map[int]handOff {
	next := make([]int, len(b.calls))
	last := map[int64]int{}
	for i := len(b.calls) - 1; i >= 0; i-- {
		tid := b.calls[i].GlobalTid
		next[i] = -1
		if n, ok := last[tid]; ok {
			next[i] = n
		}
		last[tid] = i
	}
	if len(last) < 2 {
		return nil
	}
	out := map[int]handOff{}
	lastEnd := map[int64]int64{}
	for i, c := range b.calls {
		end, seen := lastEnd[c.GlobalTid]
		lastEnd[c.GlobalTid] = max(end, c.End)
		if !seen || c.Start-end < handOffMinGapNs {
			continue
		}
		pid := trace.GlobalPidOf(c.GlobalTid)
		best, bestEnd := -1, end
		for j := i - 1; j >= 0 && i-j <= handOffLookBack; j-- {
			d := &b.calls[j]
			if d.GlobalTid == c.GlobalTid || trace.GlobalPidOf(d.GlobalTid) != pid {
				continue
			}
			if d.End <= c.Start && d.End > bestEnd {
				best, bestEnd = j, d.End
			}
		}
		if best < 0 {
			continue
		}
		if n := next[best]; n >= 0 && b.calls[n].Start < c.Start {
			continue // the other thread went on working: no hand-off
		}
		out[i] = handOff{dep: best, lag: c.Start - bestEnd}
	}
	return out
}
