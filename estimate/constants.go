package estimate

import (
	"slices"

	"github.com/nsyssync/nsyssync/trace"
)

// deriveConstants reads the model constants off the recorded timeline
// (falling back to the calibration, then the defaults) and turns each op's
// and block's recorded timing into replay parameters that reproduce the
// recording exactly when nothing is removed.
func (m *model) deriveConstants(tl *trace.Timeline, r *recorded, cal *Calibration) {
	p := newConstantPicker(cal)
	c := &p.out
	def := p.defaults

	// Launch latency: ops whose stream was idle before the call began.
	var lat []int64
	for i := range m.calls {
		call := &m.calls[i]
		for o := call.opLo; o < call.opHi; o++ {
			if op := &m.ops[o]; op.launched && r.ready[o] <= call.start && op.recStart >= call.start {
				lat = append(lat, op.recStart-call.start)
			}
		}
	}
	p.pick("launch_latency_ns", &c.LaunchLatencyNs, lat, p.calValue(func(k *Calibration) int64 { return k.LaunchLatencyNs }), def.LaunchLatencyNs)

	// Dispatch gap: ops queued behind their stream's previous op.
	var gaps []int64
	for i := range m.calls {
		call := &m.calls[i]
		for o := call.opLo; o < call.opHi; o++ {
			if op := &m.ops[o]; op.launched && r.ready[o] > call.start+c.LaunchLatencyNs && op.recStart >= r.ready[o] {
				gaps = append(gaps, op.recStart-r.ready[o])
			}
		}
	}
	p.pick("dispatch_gap_ns", &c.DispatchGapNs, gaps, p.calValue(func(k *Calibration) int64 { return k.DispatchGapNs }), def.DispatchGapNs)

	// Sync overhead (nothing left to wait for) and wake-up (after the
	// awaited work ends).
	var ovh, wake []int64
	for i := range m.calls {
		call := &m.calls[i]
		if call.block < 0 {
			continue
		}
		if aw := r.awaited[call.block]; aw > call.start {
			wake = append(wake, call.end-aw)
		} else {
			ovh = append(ovh, call.end-call.start)
		}
	}
	p.pick("sync_overhead_ns", &c.SyncOverheadNs, ovh, p.calValue(func(k *Calibration) int64 { return k.SyncOverheadNs }), def.SyncOverheadNs)
	p.pick("sync_wake_ns", &c.SyncWakeNs, wake, p.calValue(func(k *Calibration) int64 { return k.SyncWakeNs }), def.SyncWakeNs)

	var scalar, record, waitCalls, launchCalls []int64
	for i := range m.calls {
		if call := &m.calls[i]; call.sync < 0 && call.opHi > call.opLo && m.ops[call.opLo].launched {
			launchCalls = append(launchCalls, call.end-call.start)
		}
	}
	m.launchCallNs = c.LaunchLatencyNs
	if len(launchCalls) > 0 {
		m.launchCallNs = median(launchCalls)
	}
	for _, op := range tl.Ops {
		if op.Kind == trace.OpMemcpy && op.Name == "memcpy DtoH" && op.Bytes <= 64 {
			scalar = append(scalar, op.End-op.Start)
		}
	}
	for _, call := range tl.Calls {
		switch {
		case isRecordCall(call.Name):
			record = append(record, call.End-call.Start)
		case isStreamWaitCall(call.Name):
			waitCalls = append(waitCalls, call.End-call.Start)
		}
	}
	p.pick("d2h_scalar_copy_ns", &c.D2HScalarCopyNs, scalar, p.calValue(func(k *Calibration) int64 { return k.D2HScalarCopyNs }), def.D2HScalarCopyNs)
	var recordNs, waitNs int64
	if len(record) >= 3 && len(waitCalls) >= 3 {
		recordNs, waitNs = median(record), median(waitCalls)
		c.RecordWaitNs = recordNs + waitNs
		c.Sources["record_wait_ns"] = "trace"
	} else {
		p.pick("record_wait_ns", &c.RecordWaitNs, nil, p.calValue(func(k *Calibration) int64 { return k.RecordWaitNs }), def.RecordWaitNs)
		recordNs, waitNs = c.RecordWaitNs/2, c.RecordWaitNs-c.RecordWaitNs/2
	}
	m.consts = *c
	m.setReplayParameters(r, recordNs, waitNs)
}

// setReplayParameters fixes each op's launch latency and gap and each
// block's overhead and wake-up: the recorded value for the constraint that
// bound it, the model constant (never more than recorded) for the other.
func (m *model) setReplayParameters(r *recorded, recordNs, waitNs int64) {
	c := &m.consts
	for i := range m.calls {
		call := &m.calls[i]
		for o := call.opLo; o < call.opHi; o++ {
			op := &m.ops[o]
			ready := r.ready[o]
			switch {
			case !op.launched:
				op.lat = minTime
				if ready == minTime {
					op.gap = 0
					op.lat = op.recStart - call.start // pinned where it ran, relative to its neighbour call
				} else {
					op.gap = op.recStart - ready
				}
			case ready > call.start+c.LaunchLatencyNs: // queued behind its stream
				op.gap = op.recStart - ready
				op.lat = min(op.recStart-call.start, c.LaunchLatencyNs)
			default: // launch-bound
				op.lat = op.recStart - call.start
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
		dur := call.end - call.start
		aw := r.awaited[call.block]
		if aw > call.start {
			bl.wake = call.end - aw
			bl.ovh = min(dur, c.SyncOverheadNs)
		} else {
			bl.ovh = dur
			bl.wake = 0
			if aw != minTime {
				bl.wake = min(call.end-aw, c.SyncWakeNs)
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
func median(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[(len(xs)-1)/2]
}
