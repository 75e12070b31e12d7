package cuda

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func fakeDevice(t *testing.T, g *fakeGPU) *Device {
	t.Helper()
	d, err := newDevice(g, nil)
	if err != nil {
		t.Fatalf("opening the fake GPU: %v", err)
	}
	return d
}

// checkReleased: every session the GPU gave out was released.
func checkReleased(t *testing.T, g *fakeGPU) {
	t.Helper()
	for i, s := range g.sessions {
		if n := s.counts["release"]; n != 1 {
			t.Errorf("session %d released %d times, want 1", i, n)
		}
	}
}

// TestRunnerIssuesThePlan runs each plan once on the fake GPU and checks
// that every spin, copy, event op and sync of the plan reached the
// driver, and that the replay took at least the host time the plan paces.
func TestRunnerIssuesThePlan(t *testing.T) {
	for _, name := range []string{"gt_item_tiny", "gt_twostream_event", "gt_mlp_train", "multiproc_lean", "gt_cpu_copy", "gt_graph_item"} {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, name, "measured")
			p, err := BuildPlan(f.tl, f.t, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			g := &fakeGPU{}
			s, err := g.newSession(sessionSpec{streams: len(p.Streams), events: p.Events, copyBytes: p.CopyBytes})
			if err != nil {
				t.Fatal(err)
			}
			r := &runner{sess: s, base: time.Now()}
			got, err := r.run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{}
			var paced int64
			for _, iv := range p.Intervals {
				want["spin"] += len(iv.Pending)
				want["sync context"]++ // the GPU drained at the interval's end
				for th, tp := range iv.Threads {
					if _, ok := iv.warmStream(th); ok {
						want["spin"]++ // the thread's launches warmed before the clock
					}
					var threadPaced int64
					for _, w := range tp.Work {
						switch w.Kind {
						case WorkCopy:
							want["copy "+w.Dir.String()]++
						case WorkMemset:
							want["memset"]++
						default:
							want["spin"]++
						}
					}
					for _, e := range tp.EventOps {
						if e.Record {
							want["record"]++
						} else {
							want["wait"]++
						}
					}
					for _, a := range tp.Actions {
						switch a.Block {
						case BlockStream:
							want["sync stream"]++
						case BlockEvent:
							want["sync event"]++
						case BlockContext:
							want["sync context"]++
						}
						if a.AfterThread < 0 {
							threadPaced += a.Gap
						}
						threadPaced += a.Dur
					}
					if th == iv.Anchor {
						paced += threadPaced + iv.TrailingNs
					}
				}
			}
			counts := g.counts()
			for k, n := range want {
				if counts[k] != n {
					t.Errorf("%s: %d issued, the plan has %d", k, counts[k], n)
				}
			}
			if got < paced {
				t.Errorf("replayed in %d ns, less than the %d ns of host time the plan paces", got, paced)
			}
		})
	}
}

func groundTruthGroups(f *fixture) []Group {
	seen := map[string]bool{}
	var out []Group
	for _, s := range f.t.Syncs {
		for _, r := range s.NVTX() {
			if strings.HasPrefix(r.Name, "sync:") && !seen[r.Name] {
				seen[r.Name] = true
				out = append(out, Group{ID: r.Name, Syncs: f.syncsInRange(r.Name)})
			}
		}
	}
	return out
}

