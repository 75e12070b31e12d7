package estimate

import (
	"sort"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
	"github.com/nsyssync/nsyssync/whatif"
)

// draft is a model whose replay parameters wait for the model constants,
// which pool the samples of every model of a run (the sampled windows of
// a large region), so that all of them replay with one set.
type draft struct {
	m   *model
	rec *recorded
	// in marks the calls that start inside the region: the constants are
	// read off those alone, whatever else the model holds for context.
	in []bool
	// From the timeline: small device-to-host copies, and the durations
	// of event record and stream wait calls, inside the region.
	scalar, record, waits []int64
	// pinned: the time per MiB of pinned host-to-device copies
	// (whatif.PinnedSpeedSample).
	pinned []int64
	// otherGPU: the trace ran on a GPU other than the one the default
	// pinned copy speed was measured on.
	otherGPU bool
	// late: the kernels launched onto an idle GPU inside the region, and
	// the delays of the late ones (sharedgpu.go).
	late lateLaunches
}

// newDraft builds the model of the calls that start inside [start, end),
// with the trace's syncs [syncLo, syncHi) and the ops not launched by its
// calls that start before floatEnd, and reads its samples from the calls
// and ops that start inside the region's intervals.
func newDraft(tl *trace.Timeline, tr *trace.Trace, start, end int64, syncLo, syncHi int, floatEnd int64) *draft {
	d := &draft{m: newModel(tl, tr, start, end, syncLo, syncHi, floatEnd), otherGPU: !onPinnedDefaultGPU(tr.GPUs)}
	d.rec = d.m.recordedPass()
	ivs := tr.Region.Intervals
	d.in = make([]bool, len(d.m.calls))
	for i := range d.m.calls {
		d.in[i] = inIntervals(ivs, d.m.host.Calls[i].Start)
	}
	for _, op := range tl.Ops {
		if op.Kind != trace.OpMemcpy || !inIntervals(ivs, op.Start) {
			continue
		}
		if op.Name == "memcpy DtoH" && op.Bytes <= 64 {
			d.scalar = append(d.scalar, op.End-op.Start)
		}
		if ns, ok := whatif.PinnedSpeedSample(&op); ok {
			d.pinned = append(d.pinned, ns)
		}
	}
	for _, call := range tl.Calls {
		switch {
		case !inIntervals(ivs, call.Start):
		case whatif.IsRecordCall(call.Name):
			d.record = append(d.record, call.End-call.Start)
		case whatif.IsStreamWaitCall(call.Name):
			d.waits = append(d.waits, call.End-call.Start)
		}
	}
	return d
}

// PinnedSpeedUnknown is the source of a pinned copy speed the estimate
// does not know: a staged copy's pinned rewrite keeps its recorded time.
const PinnedSpeedUnknown = "unknown: no pinned copy in the trace, no calibration, and the default was measured on an H100"

// onPinnedDefaultGPU reports whether the trace ran only on GPUs of the
// kind the default pinned copy speed was measured on (an H100: its host
// link speed is not another GPU's; a T4 on PCIe Gen3 copies at a fifth of
// it).
func onPinnedDefaultGPU(gpus []trace.GPU) bool {
	for _, g := range gpus {
		if !strings.Contains(g.Name, "H100") {
			return false
		}
	}
	return len(gpus) > 0
}

// inIntervals reports whether t lies in one of the sorted intervals.
func inIntervals(ivs []trace.Interval, t int64) bool {
	k := sort.Search(len(ivs), func(k int) bool { return ivs[k].End > t })
	return k < len(ivs) && ivs[k].Start <= t
}

