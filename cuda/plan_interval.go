package cuda

import (
	"math"
	"sort"

	"github.com/nsyssync/nsyssync/trace"
)

const noTime = math.MinInt64 / 4

// intervalState builds one interval of a plan: a pass over its calls in
// time order finds event slots and the recorded GPU work each blocking
// call waited for; then each thread's actions are written.
type intervalState struct {
	b      *planBuilder
	iv     trace.Interval
	lo, hi int // the interval's calls, b.calls[lo:hi]
	slots  int32
	// records and waits: event ops at a call; syncSlot: the slot an event
	// sync waits on.
	records  map[int][]EventOp
	waits    map[int][]EventOp
	syncSlot map[int]int32
	// slotFrom: per event slot, the call that records it (-1 for a
	// rewrite) and its stream.
	slotFrom []slotSource
	// Per stream, in launch order: the call index and the running maximum
	// of the recorded ends of its ops.
	keys    map[int32][]int
	prefEnd map[int32][]int64
	first   map[int32]int64 // first launch time (pending: before the start)
	last    map[int32]int64 // last launch time
	timing  map[int]callTiming
	recEnd  int64
	counts  *PlanCounts
}

type slotSource struct {
	call   int
	stream int32
}

// callTiming is a call's recorded host time: at least dur, and tail after
// the GPU work it waited for.
// callTiming is a blocking call's replayed host time: dur, or, when it
// waited for the GPU, tail after the wait; free: it waited for nothing.
type callTiming struct {
	dur, tail int64
	free      bool
}

func (b *planBuilder) interval(iv trace.Interval, p *Plan) IntervalPlan {
	ip := IntervalPlan{Start: iv.Start, End: iv.End, Anchor: -1, Pending: b.pending(iv.Start)}
	st := &intervalState{b: b, iv: iv, records: map[int][]EventOp{}, waits: map[int][]EventOp{}, syncSlot: map[int]int32{},
		keys: map[int32][]int{}, prefEnd: map[int32][]int64{}, first: map[int32]int64{}, last: map[int32]int64{},
		timing: map[int]callTiming{}, recEnd: iv.End, counts: &p.Counts}
	st.lo = sort.Search(len(b.calls), func(i int) bool { return b.calls[i].Start >= iv.Start })
	st.hi = sort.Search(len(b.calls), func(i int) bool { return b.calls[i].Start >= iv.End })
	for _, w := range ip.Pending {
		st.launch(w.Stream, -1, iv.Start-1, iv.Start+w.Ns)
	}
	st.scan()
	st.writeThreads(&ip)
	ip.RecordedNs = st.recEnd - iv.Start
	p.Events = max(p.Events, int(st.slots))
	return ip
}

// launch notes recorded work on a stream, launched by call ci at time at.
func (st *intervalState) launch(s int32, ci int, at, end int64) {
	prev := int64(noTime)
	if n := len(st.prefEnd[s]); n > 0 {
		prev = st.prefEnd[s][n-1]
	}
	st.keys[s] = append(st.keys[s], ci)
	st.prefEnd[s] = append(st.prefEnd[s], max(prev, end))
	if _, ok := st.first[s]; !ok {
		st.first[s] = at
	}
	st.last[s] = at
}

// endBefore is the recorded end of stream s's work launched before call
// index ci.
func (st *intervalState) endBefore(s int32, ci int) int64 {
	keys := st.keys[s]
	i := sort.Search(len(keys), func(i int) bool { return keys[i] >= ci })
	if i == 0 {
		return noTime
	}
	return st.prefEnd[s][i-1]
}

func (st *intervalState) slotAt(rc int, s int32) int32 {
	for _, op := range st.records[rc] {
		if op.Stream == s {
			return op.Slot
		}
	}
	slot := st.newSlot(rc, s)
	st.records[rc] = append(st.records[rc], EventOp{Record: true, Slot: slot, Stream: s})
	return slot
}

func (st *intervalState) newSlot(call int, s int32) int32 {
	slot := st.slots
	st.slots++
	st.slotFrom = append(st.slotFrom, slotSource{call: call, stream: s})
	return slot
}