func TestReplayOnFakeGPU(t *testing.T) {
	f := loadFixture(t, "gt_mlp_train", "measured")
	g := &fakeGPU{}
	d := fakeDevice(t, g)
	groups := groundTruthGroups(f)
	res, err := d.ReplayTimeline(context.Background(), f.tl, f.t, groups, ReplayOptions{Repeat: 2, ProfilerOverheadNs: 3_700})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sites) != 3 || res.Baseline == nil || res.Repeat != 2 || len(res.Unchanged.RunsNs) != 2 {
		t.Fatalf("result: %d sites, baseline %v, repeat %d, %d runs; want 3 sites, a baseline, 2 and 2", len(res.Sites), res.Baseline, res.Repeat, len(res.Unchanged.RunsNs))
	}
	for _, s := range res.Sites {
		if s.Syncs != 30 || s.GPU != "Fake GPU" || len(s.Without.RunsNs) != 2 || s.SavedMinNs > s.SavedNs || s.SavedNs > s.SavedMaxNs {
			t.Errorf("site %+v", s)
		}
	}
	// The three sites count whole: the total replays them together.
	if tot := res.Total; len(tot.SiteIDs) != 3 || tot.Syncs != 90 || len(tot.ExcludedSiteIDs)+len(tot.BoundedSiteIDs) != 0 {
		t.Errorf("total %+v, want the 3 sites' 90 syncs together", tot)
	}
	if res.BaselineNs <= 0 || res.ProfilerOverheadNs != 3_700 {
		t.Errorf("baseline %d ns, profiler overhead %d ns", res.BaselineNs, res.ProfilerOverheadNs)
	}
	// The GPU is faked, the host pacing is not: the unchanged replay
	// cannot be shorter than the recording's host time.
	if res.Unchanged.MinNs < res.RegionNs*9/10 {
		t.Errorf("unchanged replay %d ns, recorded %d ns", res.Unchanged.MinNs, res.RegionNs)
	}
	checkReleased(t, g)
	if err := d.Close(); err != nil || g.closed != 1 {
		t.Errorf("close: %v, %d closes", err, g.closed)
	}
}

