package cuda

import (
	"github.com/nsyssync/nsyssync/trace"
	"github.com/nsyssync/nsyssync/whatif"
)

// actionRef names an action of a thread.
type actionRef struct{ thread, action int32 }

// threadWriter writes one thread's actions.
type threadWriter struct {
	st    *intervalState
	tp    *ThreadPlan
	index int32
	// prevEnd: recorded end of the thread's calls so far; carry: host
	// time carried to the next action; cutNext: host code to cut from
	// the next gap (after a removed sync).
	prevEnd, carry, cutNext int64
	// keep: the removed sync being written has a rewrite that keeps
	// work on the host, and so keeps the host code around it.
	keep bool
}

// writeThreads writes every thread's actions, then ties hand-offs to the
// actions they wait for.
func (st *intervalState) writeThreads(ip *IntervalPlan) {
	b := st.b
	threadOf := map[trace.GlobalTid]int{}
	var order [][]int
	for ci := st.lo; ci < st.hi; ci++ {
		tid := b.calls[ci].GlobalTid
		th, ok := threadOf[tid]
		if !ok {
			th = len(order)
			threadOf[tid] = th
			order = append(order, nil)
			ip.Threads = append(ip.Threads, ThreadPlan{GlobalTid: tid})
		}
		order[th] = append(order[th], ci)
	}
	at := map[int]actionRef{} // call -> last action at or before it on its thread
	lastEnd := int64(noTime)
	for th, calls := range order {
		w := &threadWriter{st: st, tp: &ip.Threads[th], index: int32(th), prevEnd: st.iv.Start}
		for _, ci := range calls {
			w.call(ci)
			at[ci] = actionRef{int32(th), int32(len(w.tp.Actions)) - 1}
		}
		if end := b.calls[calls[len(calls)-1]].End; end > lastEnd {
			lastEnd, ip.Anchor = end, th
		}
		for i := range w.tp.Actions {
			st.counts.Actions++
			if w.tp.Actions[i].Block != BlockNone {
				st.counts.Blocking++
			}
		}
	}
	if ip.Anchor >= 0 {
		ip.TrailingNs = max(st.iv.End-lastEnd, 0)
	}
	for th, calls := range order {
		for _, ci := range calls {
			ho := &b.host.Calls[ci]
			me := at[ci]
			if ho.Dep < 0 || int(ho.Dep) < st.lo || me.action < 0 || ip.Threads[th].Actions[me.action].Corr != b.calls[ci].CorrelationID {
				continue
			}
			dep, ok := at[int(ho.Dep)]
			if !ok || dep.action < 0 {
				continue
			}
			a := &ip.Threads[th].Actions[me.action]
			a.AfterThread, a.AfterAction, a.Lag = dep.thread, dep.action, ho.Lag
			st.counts.HandOffs++
		}
	}
}

// call writes the action(s) of recorded call ci.
func (w *threadWriter) call(ci int) {
	st, b := w.st, w.st.b
	c := &b.calls[ci]
	gap := c.Start - w.prevEnd
	w.prevEnd = max(w.prevEnd, c.End)
	ovh := b.opt.ProfilerOverheadNs
	if b.opt.ProfilerOverheads != nil {
		ovh = b.opt.ProfilerOverheads.Of(&b.host.Calls[ci])
	}
	gap = whatif.GapBefore(gap, w.cutNext, ovh)
	w.cutNext = 0
	si, isSync := b.syncOf[ci]
	if _, removed := b.removed[si]; isSync && removed {
		w.removedCall(ci, si, gap, b.host.SyncCalls[si])
		return
	}
	a := w.newAction(c, max(gap, 0))
	a.Dur = c.End - c.Start
	if isSync {
		a.Sync = int32(si)
	}
	w.addWork(a, ci, false)
	a.EventLo = int32(len(w.tp.EventOps))
	w.tp.EventOps = append(w.tp.EventOps, st.records[ci]...)
	w.tp.EventOps = append(w.tp.EventOps, st.waits[ci]...)
	a.EventHi = int32(len(w.tp.EventOps))
	if b.blocking[ci] && isSync {
		tm := st.timing[ci]
		if tm.free {
			st.counts.Unblocked++
		} else {
			a.Block, a.Target = st.blockTarget(ci, si)
		}
		a.Dur, a.Tail = tm.dur, tm.tail
	}
	w.tp.Actions = append(w.tp.Actions, *a)
}

