package estimate

import (
	"math"
	"sort"

	"github.com/nsyssync/nsyssync/trace"
	"github.com/nsyssync/nsyssync/whatif"
)

const (
	noIndex = int32(-1)
	minTime = math.MinInt64 / 4 // "no constraint", safe to add small values to
)

// model is a region's timeline prepared for replay. Calls are in recorded
// start order across threads; ops are ordered by their launch call, so a
// single pass over the calls replays host and GPU together: every
// dependency (the previous call of a thread, the previous op of a stream,
// an event record, the work a sync waits for) comes earlier in that order.
type model struct {
	// host is the host side of the graph (package whatif): the calls'
	// threads, gaps, syncs and hand-offs; calls holds, by the same index,
	// what the GPU side adds to each call.
	host      *whatif.Host
	calls     []simCall
	ops       []simOp
	streams   []simStream
	pids      [][]int32 // pid index -> its stream indices
	devices   [][]int32 // device index -> its stream indices
	deviceIDs []trace.DeviceID
	waits     []simWait
	blocks    []simBlock
	syncs     []simSync // by trace.Sync index less syncLo; calls nil when outside the model
	syncLo    int
	// recSnaps: recorded value of each record snapshot slot (the end of
	// the recording stream's work before the record).
	recSnaps    []int64
	snapStreams []int32 // per snapshot slot: the recording stream
	threads     int
	consts      Constants
	// launchCallNs: host cost of an asynchronous copy call, what a removed
	// pageable host-to-device copy becomes.
	launchCallNs int64
	// pinnedBytes: the bytes of each op (by index in ops) that a removed
	// sync's rewrite copies from pinned memory instead of pageable.
	pinnedBytes map[int32]int64
	// overheads: host time the profiler adds to each traced call, by its
	// kind.
	overheads whatif.Overheads
}

// simCall is what the GPU side of the model adds to API call i of
// m.host (whose Calls[i] holds its recorded times, thread, gap, sync and
// hand-off).
type simCall struct {
	opLo, opHi int32
	block      int32 // blocks index; -1: replayed with its recorded duration
	snap       int32 // snapshot slot written by this (event record) call
	snapStream int32
	wait       int32 // waits index of this cudaStreamWaitEvent call
	// keepOps: removing the sync keeps this call's copy, made
	// asynchronous (a host-to-device copy the program needs).
	keepOps bool
}

// simOp is one GPU op. It starts when its launch has reached the GPU and
// its stream (and any cross-stream wait) is ready.
type simOp struct {
	stream   int32
	call     int32 // launch call (or the call it floats after)
	launched bool  // tied to a launch call (removed with it)
	compute  bool  // a kernel or graph: shares the device's SMs
	// pageable: a copy from or into pageable memory, which starts once
	// the host has staged it (not a dispatch gap after its stream).
	pageable bool
	lat      int64 // from the launch call's start
	gap      int64 // after the stream is ready
	dur      int64
	recStart int64
	recEnd   int64
	src      int32 // index in the timeline's Ops
	// recOverlap: time the op ran alongside compute ops of other streams
	// launched before it, as recorded.
	recOverlap int64
}

// simStream is one stream of one process; before lists, in launch order,
// the recorded running maximum of its ops' ends, keyed by launch call
// index (-1 for ops launched before the model), to start a window.
type simStream struct {
	pid       int32
	device    int32
	id        int64
	keys      []int32
	prefixEnd []int64
	ops       []int32 // its ops in m.ops, in launch order
}

type simWait struct {
	stream int32
	snap   int32
}

// simBlock is a call that blocks the host until GPU work is done.
type simBlock struct {
	scope int32 // stream index; -1: every stream of pid
	pid   int32
	snap  int32 // event scope: the record's snapshot slot
	ovh   int64 // host time when nothing is left to wait for
	wake  int64 // from the awaited work's end to the return
}

// simSync is one inventory sync as the replay removes it.
type simSync struct {
	// fixedShape: a count read whose removal models the fixed-shape
	// rewrite (its calls include the dynamic-shape op's,
	// whatif.ClaimFixedShapes).
	fixedShape bool
	calls      []int32 // m.host.SyncCalls of the sync
	// barrier: the sync-free rewrite keeps GPU-side order (wait_stream,
	// wait_event): later ops of the process wait for what the sync
	// awaited. extraCost is the host cost of that rewrite.
	scope     int32
	pid       int32
	snap      int32
	stream    int32 // the one stream awaited (stream or event scope), -1
	extraCost int64
	// cutBefore and cutAfter: host time of the code issuing the sync, in
	// the gaps before its first and after its last call.
	cutBefore, cutAfter int64
}