// TestReplayFailedLaunch makes the fake fail a launch mid-replay: the
// error names the op, the call and the driver's error, and the session
// is released.
func TestReplayFailedLaunch(t *testing.T) {
	f := loadFixture(t, "gt_item_tiny", "measured")
	g := &fakeGPU{}
	d := fakeDevice(t, g)
	// A first replay measures the footprints' overheads, so that the
	// failure falls in the replay itself.
	if _, err := d.ReplayTimeline(context.Background(), f.tl, f.t, nil, ReplayOptions{Repeat: 1}); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	g.failSpinAt = g.spins + 40
	g.mu.Unlock()
	_, err := d.ReplayTimeline(context.Background(), f.tl, f.t, groundTruthGroups(f), ReplayOptions{Repeat: 1})
	var de *DriverError
	if !errors.As(err, &de) || de.Code != 719 {
		t.Fatalf("err = %v, want the driver's launch failure", err)
	}
	for _, want := range []string{"cudaLaunchKernel", "correlation id", "op \"", "CUDA_ERROR_LAUNCH_FAILED", "Fake GPU"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	checkReleased(t, g)
}

func TestReplayCancelledAndTooLong(t *testing.T) {
	f := loadFixture(t, "gt_item_tiny", "measured")
	g := &fakeGPU{}
	d := fakeDevice(t, g)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.ReplayTimeline(ctx, f.tl, f.t, nil, ReplayOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	checkReleased(t, g)
	_, err := d.ReplayTimeline(context.Background(), f.tl, f.t, groundTruthGroups(f), ReplayOptions{MaxWall: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "--site") {
		t.Errorf("over the wall-time limit: err = %v, want advice naming --site", err)
	}
}

func TestCalibrateOnFakeGPU(t *testing.T) {
	g := &fakeGPU{}
	d := fakeDevice(t, g)
	c, err := d.Calibrate(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if c.TimerStepNs != 32 || c.SpinOverheadNs != 1_000 || c.Samples != 10 || c.GPU.Name != "Fake GPU" {
		t.Errorf("calibration %+v: want the fake's 32 ns timer step and 1 µs per spin", c)
	}
	if c.DispatchGapNs < 0 || c.SyncOverheadNs < 0 || c.LaunchLatencyNs <= 0 {
		t.Errorf("calibration %+v", c)
	}
	checkReleased(t, g)
}

// TestProbeOnFakeGPU: a diagnostic replay notes every action once, and
// stamps the first GPU op of each action that launches one, graphs
// included.
func TestProbeOnFakeGPU(t *testing.T) {
	f := loadFixture(t, "gt_graph_item", "measured")
	p, err := BuildPlan(f.tl, f.t, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, lm := range []launchModel{launchGraphsAtEnd, launchAtStart} {
		t.Run(lm.String(), func(t *testing.T) {
			g := &fakeGPU{}
			s, err := g.newSession(sessionSpec{streams: len(p.Streams), events: p.Events, copyBytes: p.CopyBytes, stamps: 64})
			if err != nil {
				t.Fatal(err)
			}
			r := &runner{sess: s, base: time.Now(), launch: lm, model: DeviceModel{LaunchCallNs: 1_000}, probe: newProbe(64)}
			if _, err := r.run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			rows, stamped := r.probe.taken()
			graphs := 0
			for _, row := range rows {
				if row.Kind != WorkGraph || row.Ops == 0 {
					continue
				}
				graphs++
				if st, end := s.stamp(row.Stamp); row.Stamp < 0 || end <= st || row.Start > row.Ret || row.Ret > row.End {
					t.Errorf("graph action %+v: stamp %d to %d", row, st, end)
				}
				// Issued at the end of the recorded call, the launch returns at
				// most the launch call before the action's end: the runner
				// waits for it. Issued at the start, when it returns depends
				// on how far behind a slow host (the race detector) runs, so
				// only the stamps and the order are checked.
				if lm == launchGraphsAtEnd && row.Ret < row.End-1_000 {
					t.Errorf("%s: graph action %+v returned %d ns before its end", lm, row, row.End-row.Ret)
				}
			}
			if len(rows) != p.Counts.Actions || graphs != p.Counts.Graphs || stamped != min(64, p.Counts.Graphs+p.Counts.Spins) {
				t.Errorf("%d rows, %d graphs, %d stamped: want %d actions, %d graphs", len(rows), graphs, stamped, p.Counts.Actions, p.Counts.Graphs)
			}
		})
	}
}

// TestIssueAt: a launch that does not block is issued the device's launch
// call before its recorded call's end under launchAtEnd (a graph's alone
// under launchGraphsAtEnd); copies, blocking calls and calls without work
// at once.
func TestIssueAt(t *testing.T) {
	spin, graph, cp := Work{Kind: WorkSpin}, Work{Kind: WorkGraph}, Work{Kind: WorkCopy}
	for _, tc := range []struct {
		name  string
		model launchModel
		block BlockKind
		dur   int64
		work  []Work
		want  int64
	}{
		{"kernel", launchAtEnd, BlockNone, 7_000, []Work{spin}, 3_000},
		{"graph", launchAtEnd, BlockNone, 7_000, []Work{graph}, 3_000},
		{"call shorter than the device's", launchAtEnd, BlockNone, 3_000, []Work{spin}, 0},
		{"copy", launchAtEnd, BlockNone, 7_000, []Work{cp}, 0},
		{"spin and copy", launchAtEnd, BlockNone, 7_000, []Work{spin, cp}, 0},
		{"blocking", launchAtEnd, BlockStream, 7_000, []Work{spin}, 0},
		{"no work", launchAtEnd, BlockNone, 7_000, nil, 0},
		{"graph, graphs only", launchGraphsAtEnd, BlockNone, 7_000, []Work{graph}, 3_000},
		{"kernel, graphs only", launchGraphsAtEnd, BlockNone, 7_000, []Work{spin}, 0},
		{"at the start", launchAtStart, BlockNone, 7_000, []Work{graph}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &runner{launch: tc.model, model: DeviceModel{LaunchCallNs: 4_000}}
			a := &Action{Dur: tc.dur, Block: tc.block}
			if got := r.issueAt(a, tc.work, 100_000) - 100_000; got != tc.want {
				t.Errorf("issued %d ns into the action, want %d", got, tc.want)
			}
		})
	}
}