// removedCall leaves out a call of a removed sync: the host goes on at
// once (the gaps between the sync's own calls go, and the host code
// around it), later GPU work keeps its order on the GPU, and the data of
// a host-to-device copy still reaches the GPU, without the wait. As in
// the simulator, the host code around a sync stays when its rewrite
// keeps work on the host (ordering other streams with events, or a
// host-to-device copy made asynchronous): that code (wait_stream,
// pin_memory) takes about as long as the sync's did.
func (w *threadWriter) removedCall(ci, si int, gap int64, calls []int32) {
	st, b := w.st, w.st.b
	c := &b.calls[ci]
	cut := b.cut[si]
	first := int(calls[0]) == ci
	s := &b.t.Syncs[si]
	if first {
		ops, cost := st.rewrite(si, c.Start)
		w.keep = whatif.KeepsHostCode(len(ops) > 0, whatif.CopiesToDevice(s))
		if w.keep {
			cut = whatif.Cut{}
		}
		w.carry += whatif.GapBeforeRemoved(gap, cut.Before)
		if len(ops) > 0 {
			a := w.newAction(c, 0)
			a.Name, a.Corr, a.Dur, a.Sync = "rewrite", 0, cost, int32(si)
			a.EventLo = int32(len(w.tp.EventOps))
			w.tp.EventOps = append(w.tp.EventOps, ops...)
			a.EventHi = int32(len(w.tp.EventOps))
			w.tp.Actions = append(w.tp.Actions, *a)
			st.counts.Rewrites++
		}
	}
	if whatif.KeepsCopy(s, c.CorrelationID) && len(b.opsOf[ci]) > 0 {
		a := w.newAction(c, 0)
		a.Name, a.Sync = c.Name+" (made asynchronous)", int32(si)
		a.Dur = whatif.AsyncCopyCallNs(c.End-c.Start, b.launchCallNs)
		w.addWork(a, ci, whatif.RewritesToPinned(s))
		w.tp.Actions = append(w.tp.Actions, *a)
	}
	if int(calls[len(calls)-1]) == ci && !w.keep {
		w.cutNext = cut.After
	}
}

// newAction starts an action of call c after gap, taking the carried
// host time.
func (w *threadWriter) newAction(c *trace.TimelineCall, gap int64) *Action {
	a := &Action{Name: c.Name, Corr: c.CorrelationID, Gap: w.carry + gap, Sync: -1, Target: -1, AfterThread: -1, AfterAction: -1}
	w.carry = 0
	return a
}

// addWork adds the GPU work of call ci's ops to a; pinned: the call is a
// pageable copy that the removed sync's rewrite makes from pinned memory.
func (w *threadWriter) addWork(a *Action, ci int, pinned bool) {
	b := w.st.b
	a.WorkLo = int32(len(w.tp.Work))
	for _, oi := range b.opsOf[ci] {
		staged := int64(0)
		if op := &b.ops[oi]; !pinned && op.Kind == trace.OpMemcpy && op.Name == "memcpy HtoD" && op.HostMem == trace.MemPageable {
			c := &b.calls[ci]
			// The copy call itself then takes a launch call's time.
			staged = max(min(op.Start-c.Start, c.End-c.Start-b.launchCallNs), 0)
		}
		for _, wk := range b.work(oi, pinned) {
			wk.StagedNs = staged
			w.tp.Work = append(w.tp.Work, wk)
			switch wk.Kind {
			case WorkCopy:
				w.st.counts.Copies++
			case WorkMemset:
				w.st.counts.Memsets++
			case WorkGraph:
				w.st.counts.Graphs++
			default:
				w.st.counts.Spins++
			}
		}
	}
	a.WorkHi = int32(len(w.tp.Work))
}
