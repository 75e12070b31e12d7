//go:build cgo

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/cuda"
	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/whatif"
)

// TestReplayWithFakeDriver runs replay and calibrate end to end through
// the real cgo driver path, against the fake driver and NVML of
// cuda/testdata/fakedriver.c and fakenvml.c, loaded by a child process.
func TestReplayWithFakeDriver(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the fake driver")
	}
	dir := t.TempDir()
	for lib, src := range map[string]string{"libcuda.so.1": "fakedriver.c", "libnvidia-ml.so.1": "fakenvml.c"} {
		if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", filepath.Join(dir, lib), "../../cuda/testdata/"+src).CombinedOutput(); err != nil {
			t.Fatalf("building the fake %s: %v\n%s", lib, err, out)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplayChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir, "NSYSSYNC_FAKE_DRIVER="+dir)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestReplayChild") {
		t.Fatalf("child with the fake driver: %v\n%s", err, out)
	}
}

func TestReplayChild(t *testing.T) {
	dir := os.Getenv("NSYSSYNC_FAKE_DRIVER")
	if dir == "" {
		t.Skip("runs as TestReplayWithFakeDriver's child, with the fake driver")
	}
	code, out, errOut := runCLI(t, "replay", "--nvtx", "measured", "--repeat", "1", gtFixture)
	if code != exitOK {
		t.Fatalf("replay: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"GPU replay of " + gtFixture + `, region "measured"`, "GPU: Fake Driver GPU, driver 999.1", "self-check",
		"s1 ", "measured/sync:side_sync", "warning: the replay GPU is throttled (sw-power-cap)"} {
		if !strings.Contains(out, want) {
			t.Errorf("replay text lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = runCLI(t, "replay", "--nvtx", "measured", "--repeat", "2", "--site", "s1", "--format", "json", gtFixture)
	if code != exitOK {
		t.Fatalf("replay --format json: exit %d: %s", code, errOut)
	}
	var res cuda.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("replay JSON: %v\n%s", err, out)
	}
	if res.Schema != cuda.ResultSchema {
		t.Errorf("replay JSON schema %q, want %q", res.Schema, cuda.ResultSchema)
	}
	if len(res.Sites) != 1 || res.Sites[0].ID != "s1" || res.Sites[0].Syncs != 30 || res.Repeat != 2 ||
		res.ProfilerOverheadNs != estimate.DefaultCalibration().ProfilerOverheadNs || res.ProfilerOverheadSource != "" {
		t.Errorf("replay JSON: %+v", res)
	}
	// --overhead-from-launches takes the overhead the region's launches
	// give, as analyze's flag does, and says so.
	code, out, errOut = runCLI(t, "replay", "--nvtx", "measured", "--repeat", "1", "--format", "json", "--overhead-from-launches", gtFixture)
	if code != exitOK {
		t.Fatalf("replay --overhead-from-launches: exit %d: %s", code, errOut)
	}
	var fromLaunches cuda.Result
	if err := json.Unmarshal([]byte(out), &fromLaunches); err != nil {
		t.Fatalf("replay JSON: %v\n%s", err, out)
	}
	if fromLaunches.ProfilerOverheadNs <= 0 || fromLaunches.ProfilerOverheadNs == estimate.DefaultCalibration().ProfilerOverheadNs ||
		!strings.HasPrefix(fromLaunches.ProfilerOverheadSource, "trace (median launch") {
		t.Errorf("replay --overhead-from-launches: %d ns from %q, want the launches'", fromLaunches.ProfilerOverheadNs, fromLaunches.ProfilerOverheadSource)
	}
	if code, _, errOut = runCLI(t, "replay", "--site", "s9", gtFixture); code != exitError || !strings.Contains(errOut, "no site s9 (sites: s1") {
		t.Errorf("unknown site: exit %d, %q", code, errOut)
	}
	if code, _, errOut = runCLI(t, "replay", filepath.Join(dir, "missing.sqlite")); code != exitError || !strings.Contains(errOut, "missing.sqlite") {
		t.Errorf("missing export: exit %d, %q", code, errOut)
	}
	profile := filepath.Join(dir, "profile.json")
	code, out, errOut = runCLI(t, "calibrate", "--samples", "5", "-o", profile)
	if code != exitOK || !strings.Contains(out, "sync overhead") {
		t.Fatalf("calibrate: exit %d, %q, %q", code, out, errOut)
	}
	c, err := estimate.LoadCalibration(profile)
	if err != nil {
		t.Fatalf("the simulator cannot read the profile: %v", err)
	}
	if !strings.Contains(c.Source, "Fake Driver GPU") || c.DispatchGapNs != 1_000 {
		t.Errorf("profile %+v", c)
	}
	checkProfilerOverhead(t, dir)
}

// checkProfilerOverhead runs calibrate --profiler-overhead with a fake
// nsys that runs its program with the fake driver's calls slowed by 20 µs
// (FAKECUDA_TRACED_NS): each kind's overhead must come out near that, and
// the profile must say where it comes from. The workload's children are
// this test binary run as the command (NSYSSYNC_TEST_MAIN).
func checkProfilerOverhead(t *testing.T, dir string) {
	nsys := filepath.Join(dir, "nsys")
	script := `#!/bin/sh
if [ "$1" = "--version" ]; then echo "NVIDIA Nsight Systems version 2099.1.1-fake"; exit 0; fi
shift
while [ $# -gt 0 ]; do case "$1" in -o) shift 2; break;; *) shift;; esac; done
FAKECUDA_TRACED_NS=20000 exec "$@"
`
	if err := os.WriteFile(nsys, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NSYSSYNC_TEST_MAIN", "1")
	profile := filepath.Join(dir, "overhead.json")
	code, out, errOut := runCLI(t, "calibrate", "--samples", "5", "--profiler-overhead", "--nsys", nsys, "--calls", "500", "-o", profile)
	if code != exitOK {
		t.Fatalf("calibrate --profiler-overhead: exit %d, %q, %q", code, out, errOut)
	}
	for _, want := range []string{"Profiler overhead per call (NVIDIA Nsight Systems version 2099.1.1-fake", "launch", "async_copy", "sync", "other"} {
		if !strings.Contains(out, want) {
			t.Errorf("calibrate's summary lacks %q:\n%s", want, out)
		}
	}
	c, err := estimate.LoadCalibration(profile)
	if err != nil {
		t.Fatalf("the simulator cannot read the profile: %v", err)
	}
	if !strings.Contains(c.Source, "profiler overhead: NVIDIA Nsight Systems version 2099.1.1-fake, `nsys profile "+defaultNsysFlags+"`, 500 calls a kind") {
		t.Errorf("profile source %q", c.Source)
	}
	for k, v := range c.ProfilerOverheads.ByKind() {
		if v < 10_000 || v > 200_000 {
			t.Errorf("%s: overhead %d ns, want about the fake profiler's 20 µs", whatif.OverheadKind(k), v)
		}
	}
	if c.ProfilerOverheadNs < 10_000 || c.ProfilerOverheadNs > 200_000 {
		t.Errorf("flat overhead %d ns, want the kinds' median", c.ProfilerOverheadNs)
	}
	// The replay takes the profile's overheads per kind, unless
	// --profiler-overhead is given.
	for _, tc := range []struct {
		args    []string
		perKind bool
	}{
		{[]string{"--calibration", profile}, true},
		{[]string{"--calibration", profile, "--profiler-overhead", "2us"}, false},
	} {
		args := append([]string{"replay", "--nvtx", "measured", "--repeat", "1", "--site", "s1", "--format", "json"}, append(tc.args, gtFixture)...)
		code, out, errOut := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		var res cuda.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("replay JSON: %v", err)
		}
		if got := res.ProfilerOverheadsNs; tc.perKind != (len(got) == 4 && got["launch"] == c.LaunchNs && got["sync"] == c.SyncNs) {
			t.Errorf("%v: per-kind overheads %v (profile %+v)", tc.args, got, c.ProfilerOverheads)
		}
		if !tc.perKind && (res.ProfilerOverheadNs != 2_000 || res.ProfilerOverheadSource != "") {
			t.Errorf("%v: flat overhead %d from %q, want the flag's 2 µs", tc.args, res.ProfilerOverheadNs, res.ProfilerOverheadSource)
		}
	}
}
