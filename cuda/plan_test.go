package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

var planFixtures = []string{
	"gt_cpu_copy", "gt_cpu_heavy_item", "gt_devsync_small", "gt_gemm_large_item", "gt_gemm_medium_item",
	"gt_graph_item", "gt_h2d_pageable", "gt_item_many", "gt_item_small", "gt_item_tiny", "gt_mlp_train",
	"gt_twostream_event", "gt_twostream_gemm", "gt_twostream_sync",
	"syncs_lean", "syncs_autograd", "multiproc_lean", "patterns_lean",
}

// TestPlanReplaysEveryCallOpAndSync checks, on every fixture, that the
// plan as recorded holds each region call once, each op launched in the
// region once, each blocking call of the inventory as a blocking action,
// and host time that adds up to the recording.
func TestPlanReplaysEveryCallOpAndSync(t *testing.T) {
	for _, name := range planFixtures {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, name, "measured")
			p, err := BuildPlan(f.tl, f.t, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			calls := f.regionCalls()
			wantOps, wantGraphs := 0, 0
			for _, op := range f.tl.Ops {
				if _, ok := calls[callKey{op.GlobalPid, op.CorrelationID}]; ok && op.CorrelationID != 0 {
					wantOps++
					if op.Kind == trace.OpGraph {
						wantGraphs++
					}
				}
			}
			wantBlocking := 0
			for _, s := range f.t.Syncs {
				for _, c := range s.Calls() {
					if _, ok := calls[callKey{s.GlobalPid, c.CorrelationID}]; ok && c.Blocking {
						wantBlocking++
					}
				}
			}
			if p.Counts.Actions != len(calls) {
				t.Errorf("%d actions, want one per region call: %d", p.Counts.Actions, len(calls))
			}
			if got := p.Counts.Spins + p.Counts.Copies + p.Counts.Memsets + p.Counts.Graphs; got < wantOps {
				t.Errorf("%d ops replayed, want at least the %d launched in the region", got, wantOps)
			}
			if p.Counts.Graphs != wantGraphs {
				t.Errorf("%d graph launches replayed, want the %d launched in the region", p.Counts.Graphs, wantGraphs)
			}
			if p.Counts.Blocking+p.Counts.Unblocked != wantBlocking {
				t.Errorf("%d blocking actions and %d unblocked, want %d together (the inventory's blocking calls)", p.Counts.Blocking, p.Counts.Unblocked, wantBlocking)
			}
			if p.RecordedNs < p.RegionNs {
				t.Errorf("recorded %d ns < region %d ns", p.RecordedNs, p.RegionNs)
			}
			if p.CopyBytes > DefaultMaxCopyBytes {
				t.Errorf("copy buffer of %d bytes, cap %d", p.CopyBytes, DefaultMaxCopyBytes)
			}
			checkIndices(t, p)
			checkHostTime(t, f, p)
		})
	}
}

// checkIndices: every stream, event slot and hand-off a plan names
// exists, and every slot waited for is recorded in the interval.
func checkIndices(t *testing.T, p *Plan) {
	t.Helper()
	for k, iv := range p.Intervals {
		recorded := map[int32]bool{}
		for _, tp := range iv.Threads {
			for _, e := range tp.EventOps {
				if e.Record {
					recorded[e.Slot] = true
				}
			}
		}
		for th, tp := range iv.Threads {
			for _, w := range tp.Work {
				if int(w.Stream) >= len(p.Streams) || w.Stream < 0 {
					t.Fatalf("interval %d thread %d: work on stream %d of %d", k, th, w.Stream, len(p.Streams))
				}
			}
			for _, e := range tp.EventOps {
				if int(e.Slot) >= p.Events || e.Slot < 0 || int(e.Stream) >= len(p.Streams) {
					t.Fatalf("interval %d thread %d: event op %+v out of range (%d slots, %d streams)", k, th, e, p.Events, len(p.Streams))
				}
				if !e.Record && !recorded[e.Slot] {
					t.Fatalf("interval %d thread %d: waits for slot %d, which nothing records", k, th, e.Slot)
				}
			}
			for i, a := range tp.Actions {
				if a.Block == BlockEvent && !recorded[a.Target] {
					t.Fatalf("interval %d thread %d action %d: synchronizes slot %d, which nothing records", k, th, i, a.Target)
				}
				if a.AfterThread >= 0 && (int(a.AfterThread) >= len(iv.Threads) || int(a.AfterAction) >= len(iv.Threads[a.AfterThread].Actions)) {
					t.Fatalf("interval %d thread %d action %d: hand-off to %d/%d out of range", k, th, i, a.AfterThread, a.AfterAction)
				}
			}
		}
	}
}

