package estimate

import (
	"github.com/nsyssync/nsyssync/trace"
	"github.com/nsyssync/nsyssync/whatif"
)

// addSyncs marks the inventory's syncs on the model's calls: which calls
// each sync removes, and how each blocking call waits.
func (m *model) addSyncs(tl *trace.Timeline, syncs []trace.Sync, callIdx *callIndex, streamIdx map[callKey]int32, pidIdx map[trace.GlobalPid]int32) {
	m.syncs = make([]simSync, len(syncs))
	m.host.SyncCalls = make([][]int32, len(syncs))
	kinds := map[string]trace.CallKind{} // ClassifyName is a regexp: once per name
	kindOf := func(name string) trace.CallKind {
		k, ok := kinds[name]
		if !ok {
			k = trace.ClassifyName(name)
			kinds[name] = k
		}
		return k
	}
	for i := range syncs {
		s := &syncs[i]
		pid := s.GlobalPid
		ss := simSync{scope: noIndex, pid: noIndex, snap: noIndex, stream: noIndex}
		if p, ok := pidIdx[pid]; ok {
			ss.pid = p
		}
		for _, c := range s.Calls() {
			ci, ok := callIdx.lookup(pid, c.CorrelationID)
			if !ok || !m.host.ClaimSyncCall(int32(i), ci) {
				continue
			}
			kind := kindOf(c.Name)
			if whatif.KeepsCopy(s, c.CorrelationID) {
				m.calls[ci].keepOps = true // the data must still reach the GPU
				if whatif.RewritesToPinned(s) {
					m.markPinned(tl, ci)
				}
			}
			if !c.Blocking {
				continue
			}
			bl := m.blockFor(s, kind, c, ci, ss.pid, callIdx, streamIdx, pidIdx)
			m.calls[ci].block = int32(len(m.blocks))
			m.blocks = append(m.blocks, bl)
			ss.scope, ss.snap, ss.stream = bl.scope, bl.snap, bl.scope
			if bl.snap >= 0 {
				ss.stream = m.snapStreams[bl.snap]
			}
		}
		m.syncs[i] = ss
	}
	m.claimFixedShape(tl, syncs)
	m.host.ClaimReallocs(whatif.DeviceFrees(syncs))
	for i := range m.syncs {
		m.syncs[i].calls = m.host.SyncCalls[i]
	}
}

// claimFixedShape gives each count read the calls of the dynamic-shape
// op around it, which its fixed-shape rewrite removes
// (whatif.ClaimFixedShapes).
func (m *model) claimFixedShape(tl *trace.Timeline, syncs []trace.Sync) {
	var ops []*trace.Op
	role := func(ci int32) whatif.ShapeRole {
		ops = ops[:0]
		for o := m.calls[ci].opLo; o < m.calls[ci].opHi; o++ {
			ops = append(ops, &tl.Ops[m.ops[o].src])
		}
		return whatif.ShapeRoleOf(ops)
	}
	opNs := func(ci int32) int64 {
		var ns int64
		for o := m.calls[ci].opLo; o < m.calls[ci].opHi; o++ {
			ns = max(ns, m.ops[o].dur)
		}
		return ns
	}
	var counts []int32
	for i := range syncs {
		if whatif.ReadsCount(&syncs[i]) {
			counts = append(counts, int32(i))
		}
	}
	for k, ok := range m.host.ClaimFixedShapes(counts, role, opNs) {
		m.syncs[counts[k]].fixedShape = ok
	}
}

// markPinned records the bytes of call ci's host-to-device copies, which
// the sync's rewrite makes from pinned memory (whatif.PinnedCopyNs).
func (m *model) markPinned(tl *trace.Timeline, ci int32) {
	c := &m.calls[ci]
	for o := c.opLo; o < c.opHi; o++ {
		op := &tl.Ops[m.ops[o].src]
		if op.Kind == trace.OpMemcpy && op.Name == "memcpy HtoD" && op.Bytes > 0 {
			if m.pinnedBytes == nil {
				m.pinnedBytes = map[int32]int64{}
			}
			m.pinnedBytes[o] = op.Bytes
		}
	}
}

// rewrittenDur is op o's GPU time once its sync is removed: a pageable
// host-to-device copy the rewrite makes from pinned memory takes the
// pinned copy's time, anything else its own.
func (m *model) rewrittenDur(o int32) int64 {
	if b, ok := m.pinnedBytes[o]; ok {
		return whatif.PinnedCopyNs(b, m.ops[o].dur, m.consts.PinnedHtoDNsPerMiB)
	}
	return m.ops[o].dur
}

// rewrittenStart is op o's gap after its stream and latency after its
// launch once its sync is removed: a copy the rewrite makes from pinned
// memory starts as a queued op does, without the host's staging of its
// first chunk (recorded: 30–175 µs on gt_h2d_mixed); anything else as
// recorded.
func (m *model) rewrittenStart(o int32) (gap, lat int64) {
	op := &m.ops[o]
	if _, ok := m.pinnedBytes[o]; !ok {
		return op.gap, op.lat
	}
	gap, lat = min(op.gap, m.consts.DispatchGapNs), op.lat
	if lat != minTime {
		lat = min(lat, m.consts.LaunchLatencyNs)
	}
	return gap, lat
}