// endBefore returns the recorded end of stream s's work launched before
// call index a.
func (s *simStream) endBefore(a int32) int64 {
	i := sort.Search(len(s.keys), func(i int) bool { return s.keys[i] >= a })
	if i == 0 {
		return minTime
	}
	return s.prefixEnd[i-1]
}

// buildModel prepares the replay of the calls that start inside [start,
// end) and the ops they launch, with every sync of the trace and the
// constants of this timeline alone.
func buildModel(tl *trace.Timeline, tr *trace.Trace, start, end int64, cal *Calibration) *model {
	d := newDraft(tl, tr, start, end, 0, len(tr.Syncs), math.MaxInt64)
	finishModels([]*draft{d}, cal)
	return d.m
}

// newModel builds the structure of the replay of the calls that start
// inside [start, end): its threads, streams, dependencies and the trace's
// syncs [syncLo, syncHi) (m.syncs[i] is trace sync syncLo+i). Ops that
// no call of the model launched float from start to floatEnd.
func newModel(tl *trace.Timeline, tr *trace.Trace, start, end int64, syncLo, syncHi int, floatEnd int64) *model {
	m := &model{syncLo: syncLo}
	callIdx := m.addCalls(tl, start, end)
	streamIdx := map[callKey]int32{}
	pidIdx := map[trace.GlobalPid]int32{}
	m.addOps(tl, callIdx, streamIdx, pidIdx, start, floatEnd)
	m.addWaits(tl, callIdx, streamIdx)
	m.addSyncs(tl, tr.Syncs[syncLo:syncHi], callIdx, streamIdx, pidIdx)
	m.host.LinkHandOffs()
	return m
}

func (m *model) addCalls(tl *trace.Timeline, start, end int64) *callIndex {
	m.host = whatif.NewHost(len(tl.Calls), 0)
	m.calls = make([]simCall, 0, len(tl.Calls))
	keys := make([]callKey, 0, len(tl.Calls))
	for _, c := range tl.Calls {
		if !inModel(&c, start, end) {
			continue
		}
		ci := m.host.Add(c.GlobalTid, c.Start, c.End)
		m.host.Calls[ci].Copy = whatif.IsCopyCall(c.Kind)
		m.host.Calls[ci].Alloc = whatif.IsDeviceAllocName(c.Name)
		m.host.Calls[ci].KernelLaunch = whatif.IsKernelLaunchName(c.Name)
		keys = append(keys, callKey{int64(c.GlobalTid.Process()), c.CorrelationID})
		m.calls = append(m.calls, simCall{block: noIndex, snap: noIndex, snapStream: noIndex, wait: noIndex})
	}
	m.threads = len(m.host.Threads)
	return newCallIndex(keys)
}

// inModel reports whether a model of [start, end) replays call c: one
// that overlaps it.
func inModel(c *trace.TimelineCall, start, end int64) bool { return c.Start < end && c.End > start }

// streamOf returns the index of a process's stream, adding it (on the
// given device, trace.NoDevice when unknown) the first time.
func (m *model) streamOf(pid trace.GlobalPid, stream trace.StreamID, device trace.DeviceID, streamIdx map[callKey]int32, pidIdx map[trace.GlobalPid]int32) int32 {
	k := callKey{int64(pid), int64(stream)}
	if s, ok := streamIdx[k]; ok {
		if m.streams[s].device < 0 && device >= 0 {
			m.streams[s].device = m.deviceOf(device)
			m.devices[m.streams[s].device] = append(m.devices[m.streams[s].device], s)
		}
		return s
	}
	p, ok := pidIdx[pid]
	if !ok {
		p = int32(len(m.pids))
		pidIdx[pid] = p
		m.pids = append(m.pids, nil)
	}
	s := int32(len(m.streams))
	streamIdx[k] = s
	m.streams = append(m.streams, simStream{pid: p, id: int64(stream), device: noIndex})
	m.pids[p] = append(m.pids[p], s)
	if device >= 0 {
		m.streams[s].device = m.deviceOf(device)
		m.devices[m.streams[s].device] = append(m.devices[m.streams[s].device], s)
	}
	return s
}

