package trace

import (
	"context"
	"database/sql"
	"math"
	"runtime"
	"sort"
	"sync/atomic"
)

// gpuLoader streams the GPU ops (kernels, copies, memsets, graphs) once
// through the per-sync accumulators of an opIndex. It reads through the export's source.
type gpuLoader struct{ *source }

// gpuOp is one kernel, memcpy, memset or graph launch as the scan sees it.
type gpuOp struct {
	start, end int64
	device     DeviceID
	stream     StreamID
	corr       int64
	pid        GlobalPid
	// What Sync.GPUBefore and GPUAfter name it by: a kernel's name id
	// (-1 when none), a copy's or memset's bytes and a copy's direction.
	name, bytes int64
	copyKind    int64
	kind        GPUOpKind
}

// opIndex answers, for each GPU op streamed past it, which syncs it
// concerns, and sums up what the ops say about each sync. The scanning
// goroutines share it: every update is an atomic sum, minimum or maximum,
// so the result does not depend on the order the ops arrive in, and memory
// holds one set of sums however many cores scan (a set is as large as the
// inventory's syncs; one per core was the largest live heap of Load).
type opIndex struct {
	syncs   []Sync
	si      *streamInfo
	threads map[GlobalPid][][]int32 // per-thread sync indices sorted by Start
	groups  map[deviceKey]*gapGroup
	waited  []waitSums // by sync index
	// nb finds the ops just before and after each sync on its stream;
	// nil when no sync has a stream.
	nb *neighbourIndex
}

// waitSums is the work of one sync's wait: the ops it waited for, their
// time inside the wait, the first start and the last end.
type waitSums struct {
	ops, busyNs, firstStart, lastEnd atomic.Int64
}

// gapGroup holds the syncs of one (globalPid, device), sorted by their
// return time, and what the ops of that device say about each return. A
// sync whose device is unknown is in the group of device -1, which sees
// the ops of every device of the process.
type gapGroup struct {
	ends []int64
	idx  []int32
	next []atomic.Int64 // earliest op start at or after ends[j]
	prev []atomic.Int64 // latest op end at or before ends[j]
	busy []atomic.Int32 // difference array of the ops running at ends[j]
}

// gapKey is the group of a sync.
func gapKey(s *Sync) deviceKey {
	if s.Device < 0 {
		return deviceKey{s.GlobalPid, NoDevice}
	}
	return deviceKey{s.GlobalPid, s.Device}
}

// deviceKey is a process's device (NoDevice: the syncs of an unknown one).
type deviceKey struct {
	pid    GlobalPid
	device DeviceID
}

func newOpIndex(syncs []Sync, si *streamInfo) *opIndex {
	ix := &opIndex{syncs: syncs, si: si, threads: map[GlobalPid][][]int32{}, groups: map[deviceKey]*gapGroup{},
		waited: make([]waitSums, len(syncs))}
	// The neighbour index is built on another core meanwhile.
	nbDone := make(chan *neighbourIndex)
	go func() { nbDone <- newNeighbourIndex(syncs) }()
	byThread := map[GlobalTid][]int32{}
	for i := range syncs {
		s := &syncs[i]
		byThread[s.GlobalTid] = append(byThread[s.GlobalTid], int32(i))
		key := gapKey(s)
		g := ix.groups[key]
		if g == nil {
			g = &gapGroup{}
			ix.groups[key] = g
		}
		g.idx = append(g.idx, int32(i))
		ix.waited[i].firstStart.Store(math.MaxInt64)
		ix.waited[i].lastEnd.Store(math.MinInt64)
	}
	for tid, list := range byThread {
		sort.Slice(list, func(a, b int) bool { return syncs[list[a]].Start < syncs[list[b]].Start })
		ix.threads[tid.Process()] = append(ix.threads[tid.Process()], list)
	}
	for _, g := range ix.groups {
		sort.Slice(g.idx, func(a, b int) bool { return syncs[g.idx[a]].End < syncs[g.idx[b]].End })
		n := len(g.idx)
		g.ends = make([]int64, n)
		g.next, g.prev, g.busy = make([]atomic.Int64, n), make([]atomic.Int64, n), make([]atomic.Int32, n+1)
		for j, i := range g.idx {
			g.ends[j] = syncs[i].End
			g.next[j].Store(math.MaxInt64)
			g.prev[j].Store(math.MinInt64)
		}
	}
	ix.nb = <-nbDone
	return ix
}

// cursor remembers, per scanning goroutine, the last process's lists and
// the last positions found in them: ops come in near time order, so the
// next answer is almost always a step or two away.
type cursor struct {
	pid     GlobalPid
	threads [][]int32
	hints   []int
	groups  [2]*gapGroup
	gkeys   [2]deviceKey
	ghint   [2][2]int
	nb      neighbourCursor
}

