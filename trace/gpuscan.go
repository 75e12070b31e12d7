package trace

import (
	"context"
	"database/sql"
	"math"
	"runtime"
	"slices"
	"sort"
)

// gpuOp is one kernel, memcpy, memset or graph launch as the scan sees it.
type gpuOp struct {
	start, end, device, stream, corr, pid int64
}

// opIndex answers, for each GPU op streamed past it, which syncs it
// concerns. It is built once from the syncs and read concurrently; each
// scanning goroutine writes only its own accumulator.
type opIndex struct {
	syncs   []Sync
	si      *streamInfo
	threads map[int64][][]int // globalPid -> per-thread sync indices sorted by Start
	groups  map[[2]int64]*gapGroup
}

// gapGroup holds the syncs of one (globalPid, device) — device -1 for all
// devices of the process — sorted by their return time.
type gapGroup struct {
	ends []int64
	idx  []int
}

// accum is one goroutine's partial result; accumulators merge by min, max
// and sum, so the scan order does not matter.
type accum struct {
	waited     []Waited
	next       map[[2]int64][]int64 // group -> earliest op start at or after end[j]
	prev       map[[2]int64][]int64 // group -> latest op end at or before end[j]
	busy       map[[2]int64][]int32 // group -> difference array of ops running at end[j]
	ops        int64
	start, end int64
}

func newOpIndex(syncs []Sync, si *streamInfo) *opIndex {
	ix := &opIndex{syncs: syncs, si: si, threads: map[int64][][]int{}, groups: map[[2]int64]*gapGroup{}}
	byThread := map[int64][]int{}
	for i := range syncs {
		s := &syncs[i]
		byThread[s.GlobalTid] = append(byThread[s.GlobalTid], i)
		for _, key := range [][2]int64{{s.GlobalPid, s.Device}, {s.GlobalPid, -1}} {
			g := ix.groups[key]
			if g == nil {
				g = &gapGroup{}
				ix.groups[key] = g
			}
			g.idx = append(g.idx, i)
		}
	}
	for tid, list := range byThread {
		sort.Slice(list, func(a, b int) bool { return syncs[list[a]].Start < syncs[list[b]].Start })
		ix.threads[pidOf(tid)] = append(ix.threads[pidOf(tid)], list)
	}
	for _, g := range ix.groups {
		g.idx = slices.Compact(g.idx) // appended in increasing order: repeats are adjacent
		sort.Slice(g.idx, func(a, b int) bool { return syncs[g.idx[a]].End < syncs[g.idx[b]].End })
		g.ends = make([]int64, len(g.idx))
		for j, i := range g.idx {
			g.ends[j] = syncs[i].End
		}
	}
	return ix
}

func (ix *opIndex) newAccum() *accum {
	a := &accum{waited: make([]Waited, len(ix.syncs)), next: map[[2]int64][]int64{}, prev: map[[2]int64][]int64{},
		busy: map[[2]int64][]int32{}, start: math.MaxInt64, end: math.MinInt64}
	for i := range a.waited {
		a.waited[i].FirstStart = math.MaxInt64
		a.waited[i].LastEnd = math.MinInt64
	}
	for key, g := range ix.groups {
		n := len(g.ends)
		next, prev := make([]int64, n), make([]int64, n)
		for j := range next {
			next[j], prev[j] = math.MaxInt64, math.MinInt64
		}
		a.next[key], a.prev[key], a.busy[key] = next, prev, make([]int32, n+1)
	}
	return a
}

// cursor remembers, per scanning goroutine, the last process's lists and
// the last positions found in them: ops come in near time order, so the
// next answer is almost always a step or two away.
type cursor struct {
	pid     int64
	threads [][]int
	hints   []int
	groups  [2]*gapGroup
	gkeys   [2][2]int64
	ghint   [2][3]int
	// The accumulator's slices of the current groups, so that an op costs
	// no map lookup.
	gnext, gprev [2][]int64
	gbusy        [2][]int32
}