// checkHostTime: on each thread, the gaps and the recorded call
// durations add up to the end of its last call.
func checkHostTime(t *testing.T, f *fixture, p *Plan) {
	t.Helper()
	calls := f.regionCalls()
	for k, iv := range p.Intervals {
		for _, tp := range iv.Threads {
			var sum, last int64
			for _, a := range tp.Actions {
				c := calls[callKey{tp.GlobalTid.Process(), a.Corr}]
				sum += a.Gap + c.End - c.Start
				last = max(last, c.End)
			}
			if want := last - iv.Start; sum != want {
				t.Errorf("interval %d thread %d: gaps + call durations = %d ns, want %d (last call's end)", k, tp.GlobalTid, sum, want)
			}
		}
	}
}

// TestPlanWithoutSyncs removes each ground-truth site and checks what
// goes: its blocking calls, its device-to-host copies, the host time
// between its own calls; and what stays: host-to-device data, GPU-side
// order across streams.
func TestPlanWithoutSyncs(t *testing.T) {
	for _, tc := range []struct {
		name       string
		site       string
		copiesKept bool // a host-to-device copy: made asynchronous
		rewrites   bool // another stream: ordered by events instead
	}{
		{"gt_item_tiny", "sync:loss_item", false, false},
		{"gt_cpu_copy", "sync:to_cpu", false, false},
		{"gt_h2d_pageable", "sync:h2d", true, false},
		{"gt_devsync_small", "sync:device_sync", false, false},
		{"gt_twostream_sync", "sync:side_sync", false, true},
		{"gt_twostream_event", "sync:event_sync", false, true},
		{"gt_twostream_gemm", "sync:device_sync", false, true},
		{"gt_mlp_train", "sync:accuracy", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := loadFixture(t, tc.name, "measured")
			group := f.syncsInRange(tc.site)
			if len(group) == 0 {
				t.Fatalf("no syncs in %s", tc.site)
			}
			base, err := BuildPlan(f.tl, f.t, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p, err := BuildPlan(f.tl, f.t, PlanOptions{Remove: [][]int{group}, KeepHostCode: true})
			if err != nil {
				t.Fatal(err)
			}
			checkIndices(t, p)
			if p.Removed != len(group) {
				t.Errorf("removed %d syncs, want %d", p.Removed, len(group))
			}
			in := map[int32]bool{}
			for _, si := range group {
				in[int32(si)] = true
			}
			var baseGap, gap, removedCallGaps int64
			copies := 0
			for k, iv := range p.Intervals {
				for th, tp := range iv.Threads {
					for _, a := range tp.Actions {
						gap += a.Gap
						if a.Sync >= 0 && in[a.Sync] && a.Block != BlockNone {
							t.Errorf("removed sync %d still blocks (%s)", a.Sync, a.Name)
						}
					}
					for _, w := range tp.Work {
						if w.Kind == WorkCopy {
							copies++
						}
					}
					btp := &base.Intervals[k].Threads[th]
					for i, a := range btp.Actions {
						baseGap += a.Gap
						// The gap before a removed sync's second call goes.
						if i > 0 && a.Sync >= 0 && in[a.Sync] && btp.Actions[i-1].Sync == a.Sync {
							removedCallGaps += a.Gap
						}
					}
				}
			}
			if baseGap-gap != removedCallGaps {
				t.Errorf("host gaps fell by %d ns, want %d (the gaps between each removed sync's own calls)", baseGap-gap, removedCallGaps)
			}
			if tc.copiesKept && copies != base.Counts.Copies {
				t.Errorf("%d copies, want the %d host-to-device copies kept", copies, base.Counts.Copies)
			}
			if !tc.copiesKept && base.Counts.Copies > 0 && copies >= base.Counts.Copies {
				t.Errorf("%d copies left of %d: the removed syncs' copies should go", copies, base.Counts.Copies)
			}
			if tc.rewrites != (p.Counts.Rewrites > 0) {
				t.Errorf("%d rewrites; want some: %v", p.Counts.Rewrites, tc.rewrites)
			}
			cut, err := BuildPlan(f.tl, f.t, PlanOptions{Remove: [][]int{group}})
			if err != nil {
				t.Fatal(err)
			}
			var cutGap int64
			for _, iv := range cut.Intervals {
				for _, tp := range iv.Threads {
					for _, a := range tp.Actions {
						cutGap += a.Gap
					}
				}
			}
			// The host code around a sync goes with it, unless its rewrite
			// keeps work on the host (as in the simulator): every
			// host-to-device copy; a sync of other streams where later work
			// must be ordered after it (a rewrite action).
			switch keepsAll := tc.copiesKept || (tc.rewrites && cut.Counts.Rewrites == cut.Removed); {
			case keepsAll && cutGap != gap:
				t.Errorf("host gaps %d ns with the host code cut, %d kept: every rewrite keeps work on the host, so its code stays", cutGap, gap)
			case !keepsAll && cutGap >= gap:
				t.Errorf("host gaps %d ns with the host code cut, %d kept: want less", cutGap, gap)
			}
		})
	}
}