// finishModels reads the model constants off the drafts' recorded
// timelines (falling back to the calibration, then the defaults), turns
// each op's and block's recorded timing into replay parameters that
// reproduce the recording exactly when nothing is removed, and measures
// each sync's host code.
func finishModels(ds []*draft, cal *Calibration) Constants {
	p := newConstantPicker(cal)
	c := &p.out
	def := p.defaults
	var lat, gaps, ovh, wake, launchCalls, kernelLaunches, scalar, record, waits, pinned []int64
	pinnedDefault := def.PinnedHtoDNsPerMiB
	for _, d := range ds {
		lat = d.m.latencySamples(d.rec, d.in, lat)
	}
	p.pick("launch_latency_ns", &c.LaunchLatencyNs, lat, p.calValue(func(k *Calibration) int64 { return k.LaunchLatencyNs }), def.LaunchLatencyNs)
	for _, d := range ds {
		gaps = d.m.gapSamples(d.rec, d.in, c.LaunchLatencyNs, gaps)
		ovh, wake = d.m.blockSamples(d.rec, d.in, ovh, wake)
		launchCalls = d.m.launchCallSamples(d.in, launchCalls)
		kernelLaunches = d.m.host.LaunchDurations(d.in, kernelLaunches)
		scalar, record, waits = append(scalar, d.scalar...), append(record, d.record...), append(waits, d.waits...)
		pinned = append(pinned, d.pinned...)
		if d.otherGPU {
			pinnedDefault = 0
		}
	}
	p.pick("dispatch_gap_ns", &c.DispatchGapNs, gaps, p.calValue(func(k *Calibration) int64 { return k.DispatchGapNs }), def.DispatchGapNs)
	p.pick("sync_overhead_ns", &c.SyncOverheadNs, ovh, p.calValue(func(k *Calibration) int64 { return k.SyncOverheadNs }), def.SyncOverheadNs)
	p.pick("sync_wake_ns", &c.SyncWakeNs, wake, p.calValue(func(k *Calibration) int64 { return k.SyncWakeNs }), def.SyncWakeNs)
	launchCallNs := c.LaunchLatencyNs
	c.fromLaunches = whatif.OverheadFromLaunches(kernelLaunches, def.ProfilerOverheadNs)
	if len(launchCalls) > 0 {
		launchCallNs = median(launchCalls)
	}
	p.pick("d2h_scalar_copy_ns", &c.D2HScalarCopyNs, scalar, p.calValue(func(k *Calibration) int64 { return k.D2HScalarCopyNs }), def.D2HScalarCopyNs)
	p.pick("pinned_htod_ns_per_mib", &c.PinnedHtoDNsPerMiB, pinned, p.calValue(func(k *Calibration) int64 { return k.PinnedHtoDNsPerMiB }), pinnedDefault)
	if c.PinnedHtoDNsPerMiB <= 0 {
		c.Sources["pinned_htod_ns_per_mib"] = PinnedSpeedUnknown
	}
	var recordNs, waitNs int64
	if len(record) >= 3 && len(waits) >= 3 {
		recordNs, waitNs = median(record), median(waits)
		c.RecordWaitNs = recordNs + waitNs
		c.Sources["record_wait_ns"] = "trace"
	} else {
		p.pick("record_wait_ns", &c.RecordWaitNs, nil, p.calValue(func(k *Calibration) int64 { return k.RecordWaitNs }), def.RecordWaitNs)
		recordNs, waitNs = c.RecordWaitNs/2, c.RecordWaitNs-c.RecordWaitNs/2
	}
	byTid := map[trace.GlobalTid][]int64{}
	var ovhGaps whatif.OverheadSamples
	for _, d := range ds {
		d.m.host.LaunchGaps(d.in, byTid)
		d.m.host.AddOverheadSamples(d.in, &ovhGaps)
	}
	c.inferred = whatif.InferOverheads(&ovhGaps, def.ProfilerOverheadNs)
	typical := whatif.TypicalGaps(byTid, whatif.LowerMiddle)
	for _, d := range ds {
		d.m.consts, d.m.launchCallNs = *c, launchCallNs
		d.m.setReplayParameters(d.rec, recordNs, waitNs)
		d.m.addSyncHostCode(typical)
		d.late.add(d.m, d.rec, d.in)
		d.rec, d.in = nil, nil
	}
	return *c
}

// latencySamples appends the launch latency of ops whose stream was idle
// before their call began.
func (m *model) latencySamples(r *recorded, in []bool, lat []int64) []int64 {
	for i := range m.calls {
		call, h := &m.calls[i], &m.host.Calls[i]
		if !in[i] {
			continue
		}
		for o := call.opLo; o < call.opHi; o++ {
			if op := &m.ops[o]; op.launched && r.ready[o] <= h.Start && op.recStart >= h.Start {
				lat = append(lat, op.recStart-h.Start)
			}
		}
	}
	return lat
}

