package cuda

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nsyssync/nsyssync/trace"
)

// graphStats describe the graph launches of gt_graph_item's region, as
// recorded or as replayed (medians over the launches; 0: not seen).
type graphStats struct {
	Launches int `json:"launches"`
	// LatencyNs: from the start of the launch call to the graph's start,
	// its stream idle (replayed: the start as the host sees the stamp).
	LatencyNs int64 `json:"latency_ns"`
	// CallNs: the launch call on the host (replayed: the driver calls).
	CallNs int64 `json:"call_ns"`
	// BodyNs: the graph's duration, first node's start to last node's end
	// (replayed: the spin's, on the GPU's clock).
	BodyNs int64 `json:"body_ns"`
	// EndToNextNs: from its end to the start of the next op of its stream
	// queued behind it (recorded only: the replayed copy is not stamped).
	EndToNextNs int64 `json:"end_to_next_ns"`
	// EndToSyncNs: from its end (replayed: as the host sees it) to the
	// return of the thread's next blocking call.
	EndToSyncNs int64 `json:"end_to_sync_ns"`
	// QueuedGapNs: from its end to the start of the next graph, launched
	// before it ended (GPU clock).
	QueuedGapNs int64 `json:"queued_gap_ns"`
	// StepNs: from its launch to the next launch, host.
	StepNs int64 `json:"step_ns"`
	// RegionNs: the replayed region (median of the rounds; recorded: the
	// plan's RecordedNs).
	RegionNs int64 `json:"region_ns"`
}

// recordedGraphStats reads graphStats from the export.
func recordedGraphStats(f *fixture, p *Plan) graphStats {
	calls := f.regionCalls()
	var ops []trace.Op
	for _, op := range f.tl.Ops {
		if _, ok := calls[callKey{op.GlobalPid, op.CorrelationID}]; ok {
			ops = append(ops, op)
		}
	}
	var lat, call, body, next, toSync, step []int64
	prevEnd := map[trace.StreamID]int64{}
	lastLaunch := int64(0)
	for i, op := range ops {
		c := calls[callKey{op.GlobalPid, op.CorrelationID}]
		idle := prevEnd[op.Stream] < c.Start
		prevEnd[op.Stream] = max(prevEnd[op.Stream], op.End)
		if op.Kind != trace.OpGraph {
			continue
		}
		if idle {
			lat = append(lat, op.Start-c.Start)
		}
		if lastLaunch != 0 {
			step = append(step, c.Start-lastLaunch)
		}
		lastLaunch = c.Start
		call, body = append(call, c.End-c.Start), append(body, op.End-op.Start)
		for _, n := range ops[i+1:] {
			if n.Stream == op.Stream {
				if nc := calls[callKey{n.GlobalPid, n.CorrelationID}]; nc.End < op.End {
					next = append(next, n.Start-op.End)
				}
				break
			}
		}
		if end, ok := nextSyncEnd(f.tl.Calls, c); ok {
			toSync = append(toSync, end-op.End)
		}
	}
	return graphStats{Launches: len(body), LatencyNs: median(lat), CallNs: median(call), BodyNs: median(body),
		EndToNextNs: median(next), EndToSyncNs: median(toSync), StepNs: median(step), RegionNs: p.RecordedNs}
}

// nextSyncEnd is the end of the first synchronize call of c's thread
// after c.
func nextSyncEnd(calls []trace.TimelineCall, c trace.TimelineCall) (int64, bool) {
	for _, x := range calls {
		if x.GlobalTid == c.GlobalTid && x.Start > c.Start && strings.Contains(x.Name, "Synchronize") {
			return x.End, true
		}
	}
	return 0, false
}

// stampPoller notes when the host first sees each stamp slot's start
// and end written, on the runner's clock.
type stampPoller struct {
	s          session
	r          *runner
	p          *probe
	start, end []int64
	stop       atomic.Bool
	done       chan struct{}
}

func (pl *stampPoller) run() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(pl.done)
	lo := 0
	for !pl.stop.Load() {
		n := min(int(pl.p.issued.Load()), pl.p.slots)
		for i := lo; i < n; i++ {
			if pl.end[i] != 0 {
				if i == lo {
					lo++
				}
				continue
			}
			st, en := pl.s.stamp(i)
			now := pl.r.now()
			if pl.start[i] == 0 && st != 0 {
				pl.start[i] = now
			}
			if en != 0 {
				pl.end[i] = now
			}
		}
	}
}

// probeRounds replays p rounds times with a probe and a stamp poller
// (after one warm-up run) and returns the replayed graphStats.
func probeRounds(s session, r *runner, p *Plan, slots, rounds int) (graphStats, error) {
	r.probe = newProbe(slots)
	defer func() { r.probe = nil }()
	if _, err := r.run(context.Background(), p); err != nil {
		return graphStats{}, err
	}
	var lat, call, body, toSync, queued, step, region []int64
	for range rounds {
		r.probe.taken()
		s.clearStamps()
		pl := &stampPoller{s: s, r: r, p: r.probe, start: make([]int64, slots), end: make([]int64, slots), done: make(chan struct{})}
		go pl.run()
		ns, err := r.run(context.Background(), p)
		pl.stop.Store(true)
		<-pl.done
		if err != nil {
			return graphStats{}, err
		}
		region = append(region, ns)
		rows, _ := r.probe.taken()
		var prev *probeRow
		for i := range rows {
			g := &rows[i]
			if g.Kind != WorkGraph || g.Ops == 0 || g.Stamp < 0 || pl.start[g.Stamp] == 0 || pl.end[g.Stamp] == 0 {
				continue
			}
			st, en := s.stamp(g.Stamp)
			body, call = append(body, int64(en-st)), append(call, g.Ret-g.Start)
			if prev == nil || pl.end[prev.Stamp] < g.Start {
				lat = append(lat, pl.start[g.Stamp]-g.Start)
			} else if _, pen := s.stamp(prev.Stamp); pen > 0 && st >= pen {
				queued = append(queued, int64(st-pen))
			}
			if prev != nil {
				step = append(step, g.Start-prev.Start)
			}
			for _, b := range rows[i+1:] {
				if b.Block != BlockNone {
					toSync = append(toSync, b.Ret-pl.end[g.Stamp])
					break
				}
			}
			prev = g
		}
	}
	return graphStats{Launches: len(body) / max(rounds, 1), LatencyNs: median(lat), CallNs: median(call), BodyNs: median(body),
		EndToSyncNs: median(toSync), QueuedGapNs: median(queued), StepNs: median(step), RegionNs: median(region)}, nil
}

