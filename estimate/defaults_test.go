package estimate

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDefaultsAreGroundTruthMedians checks what DefaultCalibration claims:
// each default is the median, over the ground-truth exports of the base
// set (groundtruth.py's own scenarios; the rewrite set, GT_SET=rewrite, is
// scored but made after the defaults), of the
// constant the estimator reads from each export that shows it; the
// profiler overhead is the median of (profiled duration - unprofiled
// duration) / traced calls.
func TestDefaultsAreGroundTruthMedians(t *testing.T) {
	def := DefaultCalibration()
	samples := map[string][]int64{}
	var overhead []int64
	for _, tf := range loadTruthFiles(t) {
		if strings.HasPrefix(tf.ProfiledIn, "rewrite-") {
			continue
		}
		f := loadFixture(t, gtFixture(tf.Scenario), "measured")
		res := f.run(t, Options{ProfilerOverheadNs: -1})
		c := res.Constants
		for name, v := range map[string]int64{
			"launch_latency_ns": c.LaunchLatencyNs, "sync_overhead_ns": c.SyncOverheadNs, "sync_wake_ns": c.SyncWakeNs,
			"dispatch_gap_ns": c.DispatchGapNs, "d2h_scalar_copy_ns": c.D2HScalarCopyNs, "record_wait_ns": c.RecordWaitNs,
		} {
			if strings.HasPrefix(c.Sources[name], "trace") {
				samples[name] = append(samples[name], v)
			}
		}
		unprofiled := medianSyncWall(t, tf.ProfiledIn, tf.Scenario)
		overhead = append(overhead, (f.tr.Region.Duration-unprofiled)/int64(res.Calls))
	}
	for name, want := range map[string]int64{
		"launch_latency_ns": def.LaunchLatencyNs, "sync_overhead_ns": def.SyncOverheadNs, "sync_wake_ns": def.SyncWakeNs,
		"dispatch_gap_ns": def.DispatchGapNs, "d2h_scalar_copy_ns": def.D2HScalarCopyNs, "record_wait_ns": def.RecordWaitNs,
		"profiler_overhead_ns": def.ProfilerOverheadNs,
	} {
		xs := samples[name]
		if name == "profiler_overhead_ns" {
			xs = overhead
		}
		if len(xs) < 3 {
			t.Errorf("%s: %d exports show it", name, len(xs))
			continue
		}
		got := medianOf(xs)
		if math.Abs(float64(got-want)) > 0.1*float64(want) {
			t.Errorf("%s: default %d, ground-truth median %d over %d exports", name, want, got, len(xs))
		}
	}
}

// medianOf is the middle of xs, the mean of the middle two for an even
// count (as the documented medians are computed).
func medianOf(xs []int64) int64 {
	s := append([]int64(nil), xs...)
	median(s) // sorts
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianSyncWall is the median unprofiled wall time of a scenario's sync
// variant in the timing run that also profiled it.
func medianSyncWall(t *testing.T, run, scenario string) int64 {
	t.Helper()
	fh, err := os.Open(filepath.Join("../fixtures/groundtruth", run, "timing.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	var walls []int64
	for _, r := range rows[1:] {
		if r[col["scenario"]] == scenario && r[col["variant"]] == "sync" {
			v, err := strconv.ParseInt(r[col["wall_ns"]], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			walls = append(walls, v)
		}
	}
	if len(walls) == 0 {
		t.Fatalf("%s: no sync timings for %s", run, scenario)
	}
	return medianOf(walls)
}
