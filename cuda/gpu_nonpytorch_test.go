package cuda

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/trace"
	"github.com/nsyssync/nsyssync/whatif"
)

// npTruthFile is what the replay reads of a non-PyTorch ground-truth file
// (fixtures/nonpytorch/NAME.MODE.truth.json): the export and the saving
// measured without the profiler, as written against as rewritten.
type npTruthFile struct {
	Fixture  string                     `json:"fixture"`
	Label    struct{ Framework string } `json:"label"`
	Measured *measuredSaving            `json:"measured"`
}

// measuredSaving is a saving measured without the profiler: the fraction
// of a step as written that the rewrite saved, and the interval its timing
// passes span.
type measuredSaving struct {
	SavingFraction float64    `json:"saving_fraction"`
	Interval       [2]float64 `json:"saving_fraction_interval"`
}

// npRow is one non-PyTorch export replayed.
type npRow struct {
	Fixture   string  `json:"fixture"`
	Framework string  `json:"framework"`
	Syncs     int     `json:"syncs"`
	Measured  float64 `json:"measured"`
	Lo        float64 `json:"measured_lo"`
	Hi        float64 `json:"measured_hi"`
	Replayed  float64 `json:"replayed"`
	Raw       float64 `json:"replayed_raw"`
	SelfCheck float64 `json:"self_check"`
	Within    bool    `json:"within_target"`
	// IdleLaunchNs: the recording's median launch latency of ops whose
	// stream was idle (idleLaunchLatency).
	IdleLaunchNs int64 `json:"idle_launch_latency_ns"`
}

// TestGPUGroundTruthNonPyTorch replays the non-PyTorch ground truth (the
// CUDA C++ loops and CuPy programs of fixtures/nonpytorch, captured lean
// and with nsys's defaults) on the GPU: each export's "measured" region as
// recorded (the self-check) and without every sync in it (the labelled
// waits: the non-PyTorch score checks that they are exactly those), and
// scores the replayed saving against the one measured without the
// profiler. Exports whose waits the trace does not show (JAX) have nothing
// to replay.
func TestGPUGroundTruthNonPyTorch(t *testing.T) {
	d := openTestGPU(t)
	overheads, suffix := calibratedOverheads(t)
	paths, err := filepath.Glob("../fixtures/nonpytorch/*.truth.json")
	if err != nil || len(paths) < 16 {
		t.Fatalf("%d non-PyTorch truth files: %v", len(paths), err)
	}
	sort.Strings(paths)
	dir := t.TempDir()
	var rows []npRow
	for _, path := range paths {
		var tf npTruthFile
		readTruth(t, path, &tf)
		if tf.Measured == nil {
			continue
		}
		gz := filepath.Join("..", "fixtures", "nonpytorch", tf.Fixture)
		if row, ok := replayMeasured(t, d, overheads, gz, tf.Label.Framework, *tf.Measured, dir); ok {
			rows = append(rows, row)
		}
	}
	within, _ := logReplayRows(t, rows)
	writeOut(t, "replay_nonpytorch"+suffix+".json", map[string]any{"gpu": d.Identity(), "rows": rows})
	if len(rows) < 36 {
		t.Errorf("%d non-PyTorch exports replayed, want the 36 whose waits the trace shows", len(rows))
	}
	holdReplayRows(t, rows, within, npFloorWithin)
}

// holdReplayRows fails when fewer than floor rows are within target or
// when a self-check is off by more than the issue's ±5%.
func holdReplayRows(t *testing.T, rows []npRow, within, floor int) {
	t.Helper()
	if within < floor {
		t.Errorf("%d of %d replayed savings within target, floor %d", within, len(rows), floor)
	}
	for _, r := range rows {
		if math.Abs(r.SelfCheck) > npSelfCheckLimit {
			t.Errorf("%s: self-check %+.1f%%, limit ±%.0f%%", r.Fixture, 100*r.SelfCheck, 100*npSelfCheckLimit)
		}
	}
}

