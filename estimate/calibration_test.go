package estimate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadCalibration(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, body, err string
		want            Calibration
	}{
		{name: "ok.json", body: `{"sync_overhead_ns": 3100, "launch_latency_ns": 4200, "source": "H100 replay"}`,
			want: Calibration{SyncOverheadNs: 3100, LaunchLatencyNs: 4200, Source: "H100 replay"}},
		{name: "nosource.json", body: `{"sync_wake_ns": 900}`, want: Calibration{SyncWakeNs: 900}},
		{name: "perkind.json", body: `{"profiler_overhead_ns": 3000, "profiler_overhead_launch_ns": 2100, "profiler_overhead_sync_ns": 900, "source": "s"}`,
			want: Calibration{ProfilerOverheadNs: 3000, ProfilerOverheads: ProfilerOverheads{LaunchNs: 2100, SyncNs: 900}, Source: "s"}},
		{name: "perkind-negative.json", body: `{"profiler_overhead_other_ns": -1}`, err: "profiler_overhead_other_ns = -1 is out of range"},
		{name: "bad.json", body: `{"sync_overhead_ns": "fast"}`, err: "not a calibration profile"},
		{name: "negative.json", body: `{"dispatch_gap_ns": -5}`, err: "dispatch_gap_ns = -5 is out of range"},
		{name: "missing.json", err: "missing.json: no such file or directory"},
	} {
		path := filepath.Join(dir, tc.name)
		if tc.body != "" {
			path = write(tc.name, tc.body)
		}
		got, err := LoadCalibration(path)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.want.Source == "" {
			tc.want.Source = path
		}
		if *got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, *got, tc.want)
		}
	}
}

// TestConstantSources: constants come from the trace where it shows them,
// else from the calibration, else the defaults.
func TestConstantSources(t *testing.T) {
	// Every .item() of this loop waits for its kernels: the trace shows
	// wake-ups and launch latencies but no sync that found nothing to wait
	// for.
	f := loadFixture(t, gtFixture("item_tiny"), "measured")
	def := f.run(t, Options{}).Constants
	if def.Sources["sync_overhead_ns"] != "default" || def.SyncOverheadNs != DefaultCalibration().SyncOverheadNs {
		t.Fatalf("sync overhead %d from %q, want the default", def.SyncOverheadNs, def.Sources["sync_overhead_ns"])
	}
	if !strings.HasPrefix(def.Sources["launch_latency_ns"], "trace (n=") || !strings.HasPrefix(def.Sources["sync_wake_ns"], "trace (n=") {
		t.Errorf("launch latency and wake-up should come from the trace: %v", def.Sources)
	}
	cal := &Calibration{SyncOverheadNs: 7777, LaunchLatencyNs: 1, Source: "test profile"}
	got := f.run(t, Options{Calibration: cal}).Constants
	if got.SyncOverheadNs != 7777 || got.Sources["sync_overhead_ns"] != "calibration: test profile" {
		t.Errorf("sync overhead %d from %q, want the calibration's", got.SyncOverheadNs, got.Sources["sync_overhead_ns"])
	}
	if got.LaunchLatencyNs != def.LaunchLatencyNs {
		t.Errorf("launch latency %d, want the trace's %d over the calibration's", got.LaunchLatencyNs, def.LaunchLatencyNs)
	}
}