// spinMicro times the spin kernel alone: idle launch latency as the host
// sees it, the launch call, and per op of 50 queued back to back, alone
// and each followed by a 4-byte device-to-host copy (20 µs asked each;
// event-timed).
type spinMicro struct {
	LatencyNs   int64 `json:"latency_ns"`
	CallNs      int64 `json:"call_ns"`
	ChainNs     int64 `json:"chain_per_op_ns"`
	CopyChainNs int64 `json:"chain_with_copy_per_op_ns"`
}

func measureSpinMicro(s session) (spinMicro, error) {
	base := time.Now()
	now := func() int64 { return int64(time.Since(base)) }
	var m spinMicro
	var lat, call []int64
	for range 50 {
		s.clearStamps()
		t0 := now()
		if err := s.spin(0, 2_000, oneWarp, 0); err != nil {
			return m, err
		}
		call = append(call, now()-t0)
		for deadline := t0 + int64(time.Second); ; {
			if st, _ := s.stamp(0); st != 0 {
				lat = append(lat, now()-t0)
				break
			}
			if now() > deadline {
				return m, errors.New("no stamp after 1 s")
			}
		}
		if err := s.syncStream(0); err != nil {
			return m, err
		}
	}
	m.LatencyNs, m.CallNs = median(lat), median(call)
	for _, withCopy := range []bool{false, true} {
		const n, ns = 50, 20_000
		steps := []error{s.spin(0, 400_000, oneWarp, -1), s.record(0, 0)}
		for range n {
			steps = append(steps, s.spin(0, ns, oneWarp, -1))
			if withCopy {
				steps = append(steps, s.copy(0, dirDtoH, 4))
			}
		}
		steps = append(steps, s.record(1, 0), s.syncStream(0))
		if err := errors.Join(steps...); err != nil {
			return m, err
		}
		el, err := s.elapsed(0, 1)
		if err != nil {
			return m, err
		}
		if withCopy {
			m.CopyChainNs = int64(el) / n
		} else {
			m.ChainNs = int64(el) / n
		}
	}
	return m, nil
}

// TestGPUGraphReplay measures how gt_graph_item's graph launches are
// replayed against the recording: the launch latency, the graph's
// duration, the time from its end to the next sync's return, and the
// gap between graphs queued back to back once the sync is removed; for
// each launch model. And the spin kernel alone (spinMicro).
func TestGPUGraphReplay(t *testing.T) {
	d := openTestGPU(t)
	f := loadFixture(t, "gt_graph_item", "measured")
	base, err := BuildPlan(f.tl, f.t, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	free, err := BuildPlan(f.tl, f.t, PlanOptions{Remove: [][]int{f.syncsInRange("sync:loss_item")}, ProfilerOverheadNs: gtProfilerOverheadNs})
	if err != nil {
		t.Fatal(err)
	}
	rec := recordedGraphStats(f, base)
	const slots = 512
	replayed := map[string]graphStats{}
	var micro spinMicro
	spec := sessionSpec{streams: len(base.Streams), events: max(base.Events, free.Events, 2), timing: true, copyBytes: max(base.CopyBytes, 4), stamps: slots}
	err = d.withSession(spec, func(s session) error {
		var err error
		if micro, err = measureSpinMicro(s); err != nil {
			return err
		}
		for _, lm := range []launchModel{launchGraphsAtEnd, launchAtStart} {
			r := &runner{sess: s, model: d.model, base: time.Now(), lim: d.lim, launch: lm}
			for _, pc := range []struct {
				name string
				p    *Plan
			}{{"unchanged", base}, {"free", free}} {
				st, err := probeRounds(s, r, pc.p, slots, 5)
				if err != nil {
					return err
				}
				replayed["launched "+lm.String()+", "+pc.name] = st
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded: %+v", rec)
	for k, v := range replayed {
		t.Logf("%s: %+v", k, v)
	}
	t.Logf("spin kernel: idle launch latency %d ns, call %d ns; back to back %d ns per op, with a copy each %d ns (20 µs asked)",
		micro.LatencyNs, micro.CallNs, micro.ChainNs, micro.CopyChainNs)
	writeOut(t, "graph_replay.json", map[string]any{"recorded": rec, "model": d.model, "replayed": replayed, "spin": micro})
	if st := replayed["launched "+launchGraphsAtEnd.String()+", unchanged"]; st.Launches != rec.Launches || st.BodyNs < rec.BodyNs-2_000 || st.BodyNs > rec.BodyNs+1_000 {
		t.Errorf("replayed graphs %+v: want the %d recorded launches, each within 2 µs of the recorded %d ns", st, rec.Launches, rec.BodyNs)
	}
}
