//go:build cgo

package cuda

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDriverThroughCgo runs the package's real cgo path — dlopen of
// libcuda.so.1 and libnvidia-ml.so.1, every driver and NVML call, the
// cgo pointer rules — against testdata/fakedriver.c, built here as both
// libraries, in a child test process whose LD_LIBRARY_PATH finds them.
// The fake driver writes what is still allocated when the context is
// released: a replay and a calibration must leave nothing.
func TestDriverThroughCgo(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		if cc, err = exec.LookPath("gcc"); err != nil {
			t.Skip("no C compiler to build the fake driver")
		}
	}
	dir := t.TempDir()
	for _, lib := range []string{"libcuda.so.1", "libnvidia-ml.so.1"} {
		out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", filepath.Join(dir, lib), filepath.Join("testdata", "fakedriver.c")).CombinedOutput()
		if err != nil {
			t.Fatalf("building the fake %s: %v\n%s", lib, err, out)
		}
	}
	log := filepath.Join(dir, "released.log")
	cmd := exec.Command(os.Args[0], "-test.run=^TestDriverChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir, "NSYSSYNC_FAKE_DRIVER=1", "FAKECUDA_LOG="+log)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestDriverChild") {
		t.Fatalf("child test with the fake driver: %v\n%s", err, out)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the fake driver wrote no release log: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line != "streams=0 events=0 devmem=0 hostmem=0" {
			t.Errorf("left allocated when the context was released: %s", line)
		}
	}
}

// TestDriverChild is TestDriverThroughCgo's child: it runs only with the
// fake driver on LD_LIBRARY_PATH.
func TestDriverChild(t *testing.T) {
	if os.Getenv("NSYSSYNC_FAKE_DRIVER") == "" {
		t.Skip("runs as TestDriverThroughCgo's child, with the fake driver")
	}
	d, err := Open(Options{})
	if err != nil {
		t.Fatalf("Open with the fake driver: %v", err)
	}
	id := d.Identity()
	if id.Name != "Fake Driver GPU" || id.Driver != "999.1" || id.SMClock != 1755 || id.MaxClock != 1980 || id.CUDA != 13000 ||
		len(id.Throttle) != 1 || id.Throttle[0] != "sw-power-cap" || id.NVML != "" {
		t.Errorf("identity %+v", id)
	}
	if d.model.TimerStepNs != 32 {
		t.Errorf("timer step %d, want the fake's 32", d.model.TimerStepNs)
	}
	f := loadFixture(t, "gt_twostream_sync", "measured")
	res, err := d.ReplayTimeline(context.Background(), f.tl, f.t, groundTruthGroups(f), ReplayOptions{Repeat: 1, ProfilerOverheadNs: 3_700})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if len(res.Sites) != 1 || res.Sites[0].Syncs != 30 || res.GPU.Name != "Fake Driver GPU" {
		t.Errorf("replay result %+v", res)
	}
	warned := strings.Join(res.Warnings, "\n")
	if !strings.Contains(warned, "is not the trace's (NVIDIA H100 80GB HBM3)") || !strings.Contains(warned, "throttled (sw-power-cap)") {
		t.Errorf("warnings %q: want the GPU differs from the trace's H100, and is throttled", res.Warnings)
	}
	cp := loadFixture(t, "gt_cpu_copy", "measured")
	if _, err := d.ReplayTimeline(context.Background(), cp.tl, cp.t, groundTruthGroups(cp), ReplayOptions{Repeat: 1}); err != nil {
		t.Fatalf("replay with copies: %v", err)
	}
	if _, err := d.Calibrate(context.Background(), 5); err != nil {
		t.Fatalf("calibrate: %v", err)
	}
	// Opening a device that is not there.
	if _, err := Open(Options{Ordinal: 3}); !errors.Is(err, ErrNoGPU) {
		t.Errorf("device 3 of 1: err = %v, want ErrNoGPU", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

// TestNoDriver: where no driver can be loaded, Open says so in the words
// the commands print, and Unavailable recognises it.
func TestNoDriver(t *testing.T) {
	d, err := Open(Options{})
	if err == nil {
		d.Close()
		t.Skip("a driver is present")
	}
	if !Unavailable(err) || err.Error() != "no NVIDIA driver (libcuda.so.1 not found)" {
		t.Errorf("err = %q, want ErrNoDriver's message alone", err)
	}
}