// deviceOf returns the index of a device id, adding it the first time.
func (m *model) deviceOf(device trace.DeviceID) int32 {
	for i, id := range m.deviceIDs {
		if id == device {
			return int32(i)
		}
	}
	m.deviceIDs = append(m.deviceIDs, device)
	m.devices = append(m.devices, nil)
	return int32(len(m.deviceIDs) - 1)
}

// addOps ties each op to its launch call. An op with no launch call in the
// model that starts inside it (before floatEnd) floats after its
// process's call before it (whatif.Host.FloatCall; it moves with its
// stream); one from before the model (or any call of its process) is
// fixed history; one after floatEnd is left out.
func (m *model) addOps(tl *trace.Timeline, callIdx *callIndex, streamIdx map[callKey]int32, pidIdx map[trace.GlobalPid]int32, start, floatEnd int64) {
	type keyed struct {
		key int32
		op  simOp
	}
	list := make([]keyed, 0, len(tl.Ops))
	m.ops = make([]simOp, 0, len(tl.Ops))
	for i, op := range tl.Ops {
		s := m.streamOf(op.GlobalPid, op.Stream, op.Device, streamIdx, pidIdx)
		so := simOp{stream: s, dur: op.End - op.Start, recStart: op.Start, recEnd: op.End, src: int32(i),
			compute: op.Kind == trace.OpKernel || op.Kind == trace.OpGraph, pageable: op.Kind == trace.OpMemcpy && op.HostMem == trace.MemPageable}
		key := int32(-1)
		if ci, ok := callIdx.lookup(op.GlobalPid, op.CorrelationID); ok && op.CorrelationID != 0 {
			key, so.launched = ci, true
		} else if op.Start >= floatEnd {
			continue
		} else if op.Start >= start {
			key = m.host.FloatCall(op.Start, op.GlobalPid)
		}
		list = append(list, keyed{key, so})
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].key != list[j].key {
			return list[i].key < list[j].key
		}
		return list[i].op.recStart < list[j].op.recStart
	})
	for _, k := range list {
		st := &m.streams[k.op.stream]
		prev := int64(minTime)
		if n := len(st.prefixEnd); n > 0 {
			prev = st.prefixEnd[n-1]
		}
		st.keys = append(st.keys, k.key)
		st.prefixEnd = append(st.prefixEnd, max(prev, k.op.recEnd))
		if k.key < 0 {
			continue
		}
		c := &m.calls[k.key]
		if c.opHi == 0 {
			c.opLo = int32(len(m.ops))
		}
		k.op.call = k.key
		st.ops = append(st.ops, int32(len(m.ops)))
		m.ops = append(m.ops, k.op)
		c.opHi = int32(len(m.ops))
		if k.op.launched { // an op floating after a call does not make it a launch
			m.host.Calls[k.key].Launch = true
		}
	}
}

func (m *model) addWaits(tl *trace.Timeline, callIdx *callIndex, streamIdx map[callKey]int32) {
	for _, w := range tl.Waits {
		wc, ok1 := callIdx.lookup(w.GlobalPid, w.CorrelationID)
		rc, ok2 := callIdx.lookup(w.GlobalPid, w.RecordCorrelationID)
		ws, ok3 := streamIdx[callKey{int64(w.GlobalPid), int64(w.Stream)}]
		rs, ok4 := streamIdx[callKey{int64(w.GlobalPid), int64(w.RecordStream)}]
		if !ok1 || !ok2 || !ok3 || !ok4 {
			continue
		}
		slot := m.snapSlot(rc, rs)
		m.calls[wc].wait = int32(len(m.waits))
		m.waits = append(m.waits, simWait{stream: ws, snap: slot})
	}
}

// snapSlot makes call c an event record of stream s whose position the
// replay remembers.
func (m *model) snapSlot(c, s int32) int32 {
	if m.calls[c].snap >= 0 {
		return m.calls[c].snap
	}
	slot := int32(len(m.recSnaps))
	m.recSnaps = append(m.recSnaps, minTime)
	m.snapStreams = append(m.snapStreams, s)
	m.calls[c].snap, m.calls[c].snapStream = slot, s
	return slot
}
