package estimate

import (
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/whatif"
)

// TestInferredProfilerOverhead: on real exports, each kind's overhead read
// off the trace's gaps is within the inference's bounds where the trace
// has enough calls of that kind, every kind's source is recorded, and
// with LaunchProfilerOverhead every kind takes what the launches give.
func TestInferredProfilerOverhead(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		// inferred: the kinds with enough gaps in the measured range.
		inferred []whatif.OverheadKind
		// launches: the range holds enough kernel launches to read the
		// overhead off (a graph launch is none).
		launches bool
	}{
		{"item_tiny", []whatif.OverheadKind{whatif.OverheadLaunch, whatif.OverheadSync, whatif.OverheadOther}, true},
		{"mlp_train", []whatif.OverheadKind{whatif.OverheadLaunch, whatif.OverheadAsyncCopy, whatif.OverheadSync, whatif.OverheadOther}, true},
		{"graph_item", []whatif.OverheadKind{whatif.OverheadLaunch, whatif.OverheadSync, whatif.OverheadOther}, false},
	} {
		f := loadFixture(t, gtFixture(tc.fixture), "measured")
		got := f.run(t, Options{InferProfilerOverhead: true}).Constants
		by := got.ProfilerOverheads.ByKind()
		for _, k := range tc.inferred {
			key := overheadKey(k)
			if v := by[k]; v < whatif.OverheadMinNs || v > whatif.OverheadMaxNs {
				t.Errorf("%s: %s = %d ns, want within [%d, %d]", tc.fixture, key, v, whatif.OverheadMinNs, whatif.OverheadMaxNs)
			}
			if src := got.Sources[key]; !strings.HasPrefix(src, "trace (p5 of ") {
				t.Errorf("%s: %s from %q, want the trace", tc.fixture, key, src)
			}
		}
		if got.Sources["profiler_overhead_ns"] != "default" || got.ProfilerOverheadNs != DefaultCalibration().ProfilerOverheadNs {
			t.Errorf("%s: flat overhead %d from %q, want the default", tc.fixture, got.ProfilerOverheadNs, got.Sources["profiler_overhead_ns"])
		}
		// Off (the default), every kind takes the default and says what
		// the trace would have given; the flat value's source says what
		// the launches would have given.
		off := f.run(t, Options{}).Constants
		for k := range whatif.NumOverheadKinds {
			key := overheadKey(k)
			if off.ProfilerOverheads.ByKind()[k] != DefaultCalibration().ProfilerOverheadNs || !strings.HasPrefix(off.Sources[key], "default") {
				t.Errorf("%s, inference off: %s = %d from %q, want the default", tc.fixture, key, off.ProfilerOverheads.ByKind()[k], off.Sources[key])
			}
		}
		lo := off.fromLaunches
		if tc.launches != lo.Ok {
			t.Errorf("%s: launches read %v (%d), want %v", tc.fixture, lo.Ok, lo.Launches, tc.launches)
		}
		if src := off.Sources["profiler_overhead_ns"]; tc.launches != strings.HasPrefix(src, "default (the launches would give") {
			t.Errorf("%s: flat overhead from %q", tc.fixture, src)
		}
		// With LaunchProfilerOverhead, every kind takes the launches'
		// value where there are enough launches, else the default.
		on := f.run(t, Options{LaunchProfilerOverhead: true}).Constants
		for k := range whatif.NumOverheadKinds {
			key := overheadKey(k)
			v, src := on.ProfilerOverheads.ByKind()[k], on.Sources[key]
			switch {
			case lo.Ok && (v != lo.Ns || v != on.ProfilerOverheadNs || !strings.HasPrefix(src, "trace (median launch")):
				t.Errorf("%s, from the launches: %s = %d from %q, want the launches' %d", tc.fixture, key, v, src, lo.Ns)
			case !lo.Ok && (v != DefaultCalibration().ProfilerOverheadNs || !strings.HasPrefix(src, "default")):
				t.Errorf("%s, from the launches, %d launches: %s = %d from %q, want the default", tc.fixture, lo.Launches, key, v, src)
			}
		}
	}
}

// TestProfilerOverheadPrecedence: option > calibration per kind >
// calibration flat > inferred from the gaps > from the launches (when
// asked for) > default, kind by kind.
func TestProfilerOverheadPrecedence(t *testing.T) {
	f := loadFixture(t, gtFixture("item_tiny"), "measured")
	perKind := &Calibration{ProfilerOverheads: ProfilerOverheads{LaunchNs: 1_111, SyncNs: 2_222}, Source: "bench"}
	launches := f.run(t, Options{}).Constants.fromLaunches
	if !launches.Ok || launches.Ns == DefaultCalibration().ProfilerOverheadNs {
		t.Fatalf("item_tiny's launches give %+v: want a value of their own to tell it from the default", launches)
	}
	for _, tc := range []struct {
		name    string
		opt     Options
		want    ProfilerOverheads
		sources [whatif.NumOverheadKinds]string // prefixes
	}{
		{"option wins", Options{ProfilerOverheadNs: 900, Calibration: perKind, InferProfilerOverhead: true},
			ProfilerOverheads{900, 900, 900, 900}, [4]string{"option", "option", "option", "option"}},
		{"no correction", Options{ProfilerOverheadNs: -1, Calibration: perKind}, ProfilerOverheads{}, [4]string{"none", "none", "none", "none"}},
		{"calibration per kind, then the default", Options{Calibration: perKind},
			ProfilerOverheads{1_111, 3_700, 2_222, 3_700}, [4]string{"calibration: bench", "default", "calibration: bench", "default"}},
		{"calibration per kind, then the launches", Options{Calibration: perKind, LaunchProfilerOverhead: true},
			ProfilerOverheads{1_111, launches.Ns, 2_222, launches.Ns}, [4]string{"calibration: bench", "trace (median launch", "calibration: bench", "trace (median launch"}},
		{"calibration flat beats the trace", Options{Calibration: &Calibration{ProfilerOverheadNs: 5_000, ProfilerOverheads: ProfilerOverheads{OtherNs: 300}, Source: "b"}, InferProfilerOverhead: true},
			ProfilerOverheads{5_000, 5_000, 5_000, 300}, [4]string{"calibration: b", "calibration: b", "calibration: b", "calibration: b"}},
		{"calibration per kind, then the trace", Options{Calibration: perKind, InferProfilerOverhead: true},
			ProfilerOverheads{1_111, 3_700, 2_222, 0}, [4]string{"calibration: bench", "default (trace: 0 pairs)", "calibration: bench", "trace (p5 of "}},
	} {
		got := f.run(t, tc.opt).Constants
		want := tc.want
		if want.OtherNs == 0 && tc.sources[whatif.OverheadOther] == "trace (p5 of " {
			want.OtherNs = got.OtherNs // the trace's value, checked for its range
			if got.OtherNs < whatif.OverheadMinNs || got.OtherNs > whatif.OverheadMaxNs {
				t.Errorf("%s: other = %d ns, out of the inference's range", tc.name, got.OtherNs)
			}
		}
		if got.ProfilerOverheads != want {
			t.Errorf("%s: %+v, want %+v", tc.name, got.ProfilerOverheads, want)
		}
		for k, prefix := range tc.sources {
			if src := got.Sources[overheadKey(whatif.OverheadKind(k))]; !strings.HasPrefix(src, prefix) {
				t.Errorf("%s: %s from %q, want %q…", tc.name, whatif.OverheadKind(k), src, prefix)
			}
		}
	}
}