// add folds one GPU op into the index's sums and the goroutine's span.
func (ix *opIndex) add(span *gpuSpan, cur *cursor, op gpuOp) {
	span.ops++
	span.start = min(span.start, op.start)
	span.end = max(span.end, op.end)
	if op.kind == GPUKernel || op.kind == GPUGraph {
		span.noteKernel(ProcessDevice{op.pid, op.device}, op.start)
	}
	if ix.nb != nil {
		ix.nb.add(&cur.nb, &op)
	}
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
				w := &ix.waited[list[k]]
				w.ops.Add(1)
				w.busyNs.Add(min(op.end, s.End) - max(op.start, s.Start))
				lowerTo(&w.firstStart, op.start)
				raiseTo(&w.lastEnd, op.end)
			}
		}
	}
	keys := [2]deviceKey{{op.pid, op.device}, {op.pid, NoDevice}}
	for gi, key := range keys {
		if gi == 1 && key == keys[0] {
			break // an op of unknown device: its group is the first
		}
		if cur.groups[gi] == nil || cur.gkeys[gi] != key {
			cur.groups[gi], cur.gkeys[gi], cur.ghint[gi] = ix.groups[key], key, [2]int{}
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
			lowerTo(&g.next[j], op.start)
		}
		// The op ended before the returns ends[j..]: it bounds their previous end.
		hi := seek(n, h[1], func(i int) bool { return g.ends[i] >= op.end })
		h[1] = hi
		if hi < n {
			raiseTo(&g.prev[hi], op.end)
		}
		// The op runs across the returns in (start, end).
		if lo < hi {
			g.busy[lo].Add(1)
			g.busy[hi].Add(-1)
		}
	}
}

// lowerTo sets a to min(a, v).
func lowerTo(a *atomic.Int64, v int64) {
	for old := a.Load(); v < old; old = a.Load() {
		if a.CompareAndSwap(old, v) {
			return
		}
	}
}

// raiseTo sets a to max(a, v).
func raiseTo(a *atomic.Int64, v int64) {
	for old := a.Load(); v > old; old = a.Load() {
		if a.CompareAndSwap(old, v) {
			return
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
		return !ix.si.nonBlocking[[2]int64{op.pid.Pid(), int64(op.stream)}]
	}
	return op.stream == s.Stream
}

// finish writes the waited work and the gaps into the syncs.
func (ix *opIndex) finish() {
	for i := range ix.syncs {
		w := &ix.waited[i]
		v := Waited{Ops: int(w.ops.Load()), BusyNs: w.busyNs.Load(), FirstStart: w.firstStart.Load(), LastEnd: w.lastEnd.Load()}
		if v.Ops == 0 {
			v.FirstStart, v.LastEnd = 0, 0
		}
		ix.syncs[i].Waited = v
	}
	for _, g := range ix.groups {
		ix.fillGaps(g)
	}
}

func (ix *opIndex) fillGaps(g *gapGroup) {
	n := len(g.ends)
	next, prev := make([]int64, n), make([]int64, n)
	for j := range next {
		next[j], prev[j] = g.next[j].Load(), g.prev[j].Load()
	}
	for j := n - 2; j >= 0; j-- { // suffix min
		next[j] = min(next[j], next[j+1])
	}
	for j := 1; j < n; j++ { // prefix max
		prev[j] = max(prev[j], prev[j-1])
	}
	var running int32
	for j, i := range g.idx {
		running += g.busy[j].Load()
		s := &ix.syncs[i]
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
func (ld gpuLoader) scanGPU(ctx context.Context, ix *opIndex) (gpuSpan, error) {
	s := ld.Schema
	spans := make([]gpuSpan, runtime.GOMAXPROCS(0))
	for w := range spans {
		spans[w] = newGPUSpan()
	}
	for _, t := range []string{tableKernel, tableMemcpy, tableMemset, tableGraphTrace} {
		if !s.HasColumn(t, "start") || !s.HasColumn(t, "streamId") {
			continue
		}
		cols := []intCol{col("start"), col("end"), col("deviceId"), col("streamId"), colOr("correlationId", 0), colOr("globalPid", 0)}
		kind := map[string]GPUOpKind{tableKernel: GPUKernel, tableMemcpy: GPUMemcpy, tableMemset: GPUMemset, tableGraphTrace: GPUGraph}[t]
		if ix.nb != nil { // what GPUBefore and GPUAfter name the ops by
			switch kind {
			case GPUKernel: // demangledName is NOT NULL where present
				name := "demangledName"
				if !s.HasColumn(t, name) {
					name = "shortName"
				}
				cols = append(cols, colOr(name, -1))
			case GPUMemcpy:
				cols = append(cols, colOr("bytes", 0), colOr("copyKind", 0))
			case GPUMemset:
				cols = append(cols, colOr("bytes", 0))
			}
		}
		scan := intScan{what: "reading GPU activity", table: t, cols: cols}
		_, err := ld.scanInts(ctx, scan, func(w, _ int) func(v []sql.NullInt64) error {
			span, cur := &spans[w], &cursor{}
			return func(v []sql.NullInt64) error {
				op := gpuOp{start: v[0].Int64, end: v[1].Int64, device: DeviceID(v[2].Int64), stream: StreamID(v[3].Int64),
					corr: v[4].Int64, pid: GlobalPid(v[5].Int64), kind: kind, name: -1}
				if len(v) > 6 {
					switch kind {
					case GPUKernel:
						if v[6].Valid && v[6].Int64 >= 0 {
							op.name = v[6].Int64
						}
					case GPUMemcpy:
						op.bytes, op.copyKind = v[6].Int64, v[7].Int64
					case GPUMemset:
						op.bytes = v[6].Int64
					}
				}
				ix.add(span, cur, op)
				return nil
			}
		})
		if err != nil {
			return gpuSpan{}, err
		}
	}
	total := newGPUSpan()
	for _, sp := range spans {
		total.merge(sp)
	}
	ix.finish()
	if ix.nb != nil {
		lookup := func(ids map[int64]bool) (map[int64]string, error) { return ld.lookupStrings(ctx, ids) }
		if err := ix.nb.finish(ix.syncs, lookup); err != nil {
			return gpuSpan{}, err
		}
	}
	return total, nil
}