// add folds one GPU op into the accumulator.
func (ix *opIndex) add(a *accum, cur *cursor, op gpuOp) {
	a.ops++
	a.start = min(a.start, op.start)
	a.end = max(a.end, op.end)
	if cur.threads == nil || cur.pid != op.pid {
		cur.pid = op.pid
		cur.threads = ix.threads[op.pid]
		cur.hints = make([]int, len(cur.threads))
		cur.groups = [2]*gapGroup{}
	}
	for t, list := range cur.threads {
		// Syncs of one thread do not overlap: find the last one that began
		// before the op ended and walk back while they still overlap it.
		k := seek(len(list), cur.hints[t], func(i int) bool { return ix.syncs[list[i]].Start >= op.end }) - 1
		cur.hints[t] = max(k, 0)
		for ; k >= 0; k-- {
			s := &ix.syncs[list[k]]
			if s.End <= op.start {
				break
			}
			if op.corr < s.waitCorr && ix.inScope(s, op) {
				w := &a.waited[list[k]]
				w.Ops++
				w.BusyNs += min(op.end, s.End) - max(op.start, s.Start)
				w.FirstStart = min(w.FirstStart, op.start)
				w.LastEnd = max(w.LastEnd, op.end)
			}
		}
	}
	for gi, key := range [2][2]int64{{op.pid, op.device}, {op.pid, -1}} {
		if cur.groups[gi] == nil || cur.gkeys[gi] != key {
			cur.groups[gi], cur.gkeys[gi], cur.ghint[gi] = ix.groups[key], key, [3]int{}
			cur.gnext[gi], cur.gprev[gi], cur.gbusy[gi] = a.next[key], a.prev[key], a.busy[key]
		}
		g := cur.groups[gi]
		if g == nil {
			continue
		}
		h := &cur.ghint[gi]
		n := len(g.ends)
		// The op starts after the returns ends[0..j]: it bounds their next start.
		lo := seek(n, h[0], func(i int) bool { return g.ends[i] > op.start })
		h[0] = lo
		if j := lo - 1; j >= 0 {
			cur.gnext[gi][j] = min(cur.gnext[gi][j], op.start)
		}
		// The op ended before the returns ends[j..]: it bounds their previous end.
		hi := seek(n, h[1], func(i int) bool { return g.ends[i] >= op.end })
		h[1] = hi
		if hi < n {
			cur.gprev[gi][hi] = max(cur.gprev[gi][hi], op.end)
		}
		// The op runs across the returns in (start, end).
		if lo < hi {
			cur.gbusy[gi][lo]++
			cur.gbusy[gi][hi]--
		}
	}
}

// seek returns the smallest i in [0, n) with f(i) true (n if none), for a
// monotone f, searching outward from hint: a galloping search that costs
// O(log d) for an answer d steps from the hint.
func seek(n, hint int, f func(int) bool) int {
	hint = min(max(hint, 0), n)
	if hint < n && !f(hint) { // answer is after hint
		lo, step := hint+1, 1
		for lo+step-1 < n && !f(lo+step-1) {
			lo += step
			step *= 2
		}
		hi := min(lo+step-1, n)
		return lo + sort.Search(hi-lo, func(i int) bool { return f(lo + i) })
	}
	// f(hint) is true (or hint == n): answer is at or before hint
	hi, step := hint, 1
	for hi-step >= 0 && f(hi-step) {
		hi -= step
		step *= 2
	}
	lo := max(hi-step, 0)
	return lo + sort.Search(hi-lo, func(i int) bool { return f(lo + i) })
}

// inScope reports whether the sync waited on the op's stream.
func (ix *opIndex) inScope(s *Sync, op gpuOp) bool {
	if s.Device >= 0 && op.device != s.Device {
		return false
	}
	switch {
	case s.Scope == ScopeContext:
		return true
	case s.Legacy:
		// The legacy stream waits for every blocking stream of its device.
		return !ix.si.nonBlocking[[2]int64{PidOf(op.pid), op.stream}]
	}
	return op.stream == s.Stream
}

