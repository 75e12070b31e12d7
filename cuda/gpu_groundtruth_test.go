package cuda

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/whatif"
)

// truthFile is the part of a ground-truth file (fixtures/gt_*.truth.json)
// the replay is scored against.
type truthFile struct {
	Scenario string `json:"scenario"`
	Fixture  string `json:"fixture"`
	Kernels  string `json:"kernels"`
	Streams  int    `json:"streams"`
	Region   string `json:"region"`
	Variants []struct {
		Variant  string   `json:"variant"`
		Removed  []string `json:"removed_sites"`
		Measured float64  `json:"measured_saved_fraction"`
		PassMin  *float64 `json:"pass_min"`
		PassMax  *float64 `json:"pass_max"`
	} `json:"variants"`
}

// gtRow is one scored variant.
type gtRow struct {
	Scenario  string  `json:"scenario"`
	Variant   string  `json:"variant"`
	Kernels   string  `json:"kernels"`
	Streams   int     `json:"streams"`
	Measured  float64 `json:"measured"`
	PassMin   float64 `json:"pass_min"`
	PassMax   float64 `json:"pass_max"`
	Replayed  float64 `json:"replayed"`     // profiler overhead taken off
	RangeLo   float64 `json:"replayed_lo"`  // min over rounds
	RangeHi   float64 `json:"replayed_hi"`  // max over rounds
	Raw       float64 `json:"replayed_raw"` // on the recording as it is
	SelfCheck float64 `json:"self_check"`
	// Within: within target of the measured interval [PassMin, PassMax]
	// (what the test asserts); WithinMedian: of the median alone.
	Within          bool  `json:"within_target"`
	WithinMedian    bool  `json:"within_target_median"`
	RawWithin       bool  `json:"raw_within_target"`
	RawWithinMedian bool  `json:"raw_within_target_median"`
	RecordedNs      int64 `json:"recorded_ns"`
	// Medians of the rounds: the recording replayed, the baseline (the
	// profiler's overhead taken off) and the replay without the sites;
	// BaselineNs is the region's duration the saving is a fraction of.
	UnchangedNs      int64 `json:"unchanged_ns"`
	BaselineReplayNs int64 `json:"baseline_replay_ns"`
	WithoutNs        int64 `json:"without_ns"`
	BaselineNs       int64 `json:"baseline_ns"`
	// UnchangedRunsNs: the recording's replays, round by round.
	UnchangedRunsNs []int64 `json:"unchanged_runs_ns"`
}

// withinTarget: within 2 percentage points or 20% of the measured saving
// (its median), whichever is larger, of the measured interval [lo, hi]
// (the saving's range over the timing passes; lo = hi = the median scores
// against the median alone).
func withinTarget(got, measured, lo, hi float64) bool {
	return toInterval(got, measured, lo, hi) <= math.Max(0.02, 0.2*math.Abs(measured))
}

// toInterval is the distance from got to [lo, hi] widened to hold the
// median measured (0 inside it).
func toInterval(got, measured, lo, hi float64) float64 {
	lo, hi = min(lo, measured), max(hi, measured)
	return max(lo-got, got-hi, 0)
}

// gtProfilerOverheadNs is the simulator's default per-call profiler
// overhead (estimate.DefaultCalibration, docs/estimator.md).
const gtProfilerOverheadNs = 3_700

// launchOverhead reports whether NSYSSYNC_GPU_LAUNCH_OVERHEAD=1 asks the
// replays to read the profiler's overhead off each region's launches
// (ReplayOptions.OverheadFromLaunches, `replay --overhead-from-launches`)
// in place of the default; a calibration wins over it.
func launchOverhead(t *testing.T) bool {
	t.Helper()
	on := os.Getenv("NSYSSYNC_GPU_LAUNCH_OVERHEAD") == "1"
	if on {
		t.Log("profiler overhead read off each region's launches (NSYSSYNC_GPU_LAUNCH_OVERHEAD=1)")
	}
	return on
}

// calibratedOverheads reads NSYSSYNC_GPU_CALIBRATION, a profile of
// nsyssync calibrate --profiler-overhead: its overheads per kind of call
// (or its flat one, for a kind it lacks) replace the default flat one, and the files the tests keep get the
// suffix "_calibrated". Unset: nil, "".
func calibratedOverheads(t *testing.T) (*whatif.Overheads, string) {
	t.Helper()
	path := os.Getenv("NSYSSYNC_GPU_CALIBRATION")
	if path == "" {
		return nil, ""
	}
	c, err := estimate.LoadCalibration(path)
	if err != nil {
		t.Fatal(err)
	}
	o := c.ProfilerOverheads.ByKindOr(c.ProfilerOverheadNs) // as `replay --calibration` does
	for k, v := range o {
		if v <= 0 {
			t.Fatalf("%s: no profiler overhead for %s calls", path, whatif.OverheadKind(k))
		}
	}
	t.Logf("profiler overheads per kind from %s: %v", path, o)
	return &o, "_calibrated"
}

