package estimate

import (
	"context"
	"fmt"

	"github.com/nsyssync/nsyssync/whatif"
)

// window is a stretch of the model to replay: the calls [lo, hi), ended by
// the anchor thread (plus trailing host time the recording shows after
// its last call) or by the last GPU op launched inside, whichever is
// later.
type window struct {
	lo, hi   int32
	start    int64 // recorded start, for durations
	anchor   int32
	trailing int64
}

// simulator replays windows of one model; its buffers are reused across
// runs, so a replay allocates nothing.
type simulator struct {
	m         *model
	lastEnd   []int64 // per stream: end of its work so far
	floor     []int64 // per stream: cross-stream waits
	ptr       []int32 // per stream: ops processed (position in its ops)
	hostEnd   []int64 // per thread
	hostStamp []uint32
	cut       []int64 // per thread: host code of a removed sync still to cut
	callEnd   []int64
	callBegin []int64 // per call: its start in the last replay (Simulate reads it)
	callStamp []uint32
	ops       opTimes
	snaps     []int64
	snapStamp []uint32
	removed   []bool // per call
	run       uint32
	// deflate takes the profiler's overhead off the host time before each
	// call: the replay predicts the program run without the profiler.
	deflate bool
}

func newSimulator(m *model) *simulator {
	return &simulator{m: m,
		lastEnd: make([]int64, len(m.streams)), floor: make([]int64, len(m.streams)), ptr: make([]int32, len(m.streams)),
		hostEnd: make([]int64, m.threads), hostStamp: make([]uint32, m.threads), cut: make([]int64, m.threads),
		callEnd: make([]int64, len(m.calls)), callBegin: make([]int64, len(m.calls)), callStamp: make([]uint32, len(m.calls)),
		ops:   opTimes{start: make([]int64, len(m.ops)), end: make([]int64, len(m.ops)), stamp: make([]uint32, len(m.ops))},
		snaps: make([]int64, len(m.recSnaps)), snapStamp: make([]uint32, len(m.recSnaps)),
		removed: make([]bool, len(m.calls)),
	}
}

// replay runs window w with the given inventory syncs removed and returns
// when the window ends.
func (s *simulator) replay(ctx context.Context, w window, remove []int) (int64, error) {
	m := s.m
	s.mark(remove, true)
	defer s.mark(remove, false)
	s.run++
	for st := range m.streams {
		s.lastEnd[st], s.floor[st] = m.streams[st].endBefore(w.lo), minTime
		s.ptr[st] = m.firstOpFrom(int32(st), w.lo)
	}
	gpuEnd := int64(minTime)
	for i := w.lo; i < w.hi; i++ {
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return 0, fmt.Errorf("replaying the timeline: %w", err)
			}
		}
		c, h := &m.calls[i], &m.host.Calls[i]
		removed := s.removed[i]
		start := s.callStart(h, removed)
		for o := c.opLo; o < c.opHi; o++ {
			gpuEnd = max(gpuEnd, s.replayOp(o, start, removed && m.ops[o].launched && !c.keepOps, removed && c.keepOps))
		}
		if c.snap >= 0 {
			s.snaps[c.snap], s.snapStamp[c.snap] = s.lastEnd[c.snapStream], s.run
		}
		if c.wait >= 0 {
			wt := m.waits[c.wait]
			s.floor[wt.stream] = max(s.floor[wt.stream], s.snapValue(wt.snap))
		}
		end := start + (h.End - h.Start)
		switch {
		case removed:
			end = start
			ss := &m.syncs[h.Sync]
			if c.keepOps {
				end += whatif.AsyncCopyCallNs(h.End-h.Start, m.launchCallNs)
			}
			if h.SyncFirst {
				end += s.rewrite(ss)
			}
			if ss.calls[len(ss.calls)-1] == i {
				s.cut[h.Thread] = ss.cutAfter
			}
		case c.block >= 0:
			bl := &m.blocks[c.block]
			aw := m.awaitedEnd(bl.scope, bl.pid, bl.snap, s.lastEnd, s.snaps, s.snapStamp, s.run)
			end = max(start+bl.ovh, aw+bl.wake)
		}
		s.hostEnd[h.Thread] = max(s.hostEnd[h.Thread], end)
		s.callBegin[i], s.callEnd[i], s.callStamp[i] = start, end, s.run
	}
	end := gpuEnd
	if w.anchor >= 0 && s.hostStamp[w.anchor] == s.run {
		end = max(end, s.hostEnd[w.anchor]+w.trailing)
	}
	return end, nil
}

