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
	if len(res.Sites) != 1 || res.Sites[0].ID != "s1" || res.Sites[0].Syncs != 30 || res.Repeat != 2 || res.ProfilerOverheadNs != estimate.DefaultCalibration().ProfilerOverheadNs {
		t.Errorf("replay JSON: %+v", res)
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
}