// The models TestGPUGroundTruth compares, by environment variable: how
// spins are shaped (NSYSSYNC_OCCUPANCY), the per-op overhead they are
// charged (NSYSSYNC_SPIN_OVERHEAD), when a launch's GPU work is issued
// (NSYSSYNC_LAUNCH), how the host waits (NSYSSYNC_WAIT), whether calls
// that replay as nothing are run (NSYSSYNC_NOOPS). The first name of each
// is the replay's.
var testModels = []struct {
	env   string
	names []string
	set   func(o *ReplayOptions, i int)
}{
	{"NSYSSYNC_OCCUPANCY", []string{"recorded", "footprint", "one-warp"}, func(o *ReplayOptions, i int) { o.occupancy = occupancyModel(i) }},
	{"NSYSSYNC_SPIN_OVERHEAD", []string{"footprint", "one-warp"}, func(o *ReplayOptions, i int) { o.overhead = overheadModel(i) }},
	{"NSYSSYNC_LAUNCH", []string{"graph-end", "end", "start"}, func(o *ReplayOptions, i int) { o.launch = launchModel(i) }},
	{"NSYSSYNC_WAIT", []string{"precise", "yield"}, func(o *ReplayOptions, i int) { o.wait = waitModel(i) }},
	{"NSYSSYNC_NOOPS", []string{"paced", "called"}, func(o *ReplayOptions, i int) { o.callNoops = i == 1 }},
}

// testReplayModels returns the replay options the environment chooses,
// and the suffix of the files the test keeps ("" for the replay's own
// models; "_occupancy-one-warp" for NSYSSYNC_OCCUPANCY=one-warp, and so on).
func testReplayModels(t *testing.T) (ReplayOptions, string) {
	var o ReplayOptions
	suffix := ""
	for _, m := range testModels {
		name := os.Getenv(m.env)
		i := slices.Index(m.names, name)
		switch {
		case name == "" || i == 0:
		case i < 0:
			t.Fatalf("%s=%q: want one of %s", m.env, name, strings.Join(m.names, ", "))
		default:
			m.set(&o, i)
			suffix += "_" + strings.ToLower(strings.TrimPrefix(m.env, "NSYSSYNC_")) + "-" + name
		}
	}
	return o, suffix
}

// TestGPUGroundTruth replays every ground-truth scenario as recorded and
// without each measured variant's sites, and scores the replayed saving
// against the measured one. NSYSSYNC_OCCUPANCY chooses how spins are
// shaped, to compare the models.
func TestGPUGroundTruth(t *testing.T) {
	d := openTestGPU(t)
	models, suffix := testReplayModels(t)
	overheads, calSuffix := calibratedOverheads(t)
	suffix += calSuffix
	t.Logf("occupancy: %s; spin overhead: %s; launches issued %s; waits: %s; no-op calls run: %v", models.occupancy, models.overhead, models.launch, models.wait, models.callNoops)
	files, err := filepath.Glob("../fixtures/gt_*.truth.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no ground-truth files: %v", err)
	}
	var rows []gtRow
	for _, path := range files {
		var tf truthFile
		readTruth(t, path, &tf)
		f := loadFixture(t, strings.TrimSuffix(tf.Fixture, ".sqlite.gz"), tf.Region)
		var groups []Group
		for _, v := range tf.Variants {
			g := Group{ID: v.Variant}
			for _, site := range v.Removed {
				g.Syncs = append(g.Syncs, f.syncsInRange(site)...)
			}
			groups = append(groups, g)
		}
		opt := models
		opt.Repeat, opt.ProfilerOverheadNs, opt.ProfilerOverheads = 10, gtProfilerOverheadNs, overheads
		opt.OverheadFromLaunches = overheads == nil && launchOverhead(t) // as `replay --overhead-from-launches` does
		res, err := d.ReplayTimeline(context.Background(), f.tl, f.t, groups, opt)
		if err != nil {
			t.Fatalf("%s: %v", tf.Scenario, err)
		}
		opt.ProfilerOverheadNs, opt.ProfilerOverheads, opt.OverheadFromLaunches = 0, nil, false
		raw, err := d.ReplayTimeline(context.Background(), f.tl, f.t, groups, opt)
		if err != nil {
			t.Fatalf("%s: %v", tf.Scenario, err)
		}
		for i, v := range tf.Variants {
			s, r := res.Sites[i], raw.Sites[i]
			row := gtRow{Scenario: tf.Scenario, Variant: v.Variant, Kernels: tf.Kernels, Streams: tf.Streams, Measured: v.Measured,
				PassMin: v.Measured, PassMax: v.Measured, Replayed: s.SavedFraction,
				RangeLo: float64(s.SavedMinNs) / float64(res.BaselineNs), RangeHi: float64(s.SavedMaxNs) / float64(res.BaselineNs),
				Raw: r.SavedFraction, SelfCheck: raw.SelfCheckError, RecordedNs: res.RecordedNs,
				UnchangedNs: raw.Unchanged.MedianNs, BaselineNs: res.BaselineNs, WithoutNs: s.Without.MedianNs,
				UnchangedRunsNs: raw.Unchanged.RunsNs}
			if res.Baseline != nil {
				row.BaselineReplayNs = res.Baseline.MedianNs
			}
			if v.PassMin != nil && v.PassMax != nil {
				row.PassMin, row.PassMax = *v.PassMin, *v.PassMax
			}
			m, lo, hi := row.Measured, row.PassMin, row.PassMax
			row.Within, row.RawWithin = withinTarget(row.Replayed, m, lo, hi), withinTarget(row.Raw, m, lo, hi)
			row.WithinMedian, row.RawWithinMedian = withinTarget(row.Replayed, m, m, m), withinTarget(row.Raw, m, m, m)
			rows = append(rows, row)
		}
	}
	table := groundTruthTable(rows)
	t.Logf("\n%s", table)
	writeOut(t, "replay_groundtruth"+suffix+".json", map[string]any{"gpu": d.Identity(), "model": d.model, "occupancy": models.occupancy.String(),
		"spin_overhead": models.overhead.String(), "launch": models.launch.String(), "wait": models.wait.String(), "call_noops": models.callNoops, "footprint_overheads": footprintTable(d), "rows": rows})
	if dir := os.Getenv("NSYSSYNC_GPU_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "replay_table"+suffix+".md"), []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	within := 0
	selfChecks := map[string]float64{}
	for _, r := range rows {
		if r.Within {
			within++
		}
		selfChecks[r.Scenario] = r.SelfCheck
	}
	checkSelfChecks(t, selfChecks)
	if within*5 < len(rows)*4 {
		t.Errorf("%d of %d replayed savings within 2 pp or 20%% of the measured interval: want at least 80%%", within, len(rows))
	}
}