func (a *accum) merge(b *accum) {
	a.ops += b.ops
	a.start, a.end = min(a.start, b.start), max(a.end, b.end)
	for i := range a.waited {
		w, v := &a.waited[i], b.waited[i]
		w.Ops += v.Ops
		w.BusyNs += v.BusyNs
		w.FirstStart, w.LastEnd = min(w.FirstStart, v.FirstStart), max(w.LastEnd, v.LastEnd)
	}
	for key, next := range a.next {
		prev, busy := a.prev[key], a.busy[key]
		bnext, bprev, bbusy := b.next[key], b.prev[key], b.busy[key]
		for j := range next {
			next[j] = min(next[j], bnext[j])
			prev[j] = max(prev[j], bprev[j])
		}
		for j := range busy {
			busy[j] += bbusy[j]
		}
	}
}

// finish writes the waited work and the gaps into the syncs.
func (ix *opIndex) finish(a *accum) {
	for i := range ix.syncs {
		w := a.waited[i]
		if w.Ops == 0 {
			w.FirstStart, w.LastEnd = 0, 0
		}
		ix.syncs[i].Waited = w
	}
	for key, g := range ix.groups {
		if key[1] == -1 {
			continue // filled below from the device group when known
		}
		ix.fillGaps(key, g, a)
	}
	for key, g := range ix.groups {
		if key[1] == -1 {
			ix.fillGaps(key, g, a)
		}
	}
}

func (ix *opIndex) fillGaps(key [2]int64, g *gapGroup, a *accum) {
	n := len(g.ends)
	next, prev, busy := a.next[key], a.prev[key], a.busy[key]
	for j := n - 2; j >= 0; j-- { // suffix min
		next[j] = min(next[j], next[j+1])
	}
	for j := 1; j < n; j++ { // prefix max
		prev[j] = max(prev[j], prev[j-1])
	}
	var running int32
	for j, i := range g.idx {
		running += busy[j]
		s := &ix.syncs[i]
		if (key[1] == -1) != (s.Device < 0) {
			continue // each sync takes its own device's group
		}
		gap := Gap{DeviceBusy: running > 0, IdleAfterNs: -1}
		if !gap.DeviceBusy {
			if next[j] != math.MaxInt64 {
				gap.IdleAfterNs = next[j] - s.End
			}
			if prev[j] != math.MinInt64 {
				gap.IdleBeforeNs = s.End - prev[j]
			}
		}
		s.Gap = gap
	}
}

// scanGPU streams the kernel, memcpy, memset and graph tables through the
// index, split by rowid ranges over the available cores. Graph launches
// traced at graph level (the default) have a GRAPH_TRACE row instead of
// kernel rows.
func (x *Export) scanGPU(ctx context.Context, ix *opIndex) (*accum, error) {
	s := x.Schema
	// One accumulator per worker, not per part: accumulators are as large
	// as the inventory. The tables are scanned one after the other, each
	// on all workers.
	accs := make([]*accum, runtime.GOMAXPROCS(0))
	for _, t := range []string{tableKernel, tableMemcpy, tableMemset, tableGraphTrace} {
		if !s.HasColumn(t, "start") || !s.HasColumn(t, "streamId") {
			continue
		}
		scan := intScan{what: "reading GPU activity", table: t,
			cols: []intCol{col("start"), col("end"), col("deviceId"), col("streamId"), colOr("correlationId", 0), colOr("globalPid", 0)}}
		_, err := x.scanInts(ctx, scan, func(w, _ int) func(v []sql.NullInt64) error {
			if accs[w] == nil {
				accs[w] = ix.newAccum()
			}
			a, cur := accs[w], &cursor{}
			return func(v []sql.NullInt64) error {
				ix.add(a, cur, gpuOp{start: v[0].Int64, end: v[1].Int64, device: v[2].Int64, stream: v[3].Int64,
					corr: v[4].Int64, pid: v[5].Int64})
				return nil
			}
		})
		if err != nil {
			return nil, err
		}
	}
	accs = slices.DeleteFunc(accs, func(a *accum) bool { return a == nil })
	if len(accs) == 0 {
		accs = append(accs, ix.newAccum())
	}
	total := accs[0]
	for _, a := range accs[1:] {
		total.merge(a)
	}
	ix.finish(total)
	return total, nil
}
