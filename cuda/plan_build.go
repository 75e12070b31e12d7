package cuda

import (
	"sort"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
	"github.com/nsyssync/nsyssync/whatif"
)

// planBuilder holds what every interval of a plan needs: the region's
// calls in time order, the ops each launches, the syncs and what removing
// them means.
type planBuilder struct {
	t     *trace.Trace
	opt   PlanOptions
	calls []trace.TimelineCall
	ops   []trace.Op
	waits []trace.StreamWait
	byKey map[callKey]int
	// opsOf lists, per call index, the ops it launched (or that float
	// after it), in start order.
	opsOf map[int][]int
	// syncOf maps a call index to its trace.Sync index; blocking marks the
	// calls that block on their own.
	syncOf   map[int]int
	blocking map[int]bool
	// removed maps a removed sync to its group; cut holds the host code
	// cut around each removed sync.
	removed map[int]int
	cut     map[int]whatif.Cut
	// host is the host side of the region graph (package whatif), by
	// call index: threads, gaps, syncs, launches and hand-offs.
	host *whatif.Host
	// Stream indices, by recorded stream.
	streamIdx map[StreamRef]int32
	streams   []StreamRef
	copyBytes int64
	// Recorded kernel footprints, by Plan.Shapes index; covers: per op,
	// the kernel of another stream running when it started.
	shapes   []Shape
	shapeIdx map[Shape]int32
	covers   map[int]coverOp
	// Recorded medians for the host cost of calls a rewrite makes.
	launchCallNs, recordCallNs, waitCallNs int64
	// opsSweep: ops ordered by start, for pending work at each interval.
	sweep    int
	sweepEnd map[StreamRef]int64
}

func newPlanBuilder(tl *trace.Timeline, t *trace.Trace, opt PlanOptions) *planBuilder {
	b := &planBuilder{t: t, opt: opt, ops: tl.Ops, waits: tl.Waits, byKey: map[callKey]int{}, opsOf: map[int][]int{},
		syncOf: map[int]int{}, blocking: map[int]bool{}, removed: map[int]int{}, streamIdx: map[StreamRef]int32{},
		sweepEnd: map[StreamRef]int64{}, shapes: []Shape{{}}, shapeIdx: map[Shape]int32{}}
	b.host = whatif.NewHost(0, len(t.Syncs))
	for _, c := range tl.Calls {
		if inRegion(t.Region, c.Start) {
			b.byKey[callKey{c.GlobalTid.Process(), c.CorrelationID}] = len(b.calls)
			b.calls = append(b.calls, c)
			ci := b.host.Add(c.GlobalTid, c.Start, c.End)
			b.host.Calls[ci].Copy = whatif.IsCopyCall(c.Kind)
			b.host.Calls[ci].Alloc = whatif.IsDeviceAllocName(c.Name)
			b.host.Calls[ci].KernelLaunch = whatif.IsKernelLaunchName(c.Name)
		}
	}
	b.attachOps()
	b.covers = b.findCovers()
	for i := range t.Syncs {
		s := &t.Syncs[i]
		for _, c := range s.Calls() {
			if ci, ok := b.byKey[callKey{s.GlobalPid, c.CorrelationID}]; ok && b.host.ClaimSyncCall(int32(i), int32(ci)) {
				b.syncOf[ci] = i
				b.blocking[ci] = c.Blocking
			}
		}
	}
	b.claimFixedShape()
	b.claimReallocs()
	for g, group := range opt.Remove {
		for _, si := range group {
			if si >= 0 && si < len(t.Syncs) {
				b.removed[si] = g
			}
		}
	}
	b.medians()
	b.cut = b.hostCode()
	b.host.LinkHandOffs()
	return b
}

// attachOps ties each op to the call that launched it; an op with no such
// call that starts inside the region floats after the process's last call
// before it.
func (b *planBuilder) attachOps() {
	for oi, op := range b.ops {
		if ci, ok := b.byKey[callKey{op.GlobalPid, op.CorrelationID}]; ok && op.CorrelationID != 0 {
			b.opsOf[ci] = append(b.opsOf[ci], oi)
			b.host.Calls[ci].Launch = true // an op floating after a call does not make it a launch
			continue
		}
		if !inRegion(b.t.Region, op.Start) {
			continue
		}
		if k := b.host.FloatCall(op.Start, op.GlobalPid); k >= 0 {
			b.opsOf[int(k)] = append(b.opsOf[int(k)], oi)
		}
	}
	for ci, list := range b.opsOf {
		sort.SliceStable(list, func(i, j int) bool { return b.ops[list[i]].Start < b.ops[list[j]].Start })
		b.opsOf[ci] = list
	}
}