func groundTruthTable(rows []gtRow) string {
	var b strings.Builder
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	yes := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "**no**"
	}
	b.WriteString("| scenario | variant | kernels | streams | measured saved (pass range) | replayed (round range) | error (pp) | to the interval (pp) | within target | against the median | replayed, no profiler correction | self-check |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var within, median, rawWithin, rawMedian int
	count := func(n *int, ok bool) {
		if ok {
			*n++
		}
	}
	for _, r := range rows {
		count(&within, r.Within)
		count(&median, r.WithinMedian)
		count(&rawWithin, r.RawWithin)
		count(&rawMedian, r.RawWithinMedian)
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s (%.1f to %.1f) | %s (%.1f to %.1f) | %+.1f | %.1f | %s | %s | %s (%s) | %+.2f%% |\n",
			r.Scenario, r.Variant, r.Kernels, r.Streams, pct(r.Measured), 100*r.PassMin, 100*r.PassMax,
			pct(r.Replayed), 100*r.RangeLo, 100*r.RangeHi, 100*(r.Replayed-r.Measured), 100*toInterval(r.Replayed, r.Measured, r.PassMin, r.PassMax),
			yes(r.Within), yes(r.WithinMedian), pct(r.Raw), yes(r.RawWithin), 100*r.SelfCheck)
	}
	n := len(rows)
	fmt.Fprintf(&b, "\n%d of %d replayed savings within target of the measured interval (%.0f%%); against the median alone: %d of %d.\n",
		within, n, 100*float64(within)/float64(max(n, 1)), median, n)
	fmt.Fprintf(&b, "Without the profiler correction: %d of %d of the interval; against the median alone: %d of %d.\n", rawWithin, n, rawMedian, n)
	return b.String()
}

// footprintTable lists the per-op overheads the device measured for the
// footprints it replayed.
func footprintTable(d *Device) []map[string]int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []map[string]int64
	for l, ns := range d.overNs {
		out = append(out, map[string]int64{"grid": int64(l.grid), "block": int64(l.block), "shared": int64(l.shared), "overhead_ns": ns})
	}
	slices.SortFunc(out, func(a, b map[string]int64) int { return int(a["overhead_ns"] - b["overhead_ns"]) })
	return out
}

// TestWithinTarget scores against the measured interval and its median.
func TestWithinTarget(t *testing.T) {
	for _, c := range []struct {
		got, measured, lo, hi float64
		want                  bool
	}{
		{0.059, 0.073, 0.070, 0.076, true},    // 1.1 pp below the interval
		{0.059, 0.073, 0.073, 0.073, true},    // 1.4 pp below the median
		{0.050, 0.073, 0.073, 0.073, false},   // 2.3 pp below the median
		{0.049, 0.073, 0.070, 0.076, false},   // 2.1 pp below the interval
		{0.016, -0.011, -0.018, -0.001, true}, // 1.7 pp above the interval
		{0.418, 0.282, 0.272, 0.291, false},   // 12.7 pp above, bound 5.6
		{0.330, 0.282, 0.272, 0.291, true},    // 3.9 pp above, bound 5.6
		{0.065, 0.080, 0.090, 0.095, true},    // the interval widened to the median
	} {
		if got := withinTarget(c.got, c.measured, c.lo, c.hi); got != c.want {
			t.Errorf("withinTarget(%v, %v, [%v, %v]) = %v, want %v", c.got, c.measured, c.lo, c.hi, got, c.want)
		}
	}
}