// replayMeasured replays the "measured" region of one gzipped export as
// recorded (the self-check) and without every sync in it (the rewrite
// removes them all), and scores the replayed saving against the measured
// one. ok is false when the trace shows no wait there.
func replayMeasured(t *testing.T, d *Device, overheads *whatif.Overheads, gz, framework string, m measuredSaving, dir string) (row npRow, ok bool) {
	t.Helper()
	name := strings.TrimSuffix(filepath.Base(gz), ".sqlite.gz")
	f := loadFixtureFile(t, fixturegz.Gunzip(t, gz, dir), name, "measured")
	syncs := f.syncsInRange("measured")
	if len(syncs) == 0 {
		return row, false // the waits are not in the trace
	}
	groups := []Group{{ID: "rewritten", Syncs: syncs}}
	opt := ReplayOptions{Repeat: 10, ProfilerOverheadNs: gtProfilerOverheadNs, ProfilerOverheads: overheads,
		OverheadFromLaunches: overheads == nil && launchOverhead(t)} // as `replay --overhead-from-launches` does
	res, err := d.ReplayTimeline(context.Background(), f.tl, f.t, groups, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	opt.ProfilerOverheadNs, opt.ProfilerOverheads, opt.OverheadFromLaunches = 0, nil, false
	raw, err := d.ReplayTimeline(context.Background(), f.tl, f.t, groups, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	row = npRow{Fixture: name, Framework: framework, Syncs: len(syncs), Measured: m.SavingFraction,
		Lo: m.Interval[0], Hi: m.Interval[1], Replayed: res.Sites[0].SavedFraction, Raw: raw.Sites[0].SavedFraction,
		SelfCheck: raw.SelfCheckError, IdleLaunchNs: idleLaunchLatency(f)}
	row.Within = withinTarget(row.Replayed, row.Measured, row.Lo, row.Hi)
	return row, true
}

// logReplayRows logs the rows as the Markdown table of the docs and
// returns how many are within target and the largest self-check error.
func logReplayRows(t *testing.T, rows []npRow) (within int, worst float64) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("| export | framework | syncs | idle launch latency | measured (interval) | replayed | raw | self-check | within |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %s | %s | %d | %.0f µs | %.1f%% (%.1f–%.1f) | %.1f%% | %.1f%% | %+.1f%% | %v |\n", r.Fixture, r.Framework, r.Syncs,
			float64(r.IdleLaunchNs)/1e3, 100*r.Measured, 100*r.Lo, 100*r.Hi, 100*r.Replayed, 100*r.Raw, 100*r.SelfCheck, r.Within)
		if r.Within {
			within++
		}
		worst = max(worst, math.Abs(r.SelfCheck))
	}
	fmt.Fprintf(&sb, "\nwithin target: %d of %d; largest self-check error %.1f%%\n", within, len(rows), 100*worst)
	t.Logf("\n%s", sb.String())
	return within, worst
}

// The non-PyTorch replay's bounds. Its first run on an H100 (stop 20)
// gave 13 of 16 within target, with self-checks of −35% and −36% on two
// C++ captures whose recordings started each step's first kernel about
// 1 ms after its launch: they had been captured side by side with other
// captures on one GPU (estimate's shared-GPU warning names it). Re-captured
// one at a time (2026-11-28): 15 of 16 within target, every self-check
// within ±0.8%; with the 20 held-out exports of 2026-11-28 (two C++ and
// CuPy needed copies, eight CuPy programs), 28 of 36 within ±0.9%. The
// floor leaves two scenarios to a machine's noise, the limit is the
// issue's ±5%.
const (
	npFloorWithin    = 26
	npSelfCheckLimit = 0.05
)

// idleLaunchLatency is the median, over the region's ops launched onto an
// idle stream (its previous op ended before the launch call began), of the
// time from the launch call's start to the op's; 0 when there is none.
func idleLaunchLatency(f *fixture) int64 {
	calls := f.regionCalls()
	lastEnd := map[trace.StreamID]int64{}
	var lat []int64
	for _, op := range f.tl.Ops {
		prev, seen := lastEnd[op.Stream]
		lastEnd[op.Stream] = max(prev, op.End)
		c, ok := calls[callKey{op.GlobalPid, op.CorrelationID}]
		if ok && inRegion(f.t.Region, op.Start) && (!seen || prev < c.Start) && op.Start >= c.Start {
			lat = append(lat, op.Start-c.Start)
		}
	}
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return lat[len(lat)/2]
}