func (s *simulator) mark(remove []int, on bool) {
	for _, si := range remove {
		for _, ci := range s.m.syncs[si].calls {
			s.removed[ci] = on
		}
	}
}

// callStart is when call h starts on its thread: after the thread's
// previous call and the recorded host time between them (less the host
// code of a removed sync), or a recorded lag after the call of another
// thread it was handed off from.
func (s *simulator) callStart(h *whatif.Call, removed bool) int64 {
	th := h.Thread
	if s.hostStamp[th] != s.run {
		s.hostStamp[th], s.hostEnd[th], s.cut[th] = s.run, minTime, 0
		if dep := s.depEnd(h); dep != minTime {
			return dep + h.Lag
		}
		return h.Start
	}
	ovh := int64(0)
	if s.deflate {
		ovh = s.m.overheads.Of(h)
	}
	gap := whatif.GapBefore(h.Gap, s.cut[th], ovh)
	s.cut[th] = 0
	var start int64
	switch {
	case removed && !h.SyncFirst:
		start = s.hostEnd[th] // the host goes on at once
	case removed:
		start = s.hostEnd[th] + whatif.GapBeforeRemoved(gap, s.m.syncs[h.Sync].cutBefore)
	default:
		start = s.hostEnd[th] + gap
	}
	if dep := s.depEnd(h); dep != minTime {
		start = max(s.hostEnd[th], dep+h.Lag)
	}
	return start
}

// depEnd is the replayed end of the call h was handed off from.
func (s *simulator) depEnd(h *whatif.Call) int64 {
	if h.Dep < 0 {
		return minTime
	}
	if s.callStamp[h.Dep] == s.run {
		return s.callEnd[h.Dep]
	}
	return s.m.host.Calls[h.Dep].End
}

// replayOp places op o, launched by a call that started at launch, and
// returns its end (minTime when dropped with its removed call); rewritten:
// its removed call is kept in its rewrite (model.rewrittenDur).
func (s *simulator) replayOp(o int32, launch int64, drop, rewritten bool) int64 {
	m := s.m
	op := &m.ops[o]
	s.ops.stamp[o] = s.run
	s.ptr[op.stream]++ // counted before the overlap below, which looks at other streams only
	if drop {
		s.ops.start[o], s.ops.end[o] = minTime, minTime
		return minTime
	}
	ready := max(s.lastEnd[op.stream], s.floor[op.stream])
	gap, lat := op.gap, op.lat
	if rewritten {
		gap, lat = m.rewrittenStart(o)
	}
	var st int64
	switch {
	case lat != minTime:
		st = max(ready+gap, launch+lat)
	case ready == minTime: // a floating op with nothing before it
		st = op.recStart
	default:
		st = ready + gap
	}
	dur := op.dur
	if rewritten {
		dur = m.rewrittenDur(o)
	}
	if op.compute {
		dur = contended(dur, m.overlap(op.stream, st, st+dur, s.ptr, &s.ops, s.run), op.recOverlap)
	}
	end := st + dur
	s.ops.start[o], s.ops.end[o] = st, end
	s.lastEnd[op.stream] = max(s.lastEnd[op.stream], end)
	return end
}

// rewrite applies the sync-free rewrite of a removed sync: later GPU work
// of the process waits, on the GPU, for what the sync awaited; the host
// pays only the rewrite's own calls.
func (s *simulator) rewrite(ss *simSync) int64 {
	if ss.pid < 0 {
		return ss.extraCost
	}
	aw := s.m.awaitedEnd(ss.scope, ss.pid, ss.snap, s.lastEnd, s.snaps, s.snapStamp, s.run)
	for _, st := range s.m.pids[ss.pid] {
		s.floor[st] = max(s.floor[st], aw)
	}
	return ss.extraCost
}

func (s *simulator) snapValue(slot int32) int64 {
	if s.snapStamp[slot] != s.run {
		return s.m.recSnaps[slot]
	}
	return s.snaps[slot]
}
