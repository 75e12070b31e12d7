package estimate

// handOffMinGapNs: a thread idle at least this long before a call may have
// been waiting on the host for another thread.
const handOffMinGapNs = 20_000

// addHandOffs finds host hand-offs between threads of a process: a thread
// resumes after an idle gap right after another thread made its last call
// before going idle itself (PyTorch's autograd thread runs backward while
// the main thread waits, then hands back). The replay then starts the
// resumed call a recorded lag after the other thread's call, so time saved
// on one thread carries over to the other.
func (m *model) addHandOffs() {
	if m.threads < 2 {
		return
	}
	prev := make([]int32, len(m.calls))
	next := make([]int32, len(m.calls))
	last := make([]int32, m.threads)
	for t := range last {
		last[t] = noIndex
	}
	for i := range m.calls {
		th := m.calls[i].thread
		prev[i], next[i] = last[th], noIndex
		if last[th] >= 0 {
			next[last[th]] = int32(i)
		}
		last[th] = int32(i)
	}
	siblings := map[int64][]int32{} // globalPid -> its threads
	for t, pid := range m.threadPids {
		siblings[pid] = append(siblings[pid], int32(t))
	}
	for t := range last {
		last[t] = noIndex
	}
	for i := range m.calls {
		c := &m.calls[i]
		if !c.first && c.gap >= handOffMinGapNs {
			m.linkHandOff(c, prev, next, last, siblings[m.threadPids[c.thread]])
		}
		last[c.thread] = int32(i)
	}
}

// linkHandOff looks, among the other threads' latest calls, for the one
// that ended last inside c's idle gap and after which its thread stayed
// idle past c's start.
func (m *model) linkHandOff(c *simCall, prev, next, last []int32, threads []int32) {
	idleFrom := c.start - c.gap
	best, bestEnd := noIndex, idleFrom
	for _, u := range threads {
		if u == c.thread {
			continue
		}
		j := last[u]
		for steps := 0; j >= 0 && steps < 4 && m.calls[j].end > c.start; steps++ {
			j = prev[j] // a call still running when c began
		}
		if j >= 0 && m.calls[j].end <= c.start && m.calls[j].end > bestEnd {
			best, bestEnd = j, m.calls[j].end
		}
	}
	if best < 0 {
		return
	}
	if n := next[best]; n >= 0 && m.calls[n].start < c.start {
		return // the other thread went on working: no hand-off
	}
	c.dep, c.lag = best, c.start-bestEnd
}

// addSyncHostCode measures, for each sync, the host time of the code that
// issues it: how much the gaps before its first call and after its last
// call exceed the thread's typical gap between two launches (typical, by
// globalTid), at most one typical gap on each side. Removing the sync
// removes that code too.
func (m *model) addSyncHostCode(typicalByTid map[int64]int64) {
	typical := make([]int64, m.threads)
	for th, tid := range m.threadTids {
		typical[th] = typicalByTid[tid]
	}
	anchorEnd := make([]int64, m.threads)
	pending := make([]int32, m.threads) // sync waiting for its next anchor
	for t := range anchorEnd {
		anchorEnd[t], pending[t] = minTime, noIndex
	}
	clamp := func(excess, typ int64) int64 { return min(max(excess-typ, 0), typ) }
	defer m.keepRewriteHostCode()
	for i := range m.calls {
		c := &m.calls[i]
		th := c.thread
		isLaunch := c.opHi > c.opLo && m.ops[c.opLo].launched
		if !isLaunch && c.sync < 0 {
			continue
		}
		typ := typical[th]
		if p := pending[th]; p >= 0 && (c.sync < 0 || c.syncFirst) {
			ss := &m.syncs[p]
			ss.cutAfter = clamp(c.start-m.calls[ss.calls[len(ss.calls)-1]].end, typ)
			pending[th] = noIndex
		}
		if c.syncFirst && anchorEnd[th] != minTime {
			m.syncs[c.sync].cutBefore = clamp(c.start-anchorEnd[th], typ)
		}
		anchorEnd[th] = c.end
		if c.sync >= 0 {
			pending[th] = c.sync
		}
	}
}

// launchGaps appends, per thread (by globalTid), the host time between
// two consecutive launches with no sync between them, the second in the
// region (in): the samples of the thread's typical gap, their median (0
// when fewer than 3).
func (m *model) launchGaps(in []bool, byTid map[int64][]int64) {
	lastEnd := make([]int64, m.threads)
	for t := range lastEnd {
		lastEnd[t] = minTime
	}
	for i := range m.calls {
		c := &m.calls[i]
		if c.sync >= 0 {
			lastEnd[c.thread] = minTime
			continue
		}
		if c.opHi == c.opLo || !m.ops[c.opLo].launched {
			continue
		}
		if lastEnd[c.thread] != minTime && in[i] {
			tid := m.threadTids[c.thread]
			byTid[tid] = append(byTid[tid], c.start-lastEnd[c.thread])
		}
		lastEnd[c.thread] = c.end
	}
}

// shareHostCode gives every sync of a site the site's median host code on
// each side, so that one occurrence next to unrelated host work (a Python
// pause, data loading) does not count as the site's own.
func (m *model) shareHostCode(syncs []int) {
	if len(syncs) < 2 {
		return
	}
	before := make([]int64, len(syncs))
	after := make([]int64, len(syncs))
	for k, i := range syncs {
		before[k], after[k] = m.syncs[i].cutBefore, m.syncs[i].cutAfter
	}
	b, a := median(before), median(after)
	for _, i := range syncs {
		m.syncs[i].cutBefore, m.syncs[i].cutAfter = b, a
	}
}

// keepRewriteHostCode zeroes the host code of syncs whose sync-free
// rewrite keeps work on the host (a cross-stream wait, an asynchronous
// copy): the rewrite's own code takes about as long.
func (m *model) keepRewriteHostCode() {
	for i := range m.syncs {
		ss := &m.syncs[i]
		keeps := ss.extraCost > 0
		for _, c := range ss.calls {
			keeps = keeps || m.calls[c].keepOps
		}
		if keeps {
			ss.cutBefore, ss.cutAfter = 0, 0
		}
	}
}