// blockFor says what blocking call c of sync s waits for.
func (m *model) blockFor(s *trace.Sync, kind trace.CallKind, c trace.Call, ci, pid int32, callIdx *callIndex, streamIdx map[callKey]int32, pidIdx map[trace.GlobalPid]int32) simBlock {
	bl := simBlock{scope: noIndex, pid: pid, snap: noIndex}
	switch kind {
	case trace.CallMemcpy, trace.CallMemset:
		// A blocking copy waits for its stream up to and including itself.
		if s.Copy != nil && s.Copy.CorrelationID == c.CorrelationID && s.Copy.Stream >= 0 {
			bl.scope = m.streamOf(s.GlobalPid, s.Copy.Stream, s.Copy.Device, streamIdx, pidIdx)
		}
	default:
		switch s.Scope {
		case trace.ScopeStream:
			if s.Stream >= 0 {
				bl.scope = m.streamOf(s.GlobalPid, s.Stream, s.Device, streamIdx, pidIdx)
			}
		case trace.ScopeEvent:
			if rc, ok := callIdx.lookup(s.GlobalPid, s.WaitCorrelationID()); ok && s.Stream >= 0 {
				bl.snap = m.snapSlot(rc, m.streamOf(s.GlobalPid, s.Stream, s.Device, streamIdx, pidIdx))
			}
		}
	}
	if bl.pid < 0 {
		if p, ok := pidIdx[s.GlobalPid]; ok {
			bl.pid = p
		}
	}
	return bl
}

// recorded holds what the recorded timeline says at each op and block:
// when the op's stream was ready, and when the awaited work ended.
type recorded struct {
	ready   []int64
	awaited []int64
	// rewrite: per sync, the streams its sync-free rewrite must order:
	// other streams that got work since the thread's previous sync, and
	// the stream the thread launches into next.
	activeOthers []int
	nextStream   []int32
}

// recordedPass walks the recorded timeline once with the replay's own
// dependency rules.
func (m *model) recordedPass() *recorded {
	r := &recorded{ready: make([]int64, len(m.ops)), awaited: make([]int64, len(m.blocks)),
		activeOthers: make([]int, len(m.syncs)), nextStream: make([]int32, len(m.syncs))}
	lastEnd := make([]int64, len(m.streams))
	floor := make([]int64, len(m.streams))
	lastLaunch := make([]int32, len(m.streams))
	for s := range m.streams {
		lastEnd[s], floor[s], lastLaunch[s] = m.streams[s].endBefore(0), minTime, -1
	}
	prevBlock := make([]int32, m.threads)
	for t := range prevBlock {
		prevBlock[t] = -1
	}
	since := make([]int32, len(m.syncs))
	ptr := make([]int32, len(m.streams))
	for i := range m.calls {
		c, h := &m.calls[i], &m.host.Calls[i]
		for o := c.opLo; o < c.opHi; o++ {
			op := &m.ops[o]
			r.ready[o] = max(lastEnd[op.stream], floor[op.stream])
			lastEnd[op.stream] = max(lastEnd[op.stream], op.recEnd)
			lastLaunch[op.stream] = int32(i)
			if op.compute {
				op.recOverlap = m.overlap(op.stream, op.recStart, op.recEnd, ptr, nil, 0)
			}
			ptr[op.stream]++
		}
		if c.snap >= 0 {
			m.recSnaps[c.snap] = lastEnd[c.snapStream]
		}
		if c.wait >= 0 {
			w := m.waits[c.wait]
			floor[w.stream] = max(floor[w.stream], m.recSnaps[w.snap])
		}
		if h.SyncFirst {
			since[h.Sync] = prevBlock[h.Thread]
		}
		if c.block >= 0 {
			r.awaited[c.block] = m.awaitedEnd(m.blocks[c.block].scope, m.blocks[c.block].pid, m.blocks[c.block].snap, lastEnd, m.recSnaps, nil, 0)
			prevBlock[h.Thread] = int32(i)
		}
		if h.Sync >= 0 {
			ss := &m.syncs[h.Sync]
			if ss.calls[len(ss.calls)-1] == int32(i) && ss.pid >= 0 {
				next := m.nextLaunchStream(int32(i))
				r.nextStream[h.Sync] = next
				for _, st := range m.pids[ss.pid] {
					if st != next && lastLaunch[st] > since[h.Sync] {
						r.activeOthers[h.Sync]++
					}
				}
			}
		}
	}
	return r
}

// nextLaunchStream returns the stream of the first op the thread of call
// i launches after it, within a bounded look-ahead; -1 when none.
func (m *model) nextLaunchStream(i int32) int32 {
	const lookAhead = 2048
	th := m.host.Calls[i].Thread
	for j := i + 1; j < int32(len(m.calls)) && j <= i+lookAhead; j++ {
		c := &m.calls[j]
		if m.host.Calls[j].Thread == th && m.host.Calls[j].Launch {
			return m.ops[c.opLo].stream
		}
	}
	return noIndex
}

// awaitedEnd is when the work a block waits for ends: its stream's, the
// recorded event's, or every stream's of the process. Snapshot slots
// written in the current run (stamp == run) hold replayed values.
func (m *model) awaitedEnd(scope, pid, snap int32, lastEnd, snaps []int64, stamp []uint32, run uint32) int64 {
	switch {
	case snap >= 0:
		if stamp != nil && stamp[snap] != run {
			return m.recSnaps[snap]
		}
		return snaps[snap]
	case scope >= 0:
		return lastEnd[scope]
	case pid >= 0:
		end := int64(minTime)
		for _, s := range m.pids[pid] {
			end = max(end, lastEnd[s])
		}
		return end
	}
	return minTime
}
