package estimate

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/nsyssync/nsyssync/trace"
)

// Simulate replays the timeline tl (one window of t's trace, as
// trace.(*Export).Timeline reads it) without the given syncs (t.Syncs
// indices; those outside the window are ignored) and returns the window as
// the model runs it: each call and op at its simulated times, the removed
// syncs' calls and the copies they dropped left out, a kept copy's call
// as its asynchronous rewrite. It is the picture of a site's saving, not
// its estimate: the replay starts at the window's start in its recorded
// state, with the profiler's overhead left in (as the recorded timeline
// beside it) and each removed sync's own host code; constants the window
// has too few samples of come from consts (the run's Result.Constants).
func Simulate(ctx context.Context, tl *trace.Timeline, t *trace.Trace, remove []int, consts Constants) (*trace.Timeline, error) {
	w := tl.Window
	d := newDraft(tl, t, w.Start, w.End, 0, len(t.Syncs), math.MaxInt64)
	finishModels([]*draft{d}, consts.calibration())
	m := d.m
	var local []int
	removed := make([]bool, len(m.calls))
	for _, si := range remove {
		if si < 0 || si >= len(m.syncs) || m.syncs[si].calls == nil {
			continue
		}
		local = append(local, si)
		for _, c := range m.syncs[si].calls {
			removed[c] = true
		}
	}
	sim := newSimulator(m)
	if _, err := sim.replay(ctx, window{lo: 0, hi: int32(len(m.calls)), start: w.Start, anchor: noIndex}, local); err != nil {
		return nil, fmt.Errorf("simulating the timeline without the syncs: %w", err)
	}
	out := &trace.Timeline{Window: w, Waits: tl.Waits}
	k := 0
	for _, c := range tl.Calls {
		if !inModel(&c, w.Start, w.End) {
			continue
		}
		i := k
		k++
		if removed[i] && !m.calls[i].keepOps {
			continue
		}
		c.Start, c.End = sim.callBegin[i], sim.callEnd[i]
		out.Calls = append(out.Calls, c)
	}
	replayed := make([]bool, len(tl.Ops))
	for o := range m.ops {
		so := &m.ops[o]
		replayed[so.src] = true
		if sim.ops.stamp[o] != sim.run || sim.ops.start[o] == minTime {
			continue // dropped with its removed call, or never reached
		}
		op := tl.Ops[so.src]
		op.Start, op.End = sim.ops.start[o], sim.ops.end[o]
		out.Ops = append(out.Ops, op)
	}
	for i, op := range tl.Ops {
		if !replayed[i] { // launched before the window: as recorded
			out.Ops = append(out.Ops, op)
		}
	}
	slices.SortStableFunc(out.Calls, func(a, b trace.TimelineCall) int { return cmp.Compare(a.Start, b.Start) })
	slices.SortStableFunc(out.Ops, func(a, b trace.Op) int { return cmp.Compare(a.Start, b.Start) })
	return out, nil
}

// calibration turns a run's constants back into a calibration profile, so
// that a model of a smaller timeline falls back on them.
func (c Constants) calibration() *Calibration {
	return &Calibration{SyncOverheadNs: c.SyncOverheadNs, SyncWakeNs: c.SyncWakeNs, LaunchLatencyNs: c.LaunchLatencyNs,
		DispatchGapNs: c.DispatchGapNs, D2HScalarCopyNs: c.D2HScalarCopyNs, RecordWaitNs: c.RecordWaitNs,
		Source: "the estimate's constants"}
}
