package trace

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"

	"golang.org/x/sync/errgroup"
)

// gpuOp is one kernel, memcpy, memset or graph launch as the scan sees it.
type gpuOp struct {
	start, end, device, context, stream, corr, pid int64
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
		g.idx = uniqueInts(g.idx)
		sort.Slice(g.idx, func(a, b int) bool { return syncs[g.idx[a]].End < syncs[g.idx[b]].End })
		g.ends = make([]int64, len(g.idx))
		for j, i := range g.idx {
			g.ends[j] = syncs[i].End
		}
	}
	return ix
}

func uniqueInts(in []int) []int {
	seen := map[int]bool{}
	out := in[:0]
	for _, v := range in {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
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

// add folds one GPU op into the accumulator.
func (ix *opIndex) add(a *accum, op gpuOp) {
	a.ops++
	a.start = min(a.start, op.start)
	a.end = max(a.end, op.end)
	for _, list := range ix.threads[op.pid] {
		// Syncs of one thread do not overlap: find the last one that began
		// before the op ended and walk back while they still overlap it.
		k := sort.Search(len(list), func(i int) bool { return ix.syncs[list[i]].Start >= op.end }) - 1
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
	for _, key := range [2][2]int64{{op.pid, op.device}, {op.pid, -1}} {
		g := ix.groups[key]
		if g == nil {
			continue
		}
		// The op starts after the returns ends[0..j]: it bounds their next start.
		if j := sort.Search(len(g.ends), func(i int) bool { return g.ends[i] > op.start }) - 1; j >= 0 {
			a.next[key][j] = min(a.next[key][j], op.start)
		}
		// The op ended before the returns ends[j..]: it bounds their previous end.
		if j := sort.Search(len(g.ends), func(i int) bool { return g.ends[i] >= op.end }); j < len(g.ends) {
			a.prev[key][j] = max(a.prev[key][j], op.end)
		}
		// The op runs across the returns in (start, end).
		lo := sort.Search(len(g.ends), func(i int) bool { return g.ends[i] > op.start })
		hi := sort.Search(len(g.ends), func(i int) bool { return g.ends[i] >= op.end })
		if lo < hi {
			a.busy[key][lo]++
			a.busy[key][hi]--
		}
	}
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
		return (s.Context < 0 || op.context == s.Context) && !ix.si.nonBlocking[streamKey{PidOf(op.pid), op.context, op.stream}]
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
	for key := range a.next {
		for j := range a.next[key] {
			a.next[key][j] = min(a.next[key][j], b.next[key][j])
			a.prev[key][j] = max(a.prev[key][j], b.prev[key][j])
		}
		for j := range a.busy[key] {
			a.busy[key][j] += b.busy[key][j]
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
	var parts []string
	for _, t := range []string{tableKernel, tableMemcpy, tableMemset, tableGraphTrace} {
		if !s.HasColumn(t, "start") || !s.HasColumn(t, "streamId") {
			continue
		}
		var maxRowid int64
		v, dest := nullInts(1)
		if _, err := x.scanRows(ctx, "sizing "+t, fmt.Sprintf(`SELECT max(rowid) FROM %s`, s.Name(t)), dest, func() error { return nil }); err != nil {
			return nil, err
		}
		maxRowid = v[0].Int64
		n := int64(runtime.GOMAXPROCS(0))
		step := maxRowid/n + 1
		base := fmt.Sprintf(`SELECT start, "end", deviceId, %s, streamId, %s, %s FROM %s`,
			s.col(t, "contextId", "0"), s.col(t, "correlationId", "0"), s.col(t, "globalPid", "0"), s.Name(t))
		for lo := int64(0); lo <= maxRowid; lo += step {
			parts = append(parts, fmt.Sprintf(`%s WHERE rowid BETWEEN %d AND %d`, base, lo, lo+step-1))
		}
	}
	accs := make([]*accum, len(parts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, q := range parts {
		g.Go(func() error {
			a := ix.newAccum()
			accs[i] = a
			v, dest := nullInts(7)
			_, err := x.scanRows(gctx, "reading GPU activity", q, dest, func() error {
				ix.add(a, gpuOp{start: v[0].Int64, end: v[1].Int64, device: v[2].Int64, context: v[3].Int64,
					stream: v[4].Int64, corr: v[5].Int64, pid: v[6].Int64})
				return nil
			})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	total := ix.newAccum()
	for _, a := range accs {
		total.merge(a)
	}
	ix.finish(total)
	return total, nil
}