// medians reads the recorded host cost of launch, event record and stream
// wait calls.
func (b *planBuilder) medians() {
	var launch, record, wait []int64
	for ci, c := range b.calls {
		d := c.End - c.Start
		switch {
		case whatif.IsRecordCall(c.Name):
			record = append(record, d)
		case whatif.IsStreamWaitCall(c.Name):
			wait = append(wait, d)
		case len(b.opsOf[ci]) > 0:
			if _, sync := b.syncOf[ci]; !sync {
				launch = append(launch, d)
			}
		}
	}
	b.launchCallNs, b.recordCallNs, b.waitCallNs = median(launch), median(record), median(wait)
}

// stream returns the replay index of a recorded stream.
func (b *planBuilder) stream(pid trace.GlobalPid, id trace.StreamID) int32 {
	k := StreamRef{Pid: pid, Stream: id}
	if s, ok := b.streamIdx[k]; ok {
		return s
	}
	s := int32(len(b.streams))
	b.streamIdx[k] = s
	b.streams = append(b.streams, k)
	return s
}

// work turns recorded op oi into replay work: host-device copies are
// copied and memsets set for real (up to the copy cap, the rest of their
// time spun), everything else is spun for its recorded duration (a graph's: from its
// first node's start to its last node's end), a kernel with its recorded
// footprint.
func (b *planBuilder) work(oi int, pinned bool) []Work {
	op := &b.ops[oi]
	st := b.stream(op.GlobalPid, op.Stream)
	dur := op.End - op.Start
	var dir copyDir
	switch {
	case op.Kind != trace.OpMemcpy || op.Bytes <= 0:
	case strings.HasSuffix(op.Name, "DtoH"):
		dir = dirDtoH
	case strings.HasSuffix(op.Name, "HtoD"):
		dir = dirHtoD
	}
	if op.Kind == trace.OpGraph {
		return []Work{{Kind: WorkGraph, Stream: st, Ns: dur, Op: opLabel(op)}}
	}
	if op.Kind == trace.OpMemset && op.Bytes > 0 && !b.opt.spinMemsets {
		// A memset call takes about half a spin's launch call (2.3 µs
		// recorded under the profiler against 4.3 µs for a launch, on
		// an H200): spun, each of gt_item_many's 120 memsets ran 2 µs
		// behind.
		return b.capped(op, st, dur, Work{Kind: WorkMemset, Stream: st, Ns: dur, Op: opLabel(op)})
	}
	if dir != 0 && !pinned && stagedCopy(op) {
		// Replayed as recorded: a real copy here would run at pinned
		// speed, several times faster than the staged one recorded.
		return []Work{{Kind: WorkSpin, Stream: st, Ns: dur, Op: opLabel(op) + " (pageable, staged: its recorded time)"}}
	}
	if dir == 0 {
		w := Work{Kind: WorkSpin, Stream: st, Ns: dur, Op: opLabel(op), Shape: b.shapeIndex(op)}
		if c, ok := b.covers[oi]; ok && w.Shape > 0 {
			w.Cover, w.CoverNs = b.shapeIndex(&b.ops[c.op]), c.ns
		}
		return []Work{w}
	}
	return b.capped(op, st, dur, Work{Kind: WorkCopy, Stream: st, Dir: dir, Ns: dur, Op: opLabel(op)})
}

// capped is w, a real copy or memset of op's bytes, up to the copy cap;
// the time of the bytes beyond it is spun first.
func (b *planBuilder) capped(op *trace.Op, st int32, dur int64, w Work) []Work {
	var out []Work
	n := op.Bytes
	if n > b.opt.MaxCopyBytes {
		rest := int64(float64(dur) * float64(n-b.opt.MaxCopyBytes) / float64(n))
		out = append(out, Work{Kind: WorkSpin, Stream: st, Ns: rest, Op: opLabel(op) + " (beyond the copy cap)"})
		n = b.opt.MaxCopyBytes
	}
	b.copyBytes = max(b.copyBytes, n)
	w.Bytes = n
	return append(out, w)
}