// TestPlanCrossStreamAndThreads checks the replayed dependencies of the
// two-stream, two-thread and two-process fixtures.
func TestPlanCrossStreamAndThreads(t *testing.T) {
	sync := loadFixture(t, "gt_twostream_sync", "measured")
	p, err := BuildPlan(sync.tl, sync.t, PlanOptions{Remove: [][]int{sync.syncsInRange("sync:side_sync")}})
	if err != nil {
		t.Fatal(err)
	}
	rewrites := 0
	for _, tp := range p.Intervals[0].Threads {
		for _, a := range tp.Actions {
			if a.Name != "rewrite" {
				continue
			}
			rewrites++
			ops := tp.EventOps[a.EventLo:a.EventHi]
			if len(ops) != 2 || !ops[0].Record || ops[1].Record || p.Streams[ops[0].Stream].Stream != 13 || p.Streams[ops[1].Stream].Stream != 7 {
				t.Fatalf("rewrite of side.synchronize() = %+v, want a record on stream 13 and a wait on stream 7 (main.wait_stream(side))", ops)
			}
		}
	}
	if rewrites != 30 {
		t.Errorf("%d rewrites, want one per step (30)", rewrites)
	}

	ev := loadFixture(t, "gt_twostream_event", "measured")
	p, err = BuildPlan(ev.tl, ev.t, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventSyncs, waits := 0, 0
	for _, tp := range p.Intervals[0].Threads {
		slotStream := map[int32]trace.StreamID{}
		for _, e := range tp.EventOps {
			if e.Record {
				slotStream[e.Slot] = p.Streams[e.Stream].Stream
			} else {
				waits++
			}
		}
		for _, a := range tp.Actions {
			if a.Block == BlockEvent {
				eventSyncs++
				if slotStream[a.Target] != 13 {
					t.Errorf("%s waits for slot %d recorded on stream %d, want the side stream 13", a.Name, a.Target, slotStream[a.Target])
				}
			}
		}
	}
	if eventSyncs != 30 || waits != 30 {
		t.Errorf("%d event syncs and %d stream waits, want 30 and 30", eventSyncs, waits)
	}

	mlp := loadFixture(t, "gt_mlp_train", "measured")
	p, err = BuildPlan(mlp.tl, mlp.t, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Intervals[0].Threads) != 2 || p.Counts.HandOffs < 30 {
		t.Errorf("%d threads, %d hand-offs: want the main and the autograd thread, handing off each step", len(p.Intervals[0].Threads), p.Counts.HandOffs)
	}

	mp := loadFixture(t, "multiproc_lean", "measured")
	p, err = BuildPlan(mp.tl, mp.t, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pids, tids := map[trace.GlobalPid]bool{}, map[trace.GlobalTid]bool{}
	for _, s := range p.Streams {
		pids[s.Pid] = true
	}
	for _, iv := range p.Intervals {
		for _, tp := range iv.Threads {
			tids[tp.GlobalTid] = true
		}
	}
	if len(pids) != 2 || len(tids) != 2 {
		t.Errorf("streams of %d processes, %d threads; want 2 and 2", len(pids), len(tids))
	}
}

func TestPlanLimits(t *testing.T) {
	f := loadFixture(t, "gt_item_tiny", "measured")
	if _, err := BuildPlan(f.tl, f.t, PlanOptions{MaxCalls: 10}); !errors.Is(err, ErrRegionTooLarge) {
		t.Errorf("MaxCalls 10: err = %v, want ErrRegionTooLarge", err)
	}
	empty := *f.t
	empty.Region = trace.Region{}
	if _, err := BuildPlan(f.tl, &empty, PlanOptions{}); err == nil {
		t.Error("a region of no duration: no error")
	}
	// A copy larger than the cap is copied up to the cap and spun for the
	// rest of its time.
	cp := loadFixture(t, "gt_cpu_copy", "measured")
	p, err := BuildPlan(cp.tl, cp.t, PlanOptions{MaxCopyBytes: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	if p.CopyBytes != 1<<16 {
		t.Errorf("copy buffer %d bytes, want the 64 KiB cap", p.CopyBytes)
	}
	if p.Counts.Spins <= 390 {
		t.Errorf("%d spins: the copies beyond the cap should add a spin each", p.Counts.Spins)
	}
}

// TestPlanUnblocksCallsThatWaitedForNothing: a blocking call whose own
// op ran after it returned, on a stream idle when it began (a pageable
// host-to-device copy returns once staged), is replayed by its recorded
// host time, not as a wait for its copy; the other blocking calls of the
// same loop still wait.
func TestPlanUnblocksCallsThatWaitedForNothing(t *testing.T) {
	f := loadFixture(t, "gt_h2d_medium", "measured")
	p, err := BuildPlan(f.tl, f.t, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opEnd := map[int64]int64{}
	for _, op := range f.tl.Ops {
		opEnd[op.CorrelationID] = max(opEnd[op.CorrelationID], op.End)
	}
	callOf := map[int64]*trace.TimelineCall{}
	for i := range f.tl.Calls {
		callOf[f.tl.Calls[i].CorrelationID] = &f.tl.Calls[i]
	}
	var copies, syncs int
	for _, iv := range p.Intervals {
		for _, tp := range iv.Threads {
			for _, a := range tp.Actions {
				c := callOf[a.Corr]
				if c == nil || a.Sync < 0 {
					continue
				}
				switch {
				case strings.HasPrefix(a.Name, "cudaMemcpyAsync"):
					copies++
					if a.Block != BlockNone || a.Dur != c.End-c.Start {
						t.Errorf("%s (correlation id %d): block %d, %d ns; want none and its recorded %d ns", a.Name, a.Corr, a.Block, a.Dur, c.End-c.Start)
					}
					if opEnd[a.Corr] <= c.End {
						t.Errorf("%s (correlation id %d): its copy ended before the call returned, yet unblocked", a.Name, a.Corr)
					}
				case a.Block != BlockNone:
					syncs++
				}
			}
		}
	}
	if copies == 0 || copies != p.Counts.Unblocked || syncs == 0 {
		t.Errorf("%d pageable copies unblocked (plan: %d), %d syncs still waiting; want every copy and some syncs", copies, p.Counts.Unblocked, syncs)
	}
}
