package cuda

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
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
}

// withinTarget: within 2 percentage points or 20% of the measured saving,
// whichever is larger.
func withinTarget(got, measured float64) bool {
	return math.Abs(got-measured) <= math.Max(0.02, 0.2*math.Abs(measured))
}

// gtProfilerOverheadNs is the simulator's default per-call profiler
// overhead (estimate.DefaultCalibration, docs/estimator.md).
const gtProfilerOverheadNs = 3_700

// occupancyModels name the occupancy models for NSYSSYNC_OCCUPANCY.
var occupancyModels = map[string]occupancyModel{"recorded": occRecorded, "footprint": occFootprint, "one-warp": occOneWarp}

// testOccupancy is the occupancy model NSYSSYNC_OCCUPANCY names (default:
// recorded), and the suffix of the files the test keeps ("" for the
// default).
func testOccupancy(t *testing.T) (occupancyModel, string) {
	name := os.Getenv("NSYSSYNC_OCCUPANCY")
	if name == "" || name == "recorded" {
		return occRecorded, ""
	}
	m, ok := occupancyModels[name]
	if !ok {
		t.Fatalf("NSYSSYNC_OCCUPANCY=%q: want recorded, footprint or one-warp", name)
	}
	return m, "_" + name
}

// TestGPUGroundTruth replays every ground-truth scenario as recorded and
// without each measured variant's sites, and scores the replayed saving
// against the measured one. NSYSSYNC_OCCUPANCY chooses how spins are
// shaped, to compare the models.
func TestGPUGroundTruth(t *testing.T) {
	d := openTestGPU(t)
	occ, suffix := testOccupancy(t)
	t.Logf("occupancy: %s", occ)
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
		res, err := d.ReplayTimeline(context.Background(), f.tl, f.t, groups, ReplayOptions{Repeat: 10, ProfilerOverheadNs: gtProfilerOverheadNs, occupancy: occ})
		if err != nil {
			t.Fatalf("%s: %v", tf.Scenario, err)
		}
		raw, err := d.ReplayTimeline(context.Background(), f.tl, f.t, groups, ReplayOptions{Repeat: 10, occupancy: occ})
		if err != nil {
			t.Fatalf("%s: %v", tf.Scenario, err)
		}
		for i, v := range tf.Variants {
			s, r := res.Sites[i], raw.Sites[i]
			row := gtRow{Scenario: tf.Scenario, Variant: v.Variant, Kernels: tf.Kernels, Streams: tf.Streams, Measured: v.Measured,
				PassMin: v.Measured, PassMax: v.Measured, Replayed: s.SavedFraction,
				RangeLo: float64(s.SavedMinNs) / float64(res.BaselineNs), RangeHi: float64(s.SavedMaxNs) / float64(res.BaselineNs),
				Raw: r.SavedFraction, SelfCheck: raw.SelfCheckError, RecordedNs: res.RecordedNs}
			if v.PassMin != nil && v.PassMax != nil {
				row.PassMin, row.PassMax = *v.PassMin, *v.PassMax
			}
			row.Within, row.RawWithin = withinTarget(row.Replayed, row.Measured), withinTarget(row.Raw, row.Measured)
			rows = append(rows, row)
		}
	}
	table := groundTruthTable(rows)
	t.Logf("\n%s", table)
	writeOut(t, "replay_groundtruth"+suffix+".json", map[string]any{"gpu": d.Identity(), "model": d.model, "occupancy": occ.String(), "rows": rows})
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