// claimFixedShape gives each count read the calls of the dynamic-shape op
// around it, which its fixed-shape rewrite removes
// (whatif.ClaimFixedShapes), as the simulator does.
func (b *planBuilder) claimFixedShape() {
	var ops []*trace.Op
	role := func(ci int32) whatif.ShapeRole {
		ops = ops[:0]
		for _, oi := range b.opsOf[int(ci)] {
			ops = append(ops, &b.ops[oi])
		}
		return whatif.ShapeRoleOf(ops)
	}
	opNs := func(ci int32) int64 {
		var ns int64
		for _, oi := range b.opsOf[int(ci)] {
			ns = max(ns, b.ops[oi].End-b.ops[oi].Start)
		}
		return ns
	}
	var counts []int32
	for i := range b.t.Syncs {
		if whatif.ReadsCount(&b.t.Syncs[i]) {
			counts = append(counts, int32(i))
		}
	}
	b.host.ClaimFixedShapes(counts, role, opNs)
	for _, s := range counts {
		for _, ci := range b.host.SyncCalls[s] {
			if _, ok := b.syncOf[int(ci)]; !ok {
				b.syncOf[int(ci)] = int(s)
			}
		}
	}
}

// claimReallocs gives each device free the allocation its rewrite
// (allocate once and reuse) removes (whatif.ClaimReallocs), as the
// simulator does.
func (b *planBuilder) claimReallocs() {
	frees := whatif.DeviceFrees(b.t.Syncs)
	b.host.ClaimReallocs(frees)
	for _, s := range frees {
		for _, ci := range b.host.SyncCalls[s] {
			if _, ok := b.syncOf[int(ci)]; !ok {
				b.syncOf[int(ci)] = int(s)
			}
		}
	}
}

// stagedCopy reports whether copy op was made from or into pageable
// memory in a size the driver stages through its pinned buffer chunk by
// chunk (whatif.Staged: recorded several times slower than a pinned copy
// of its bytes). A real copy in the
// replay is always pinned, so such a copy is replayed by its recorded time,
// unless the removed sync's rewrite makes it pinned (whatif.RewritesToPinned).
func stagedCopy(op *trace.Op) bool {
	return op.HostMem == trace.MemPageable && whatif.Staged(op.Bytes)
}

// inRegion reports whether t lies in the region: in one of its
// intervals, or in [Start, End) when it has none.
func inRegion(r trace.Region, t int64) bool {
	if len(r.Intervals) == 0 {
		return t >= r.Start && t < r.End
	}
	return r.Contains(t)
}

func opLabel(op *trace.Op) string {
	name := op.Name
	if name == "" {
		name = string(op.Kind)
	}
	return name
}

// pending returns, per stream, the GPU work launched before start and
// still running then, as one spin each. Intervals come in time order.
func (b *planBuilder) pending(start int64) []Work {
	for ; b.sweep < len(b.ops) && b.ops[b.sweep].Start < start; b.sweep++ {
		op := &b.ops[b.sweep]
		k := StreamRef{Pid: op.GlobalPid, Stream: op.Stream}
		b.sweepEnd[k] = max(b.sweepEnd[k], op.End)
	}
	var out []Work
	for k, end := range b.sweepEnd {
		if end > start {
			out = append(out, Work{Kind: WorkSpin, Stream: b.stream(k.Pid, k.Stream), Ns: end - start, Op: "work queued before the interval"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Stream < out[j].Stream })
	return out
}

// queuedMarginNs: an op whose launch call returned this long before the
// stream's previous op ended was queued behind it.
const queuedMarginNs = 2_000

// dispatchGap is the median recorded gap between two kernels of one
// stream when the second was queued before the first ended.
func (b *planBuilder) dispatchGap() int64 {
	launchEnd := map[int]int64{}
	for ci, list := range b.opsOf {
		for _, oi := range list {
			launchEnd[oi] = b.calls[ci].End
		}
	}
	last := map[StreamRef]int{}
	var gaps []int64
	for oi := range b.ops {
		op := &b.ops[oi]
		k := StreamRef{Pid: op.GlobalPid, Stream: op.Stream}
		if prev, ok := last[k]; ok {
			le, launched := launchEnd[oi]
			gap := op.Start - b.ops[prev].End
			kernels := op.Kind == trace.OpKernel && b.ops[prev].Kind == trace.OpKernel
			if launched && kernels && le+queuedMarginNs < b.ops[prev].End && gap >= 0 && gap < 20_000 {
				gaps = append(gaps, gap)
			}
		}
		last[k] = oi
	}
	if len(gaps) < 3 {
		return 0
	}
	return median(gaps)
}
