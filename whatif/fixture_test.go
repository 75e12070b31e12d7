package whatif

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/trace"
)

// regionHost builds the host graph of a fixture's region the way both
// the simulator and the replay do: calls that start in the region, the
// syncs' calls, and a call
// launches when an op carries its correlation id.
func regionHost(t *testing.T, name string) (*Host, *trace.Trace) {
	t.Helper()
	ctx := context.Background()
	x, err := trace.Open(ctx, fixturegz.Path(filepath.Join("..", "fixtures"), name))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	tr, err := x.Load(ctx, trace.LoadOptions{NVTX: "measured"})
	if err != nil {
		t.Fatal(err)
	}
	r := tr.Region
	tl, err := x.Timeline(ctx, trace.Interval{Start: r.Start, End: r.End})
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		pid  trace.GlobalPid
		corr int64
	}
	idx := map[key]int32{}
	h := NewHost(len(tl.Calls), len(tr.Syncs))
	for _, c := range tl.Calls {
		if r.Contains(c.Start) {
			idx[key{c.GlobalTid.Process(), c.CorrelationID}] = h.Add(c.GlobalTid, c.Start, c.End)
		}
	}
	for _, op := range tl.Ops {
		if ci, ok := idx[key{op.GlobalPid, op.CorrelationID}]; ok && op.CorrelationID != 0 {
			h.Calls[ci].Launch = true
		}
	}
	for si := range tr.Syncs {
		s := &tr.Syncs[si]
		for _, c := range s.Calls() {
			if ci, ok := idx[key{s.GlobalPid, c.CorrelationID}]; ok {
				h.ClaimSyncCall(int32(si), ci)
			}
		}
	}
	return h, tr
}

// TestHandOffsOnTrainingLoop: in the recorded training loop, backward
// runs on PyTorch's autograd thread while the main thread waits; every
// step hands off both ways, and each link is to another thread's call
// that ended inside the resumed thread's idle gap.
func TestHandOffsOnTrainingLoop(t *testing.T) {
	h, _ := regionHost(t, "gt_mlp_train")
	h.LinkHandOffs()
	if len(h.Threads) != 2 {
		t.Fatalf("%d threads, want the main and the autograd thread", len(h.Threads))
	}
	into := make([]int, len(h.Threads))
	for i, c := range h.Calls {
		if c.Dep < 0 {
			continue
		}
		d := h.Calls[c.Dep]
		if d.Thread == c.Thread || d.End > c.Start || d.End <= c.Start-c.Gap || c.Lag != c.Start-d.End {
			t.Fatalf("call %d %+v: hand-off from %+v, not another thread's call ending in its gap", i, c, d)
		}
		into[c.Thread]++
	}
	if into[0] < 29 || into[1] < 29 {
		t.Errorf("hand-offs into each thread: %v, want one a step (30 steps) each way", into)
	}
}

// TestHostCodeOnGroundTruth: on every ground-truth loop, each sync's host
// code is within one typical launch gap on each side, and a loop whose
// sync sits in Python code between launches has some to cut.
func TestHostCodeOnGroundTruth(t *testing.T) {
	total := int64(0)
	for _, name := range []string{"gt_item_tiny", "gt_item_small", "gt_cpu_copy", "gt_cpu_heavy_item", "gt_devsync_small",
		"gt_h2d_pageable", "gt_mlp_train", "gt_twostream_event", "gt_twostream_sync"} {
		t.Run(name, func(t *testing.T) {
			h, _ := regionHost(t, name)
			byTid := map[trace.GlobalTid][]int64{}
			h.LaunchGaps(nil, byTid)
			typical := TypicalGaps(byTid, LowerMiddle)
			if len(typical) == 0 {
				t.Fatal("no thread with a typical launch gap")
			}
			for si, cut := range h.HostCode(typical) {
				if len(h.SyncCalls[si]) == 0 {
					if cut != (Cut{}) {
						t.Errorf("sync %d outside the region: cut %+v", si, cut)
					}
					continue
				}
				typ := typical[h.Threads[h.Calls[h.SyncCalls[si][0]].Thread].Tid]
				if cut.Before < 0 || cut.After < 0 || cut.Before > typ || cut.After > typ {
					t.Errorf("sync %d: cut %+v beyond [0, %d]", si, cut, typ)
				}
				total += cut.Before + cut.After
			}
		})
	}
	if total == 0 {
		t.Error("no host code around any ground-truth sync")
	}
}

// TestKeepsCopyOnGroundTruth: the pageable host-to-device loop's copies
// are kept (their data must reach the GPU), each on its own call alone;
// the device-to-host loop's are not.
func TestKeepsCopyOnGroundTruth(t *testing.T) {
	for _, tc := range []struct {
		name string
		keep bool
	}{{"gt_h2d_pageable", true}, {"gt_cpu_copy", false}, {"gt_item_tiny", false}} {
		t.Run(tc.name, func(t *testing.T) {
			_, tr := regionHost(t, tc.name)
			copies := 0
			for i := range tr.Syncs {
				s := &tr.Syncs[i]
				if s.Copy == nil {
					continue
				}
				copies++
				if CopiesToDevice(s) != tc.keep || KeepsCopy(s, s.Copy.CorrelationID) != tc.keep {
					t.Fatalf("sync %d (%s): copies to the device %v, kept %v; want %v", i, s.Reason, CopiesToDevice(s), KeepsCopy(s, s.Copy.CorrelationID), tc.keep)
				}
				if KeepsCopy(s, s.Copy.CorrelationID+1) {
					t.Fatalf("sync %d: a call other than its copy's kept", i)
				}
			}
			if copies == 0 {
				t.Fatal("no copy sync")
			}
		})
	}
}