// gapSamples appends the dispatch gap of ops queued behind their stream's
// previous op.
func (m *model) gapSamples(r *recorded, in []bool, latency int64, gaps []int64) []int64 {
	for i := range m.calls {
		call, h := &m.calls[i], &m.host.Calls[i]
		if !in[i] {
			continue
		}
		for o := call.opLo; o < call.opHi; o++ {
			// Not a copy from or into pageable memory: queued, it starts
			// when the host has staged its first chunk, tens of
			// microseconds after its stream is ready (gt_h2d_mixed: 30 µs).
			if op := &m.ops[o]; op.launched && !op.pageable && r.ready[o] > h.Start+latency && op.recStart >= r.ready[o] {
				gaps = append(gaps, op.recStart-r.ready[o])
			}
		}
	}
	return gaps
}

// blockSamples appends the sync overhead (nothing left to wait for) and
// wake-up (after the awaited work ends) of blocking calls.
func (m *model) blockSamples(r *recorded, in []bool, ovh, wake []int64) ([]int64, []int64) {
	for i := range m.calls {
		call, h := &m.calls[i], &m.host.Calls[i]
		if call.block < 0 || !in[i] {
			continue
		}
		if aw := r.awaited[call.block]; aw > h.Start {
			wake = append(wake, h.End-aw)
		} else {
			ovh = append(ovh, h.End-h.Start)
		}
	}
	return ovh, wake
}

// launchCallSamples appends the durations of the calls that launched GPU
// work (kernels, graphs, asynchronous copies) and are no sync's.
func (m *model) launchCallSamples(in []bool, out []int64) []int64 {
	for i := range m.calls {
		if h := &m.host.Calls[i]; in[i] && h.Sync < 0 && h.Launch {
			out = append(out, h.End-h.Start)
		}
	}
	return out
}

// setReplayParameters fixes each op's launch latency and gap and each
// block's overhead and wake-up: the recorded value for the constraint that
// bound it, the model constant (never more than recorded) for the other.
func (m *model) setReplayParameters(r *recorded, recordNs, waitNs int64) {
	c := &m.consts
	for i := range m.calls {
		call, h := &m.calls[i], &m.host.Calls[i]
		for o := call.opLo; o < call.opHi; o++ {
			op := &m.ops[o]
			ready := r.ready[o]
			switch {
			case !op.launched:
				op.lat = minTime
				if ready == minTime {
					op.gap = 0
					op.lat = op.recStart - h.Start // pinned where it ran, relative to its neighbour call
				} else {
					op.gap = op.recStart - ready
				}
			case ready > h.Start+c.LaunchLatencyNs: // queued behind its stream
				op.gap = op.recStart - ready
				op.lat = min(op.recStart-h.Start, c.LaunchLatencyNs)
			default: // launch-bound
				op.lat = op.recStart - h.Start
				op.gap = 0
				if ready != minTime {
					op.gap = min(op.recStart-ready, c.DispatchGapNs)
				}
			}
		}
		if call.block < 0 {
			continue
		}
		bl := &m.blocks[call.block]
		dur := h.End - h.Start
		aw := r.awaited[call.block]
		if aw > h.Start {
			bl.wake = h.End - aw
			bl.ovh = min(dur, c.SyncOverheadNs)
		} else {
			bl.ovh = dur
			bl.wake = 0
			if aw != minTime {
				bl.wake = min(h.End-aw, c.SyncWakeNs)
			}
		}
	}
	for i := range m.syncs {
		ss := &m.syncs[i]
		if ss.calls == nil || r.nextStream[i] < 0 {
			continue
		}
		next := r.nextStream[i]
		switch {
		case ss.stream >= 0 && ss.stream != next:
			ss.extraCost = recordNs + waitNs
			if ss.snap >= 0 { // the program recorded the event already
				ss.extraCost = waitNs
			}
		case ss.stream < 0:
			ss.extraCost = int64(r.activeOthers[i]) * (recordNs + waitNs)
		}
	}
}

// median returns the median of xs (the lower middle for an even count);
// it sorts xs in place.
func median(xs []int64) int64 { return whatif.Median(xs, whatif.LowerMiddle) }