// scan walks the interval's calls in time order.
func (st *intervalState) scan() {
	b := st.b
	waitsOf := map[callKey][]trace.StreamWait{}
	for _, w := range b.waits {
		waitsOf[callKey{w.GlobalPid, w.CorrelationID}] = append(waitsOf[callKey{w.GlobalPid, w.CorrelationID}], w)
	}
	for ci := st.lo; ci < st.hi; ci++ {
		c := &b.calls[ci]
		pid := c.GlobalTid.Process()
		for _, oi := range b.opsOf[ci] {
			op := &b.ops[oi]
			st.launch(b.stream(op.GlobalPid, op.Stream), ci, c.Start, op.End)
			st.recEnd = max(st.recEnd, op.End)
		}
		for _, w := range waitsOf[callKey{pid, c.CorrelationID}] {
			rc, ok := b.byKey[callKey{pid, w.RecordCorrelationID}]
			if !ok || rc < st.lo || rc >= ci {
				continue // recorded before the interval: already complete
			}
			slot := st.slotAt(rc, b.stream(pid, w.RecordStream))
			st.waits[ci] = append(st.waits[ci], EventOp{Slot: slot, Stream: b.stream(pid, w.Stream)})
		}
		si, isSync := b.syncOf[ci]
		if !isSync {
			continue
		}
		s := &b.t.Syncs[si]
		if s.Scope == trace.ScopeEvent && s.Stream >= 0 {
			if _, done := st.syncSlot[si]; !done {
				if rc, ok := b.byKey[callKey{pid, s.WaitCorrelationID()}]; ok && rc >= st.lo && rc < ci {
					st.syncSlot[si] = st.slotAt(rc, b.stream(pid, s.Stream))
				}
			}
		}
		if b.blocking[ci] {
			kind, target := st.blockTarget(ci, si)
			awaited := st.awaited(ci, pid, kind, target)
			switch {
			case kind == BlockStream && awaited > c.End && st.endBefore(target, ci) <= c.Start:
				// Its own op ended after it returned and the stream
				// was idle when it began: it waited for nothing on the
				// GPU. A pageable host-to-device copy returns once its
				// bytes are staged and the DMA runs after (gt_h2d_medium:
				// 256 KiB, the call 38 µs, the copy from 1.4 µs after its
				// return); waiting for the copy made each such call 9-19
				// µs late.
				st.timing[ci] = callTiming{dur: c.End - c.Start, free: true}
			case awaited > c.Start:
				st.timing[ci] = callTiming{tail: max(c.End-awaited, 0)}
			default:
				st.timing[ci] = callTiming{dur: c.End - c.Start}
			}
		}
	}
}

// blockTarget says what blocking call ci of sync si waits for.
func (st *intervalState) blockTarget(ci, si int) (BlockKind, int32) {
	b := st.b
	c := &b.calls[ci]
	s := &b.t.Syncs[si]
	pid := s.GlobalPid
	switch trace.ClassifyName(c.Name) {
	case trace.CallMemcpy, trace.CallMemset:
		if s.Copy != nil && s.Copy.CorrelationID == c.CorrelationID && s.Copy.Stream >= 0 {
			return BlockStream, b.stream(pid, s.Copy.Stream)
		}
		if ops := b.opsOf[ci]; len(ops) > 0 {
			return BlockStream, b.stream(pid, b.ops[ops[0]].Stream)
		}
	case trace.CallStreamSync:
		if s.Stream >= 0 {
			return BlockStream, b.stream(pid, s.Stream)
		}
	case trace.CallEventSync:
		if slot, ok := st.syncSlot[si]; ok {
			return BlockEvent, slot
		}
		if s.Stream >= 0 {
			return BlockStream, b.stream(pid, s.Stream)
		}
	}
	return BlockContext, -1
}

// awaited is the recorded end of the GPU work a blocking call waited for.
func (st *intervalState) awaited(ci int, pid trace.GlobalPid, kind BlockKind, target int32) int64 {
	switch kind {
	case BlockStream:
		return st.endBefore(target, ci+1)
	case BlockEvent:
		src := st.slotFrom[target]
		return st.endBefore(src.stream, src.call+1)
	}
	end := int64(noTime)
	for _, s := range st.pidStreams(pid) {
		end = max(end, st.endBefore(s, ci+1))
	}
	return end
}

// pidStreams lists the streams of a process with work in the interval.
func (st *intervalState) pidStreams(pid trace.GlobalPid) []int32 {
	var out []int32
	for s := range st.first {
		if st.b.streams[s].Pid == pid {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// rewrite returns the sync-free rewrite of removed sync si, whose first
// call starts at t: later GPU work of the process on other streams waits,
// on the GPU, for what the sync awaited (wait_stream / wait_event), and
// the host pays the recorded cost of those calls.
func (st *intervalState) rewrite(si int, t int64) ([]EventOp, int64) {
	b := st.b
	s := &b.t.Syncs[si]
	pid := s.GlobalPid
	var waiting []int32
	for _, x := range st.pidStreams(pid) {
		if st.last[x] > t {
			waiting = append(waiting, x)
		}
	}
	var ops []EventOp
	var cost int64
	if slot, ok := st.syncSlot[si]; ok {
		from := st.slotFrom[slot].stream
		for _, w := range waiting {
			if w != from {
				ops = append(ops, EventOp{Slot: slot, Stream: w})
				cost += b.waitCallNs
			}
		}
		return ops, cost
	}
	var awaited []int32
	switch {
	case s.Copy != nil && s.Copy.Stream >= 0:
		awaited = []int32{b.stream(pid, s.Copy.Stream)}
	case s.Scope != trace.ScopeContext && s.Stream >= 0:
		awaited = []int32{b.stream(pid, s.Stream)}
	default:
		for _, x := range st.pidStreams(pid) {
			if st.first[x] < t {
				awaited = append(awaited, x)
			}
		}
	}
	for _, a := range awaited {
		slot := int32(-1)
		for _, w := range waiting {
			if w == a {
				continue
			}
			if slot < 0 {
				slot = st.newSlot(-1, a)
				ops = append(ops, EventOp{Record: true, Slot: slot, Stream: a})
				cost += b.recordCallNs
			}
			ops = append(ops, EventOp{Slot: slot, Stream: w})
			cost += b.waitCallNs
		}
	}
	return ops, cost
}
