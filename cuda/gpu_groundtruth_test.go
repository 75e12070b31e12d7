package cuda

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
	Scenario   string  `json:"scenario"`
	Variant    string  `json:"variant"`
	Kernels    string  `json:"kernels"`
	Streams    int     `json:"streams"`
	Measured   float64 `json:"measured"`
	PassMin    float64 `json:"pass_min"`
	PassMax    float64 `json:"pass_max"`
	Replayed   float64 `json:"replayed"`     // profiler overhead taken off
	RangeLo    float64 `json:"replayed_lo"`  // min over rounds
	RangeHi    float64 `json:"replayed_hi"`  // max over rounds
	Raw        float64 `json:"replayed_raw"` // on the recording as it is
	SelfCheck  float64 `json:"self_check"`
	Within     bool    `json:"within_target"`
	RawWithin  bool    `json:"raw_within_target"`
	RecordedNs int64   `json:"recorded_ns"`
	// Medians of the rounds: the recording replayed, the baseline (the
	// profiler's overhead taken off) and the replay without the sites;
	// BaselineNs is the region's duration the saving is a fraction of.
	UnchangedNs      int64 `json:"unchanged_ns"`
	BaselineReplayNs int64 `json:"baseline_replay_ns"`
	WithoutNs        int64 `json:"without_ns"`
	BaselineNs       int64 `json:"baseline_ns"`
}

// withinTarget: within 2 percentage points or 20% of the measured saving,
// whichever is larger.
func withinTarget(got, measured float64) bool {
	return math.Abs(got-measured) <= math.Max(0.02, 0.2*math.Abs(measured))
}

// gtProfilerOverheadNs is the simulator's default per-call profiler
// overhead (estimate.DefaultCalibration, docs/estimator.md).
const gtProfilerOverheadNs = 3_700

// The models TestGPUGroundTruth compares, by environment variable: how
// spins are shaped (NSYSSYNC_OCCUPANCY), the per-op overhead they are
// charged (NSYSSYNC_SPIN_OVERHEAD), when a launch's GPU work is issued
// (NSYSSYNC_LAUNCH). The first name of each is the replay's.
var testModels = []struct {
	env   string
	names []string
	set   func(o *ReplayOptions, i int)
}{
	{"NSYSSYNC_OCCUPANCY", []string{"recorded", "footprint", "one-warp"}, func(o *ReplayOptions, i int) { o.occupancy = occupancyModel(i) }},
	{"NSYSSYNC_SPIN_OVERHEAD", []string{"footprint", "one-warp"}, func(o *ReplayOptions, i int) { o.overhead = overheadModel(i) }},
	{"NSYSSYNC_LAUNCH", []string{"graph-end", "end", "start"}, func(o *ReplayOptions, i int) { o.launch = launchModel(i) }},
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
	t.Logf("occupancy: %s; spin overhead: %s; launches issued %s", models.occupancy, models.overhead, models.launch)
	files, err := filepath.Glob("../fixtures/gt_*.truth.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no ground-truth files: %v", err)
	}
	var rows []gtRow
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var tf truthFile
		if err := json.Unmarshal(b, &tf); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		f := loadFixture(t, strings.TrimSuffix(tf.Fixture, ".sqlite"), tf.Region)
		var groups []Group
		for _, v := range tf.Variants {
			g := Group{ID: v.Variant}
			for _, site := range v.Removed {
				g.Syncs = append(g.Syncs, f.syncsInRange(site)...)
			}
			groups = append(groups, g)
		}
		opt := models
		opt.Repeat, opt.ProfilerOverheadNs = 10, gtProfilerOverheadNs
		res, err := d.ReplayTimeline(context.Background(), f.tl, f.t, groups, opt)
		if err != nil {
			t.Fatalf("%s: %v", tf.Scenario, err)
		}
		opt.ProfilerOverheadNs = 0
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
				UnchangedNs: raw.Unchanged.MedianNs, BaselineNs: res.BaselineNs, WithoutNs: s.Without.MedianNs}
			if res.Baseline != nil {
				row.BaselineReplayNs = res.Baseline.MedianNs
			}
			if v.PassMin != nil && v.PassMax != nil {
				row.PassMin, row.PassMax = *v.PassMin, *v.PassMax
			}
			row.Within, row.RawWithin = withinTarget(row.Replayed, row.Measured), withinTarget(row.Raw, row.Measured)
			rows = append(rows, row)
		}
	}
	table := groundTruthTable(rows)
	t.Logf("\n%s", table)
	writeOut(t, "replay_groundtruth"+suffix+".json", map[string]any{"gpu": d.Identity(), "model": d.model, "occupancy": models.occupancy.String(),
		"spin_overhead": models.overhead.String(), "launch": models.launch.String(), "footprint_overheads": footprintTable(d), "rows": rows})
	if dir := os.Getenv("NSYSSYNC_GPU_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "replay_table"+suffix+".md"), []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	within := 0
	for _, r := range rows {
		if r.Within {
			within++
		}
		if math.Abs(r.SelfCheck) > 0.05 {
			t.Errorf("%s: self-check %+.1f%%: want within 5%%", r.Scenario, 100*r.SelfCheck)
		}
	}
	if within*5 < len(rows)*4 {
		t.Errorf("%d of %d replayed savings within 2 pp or 20%% of the measured: want at least 80%%", within, len(rows))
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
	b.WriteString("| scenario | variant | kernels | streams | measured saved (pass range) | replayed (round range) | error (pp) | within target | replayed, no profiler correction | self-check |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	within, rawWithin := 0, 0
	for _, r := range rows {
		if r.Within {
			within++
		}
		if r.RawWithin {
			rawWithin++
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s (%.1f to %.1f) | %s (%.1f to %.1f) | %+.1f | %s | %s (%s) | %+.2f%% |\n",
			r.Scenario, r.Variant, r.Kernels, r.Streams, pct(r.Measured), 100*r.PassMin, 100*r.PassMax,
			pct(r.Replayed), 100*r.RangeLo, 100*r.RangeHi, 100*(r.Replayed-r.Measured), yes(r.Within), pct(r.Raw), yes(r.RawWithin), 100*r.SelfCheck)
	}
	fmt.Fprintf(&b, "\n%d of %d replayed savings within target (%.0f%%); without the profiler correction %d of %d.\n",
		within, len(rows), 100*float64(within)/float64(max(len(rows), 1)), rawWithin, len(rows))
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
