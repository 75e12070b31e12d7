package cuda

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// wakeRow is one wake-up measurement of TestGPUProbeWake.
type wakeRow struct {
	Sync    string `json:"sync"`
	Streams int    `json:"streams"`
	SpinNs  int64  `json:"spin_ns"`
	WakeNs  int64  `json:"wake_ns"`
	// IdleNs: the same synchronize called with nothing queued.
	IdleNs int64 `json:"idle_ns"`
	// Launch: the spin's grid and block (one warp unless an export's
	// recorded footprint).
	Launch string `json:"launch"`
}

// TestGPUProbeWake (NSYSSYNC_PROBE_WAKE=1) measures the wake-up of each
// kind of synchronize the replay makes — of a stream, of an event, of the
// context — in sessions of one and of several streams: from the end of
// a spin (its stamp) to the return of the call, and what the call costs
// with nothing queued. Diagnostic: it says whether a replayed context
// synchronize (a cudaFree's implicit wait) can keep up with a recorded
// one.
func TestGPUProbeWake(t *testing.T) {
	if os.Getenv("NSYSSYNC_PROBE_WAKE") == "" {
		t.Skip("diagnostic: NSYSSYNC_PROBE_WAKE=1 runs it")
	}
	d := openTestGPU(t)
	launches := []spinLaunch{oneWarp}
	if names := os.Getenv("NSYSSYNC_PROBE"); names != "" {
		seen := map[spinLaunch]bool{oneWarp: true}
		for _, name := range strings.Split(names, ",") {
			f := loadFixture(t, name, "measured")
			p, err := BuildPlan(f.tl, f.t, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, sh := range p.Shapes {
				if l := d.lim.launch(sh); !seen[l] {
					seen[l] = true
					launches = append(launches, l)
				}
			}
		}
	}
	var rows []wakeRow
	for _, streams := range []int{1, 4} {
		err := d.withSession(sessionSpec{streams: streams, events: 1, stamps: 1}, func(s session) error {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := s.bind(); err != nil {
				return err
			}
			syncs := []struct {
				name string
				do   func() error
			}{
				{"stream", func() error { return s.syncStream(0) }},
				{"event", func() error { return s.syncEvent(0) }},
				{"context", s.syncContext},
			}
			for _, l := range launches {
				for _, ns := range []int64{2_000, 20_000} {
					for _, sy := range syncs {
						row := wakeRow{Sync: sy.name, Streams: streams, SpinNs: ns, Launch: fmt.Sprintf("%dx%d", l.grid, l.block)}
						var err error
						row.WakeNs, err = wakeUpWith(s, 41, ns, l, func() error { return s.record(0, 0) }, sy.do)
						if err != nil {
							return fmt.Errorf("%s: %w", sy.name, err)
						}
						row.IdleNs, err = idleCallNs(41, sy.do)
						if err != nil {
							return fmt.Errorf("%s: %w", sy.name, err)
						}
						rows = append(rows, row)
						t.Logf("%-7s streams %d spin %6d ns %8s: wake %5d ns, idle call %5d ns", sy.name, streams, ns, row.Launch, row.WakeNs, row.IdleNs)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	writeOut(t, "probe_wake.json", rows)
}

// idleCallNs is the median host time of sync with nothing queued.
func idleCallNs(trials int, sync func() error) (int64, error) {
	var ns []int64
	for range trials {
		t0 := time.Now()
		if err := sync(); err != nil {
			return 0, err
		}
		ns = append(ns, int64(time.Since(t0)))
	}
	return median(ns), nil
}

// probeRowOut is a probe row with its first op's GPU times on the host
// clock, and what the plan asked of the action.
type probeRowOut struct {
	probeRow
	Gap      int64 `json:"gap"`
	Dur      int64 `json:"dur"`
	Tail     int64 `json:"tail"`
	GPUStart int64 `json:"gpu_start,omitempty"`
	GPUEnd   int64 `json:"gpu_end,omitempty"`
}

// gpuClockOffset returns host ns (on the runner's clock) minus GPU ns:
// the smallest difference between seeing a stamp and the stamp, over
// trials.
func gpuClockOffset(r *runner, trials int) (int64, error) {
	best := int64(0)
	for k := range trials {
		r.sess.clearStamps()
		if err := r.sess.spin(0, 1_000, oneWarp, 0); err != nil {
			return 0, err
		}
		deadline := time.Now().Add(time.Second)
		for {
			if st, _ := r.sess.stamp(0); st != 0 {
				off := r.now() - int64(st)
				if k == 0 || off < best {
					best = off
				}
				break
			}
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("the spin kernel never started (no stamp after 1 s)")
			}
		}
		if err := r.sess.syncStream(0); err != nil {
			return 0, err
		}
	}
	return best, nil
}

func probeRowsOut(rows []probeRow, actions []Action, s session, off int64) []probeRowOut {
	out := make([]probeRowOut, len(rows))
	for i, row := range rows {
		a := &actions[i]
		o := probeRowOut{probeRow: row, Gap: a.Gap, Dur: a.Dur, Tail: a.Tail}
		if row.Stamp >= 0 {
			if st, end := s.stamp(row.Stamp); st != 0 {
				o.GPUStart, o.GPUEnd = int64(st)+off, int64(end)+off
			}
		}
		out[i] = o
	}
	return out
}

// wantRows says whether the probe should write its rows for name.
func wantRows(name string) bool {
	v := os.Getenv("NSYSSYNC_PROBE_ROWS")
	return v != "" && strings.Contains(","+v+",", ","+name+",")
}

// TestGPUProbeReplayRounds (NSYSSYNC_PROBE=export,…;
// NSYSSYNC_PROBE_REPLAY=1) replays each export as the replay does,
// alone and interleaved with the plan without every sync of its
// "measured" range, 35 rounds each, and logs where the recorded plan's
// rounds fall: whether the interleaving moves the self-check.
func TestGPUProbeReplayRounds(t *testing.T) {
	exports := os.Getenv("NSYSSYNC_PROBE")
	if exports == "" || os.Getenv("NSYSSYNC_PROBE_REPLAY") == "" {
		t.Skip("diagnostic: NSYSSYNC_PROBE=… NSYSSYNC_PROBE_REPLAY=1 runs it")
	}
	d := openTestGPU(t)
	out := map[string][]int64{}
	// NSYSSYNC_PROBE_SPIN_MEMSETS=1: alone, memsets set and spun, twice
	// in turn, instead of alone and interleaved.
	ab := os.Getenv("NSYSSYNC_PROBE_SPIN_MEMSETS") != ""
	for _, name := range strings.Split(exports, ",") {
		f := loadFixture(t, name, "measured")
		variants := []ReplayOptions{{Repeat: 35}, {Repeat: 35, MaxWall: time.Minute}}
		groupsOf := [][]Group{nil, {{ID: "all", Syncs: f.syncsInRange("measured")}}}
		if ab {
			variants = []ReplayOptions{{Repeat: 35}, {Repeat: 35, spinMemsets: true}, {Repeat: 35}, {Repeat: 35, spinMemsets: true}}
			groupsOf = [][]Group{nil, nil, nil, nil}
		}
		for k, groups := range groupsOf {
			res, err := d.ReplayTimeline(context.Background(), f.tl, f.t, groups, variants[k])
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			runs := slices.Clone(res.Unchanged.RunsNs)
			slices.Sort(runs)
			var q []string
			for _, frac := range []float64{0, .1, .25, .5, .75, .9, 1} {
				ns := runs[int(frac*float64(len(runs)-1))]
				q = append(q, fmt.Sprintf("%+.1f", 100*float64(ns-res.RecordedNs)/float64(res.RecordedNs)))
			}
			key := fmt.Sprintf("%s/%d groups", name, len(groups))
			if ab {
				key = fmt.Sprintf("%s/spin memsets %v/%d", name, variants[k].spinMemsets, k)
			}
			out[key] = res.Unchanged.RunsNs
			t.Logf("%s: self-check %+.2f%%; quantiles %s", key, 100*res.SelfCheckError, strings.Join(q, " "))
		}
	}
	writeOut(t, "probe_replay_rounds.json", out)
}
