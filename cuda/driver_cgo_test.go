//go:build cgo

package cuda

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDriverThroughCgo runs the package's real cgo path — dlopen of
// libcuda.so.1, every driver call, the cgo pointer rules, and go-nvml's
// loading of libnvidia-ml.so.1 and its calls — against
// testdata/fakedriver.c and testdata/fakenvml.c, built here, in a child
// test process whose LD_LIBRARY_PATH finds them. The fake driver writes
// what is still allocated when the context is released: a replay and a
// calibration must leave nothing.
func TestDriverThroughCgo(t *testing.T) {
	dir := t.TempDir()
	buildFake(t, dir, "libcuda.so.1", "fakedriver.c")
	buildFake(t, dir, "libnvidia-ml.so.1", "fakenvml.c")
	log := filepath.Join(dir, "released.log")
	runChild(t, "TestDriverChild", "LD_LIBRARY_PATH="+dir, "FAKECUDA_LOG="+log)
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

// TestNVMLThroughCgo names the fake GPU through go-nvml and the fake
// libnvidia-ml.so.1 when NVML finds the device by bus id, when only by
// index, when there is no NVML at all and when libnvidia-ml.so.1 is not
// NVML (the CUDA name stands and Identity.NVML says why; go-nvml would
// end the process at its first call).
func TestNVMLThroughCgo(t *testing.T) {
	withNVML, cudaOnly, notNVML := t.TempDir(), t.TempDir(), t.TempDir()
	for _, dir := range []string{withNVML, cudaOnly, notNVML} {
		buildFake(t, dir, "libcuda.so.1", "fakedriver.c")
	}
	buildFake(t, withNVML, "libnvidia-ml.so.1", "fakenvml.c")
	buildFake(t, notNVML, "libnvidia-ml.so.1", "fakedriver.c")
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"by bus id", []string{"LD_LIBRARY_PATH=" + withNVML, "NSYSSYNC_WANT_NVML=fake"}},
		{"by index", []string{"LD_LIBRARY_PATH=" + withNVML, "FAKENVML_NO_BUS=1", "NSYSSYNC_WANT_NVML=fake"}},
		{"no NVML", []string{"LD_LIBRARY_PATH=" + cudaOnly, "NSYSSYNC_WANT_NVML=libnvidia-ml.so.1 not found"}},
		{"not NVML", []string{"LD_LIBRARY_PATH=" + notNVML, "NSYSSYNC_WANT_NVML=libnvidia-ml.so.1 lacks nvmlInit_v2 (driver too old?)"}},
	} {
		t.Run(tc.name, func(t *testing.T) { runChild(t, "TestIdentityChild", tc.env...) })
	}
}

// buildFake compiles testdata/src as the shared library dir/lib.
func buildFake(t *testing.T, dir, lib, src string) {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		if cc, err = exec.LookPath("gcc"); err != nil {
			t.Skip("no C compiler to build the fake driver")
		}
	}
	out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", filepath.Join(dir, lib), filepath.Join("testdata", src)).CombinedOutput()
	if err != nil {
		t.Fatalf("building the fake %s from %s: %v\n%s", lib, src, err, out)
	}
}

// runChild runs one test of this binary in a child process with env
// added (NSYSSYNC_FAKE_DRIVER=1 too) and fails unless it passes.
func runChild(t *testing.T, test string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v", "-test.count=1")
	cmd.Env = append(append(os.Environ(), "NSYSSYNC_FAKE_DRIVER=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("child %s with the fake driver (%s): %v\n%s", test, strings.Join(env, " "), err, out)
	}
}

// TestIdentityChild is TestNVMLThroughCgo's child: Open's identity, with
// the fake NVML (NSYSSYNC_WANT_NVML=fake) or without (the Identity.NVML
// wanted).
func TestIdentityChild(t *testing.T) {
	want := os.Getenv("NSYSSYNC_WANT_NVML")
	if os.Getenv("NSYSSYNC_FAKE_DRIVER") == "" || want == "" {
		t.Skip("runs as TestNVMLThroughCgo's child, with the fake driver")
	}
	d, err := Open(Options{})
	if err != nil {
		t.Fatalf("Open with the fake driver: %v", err)
	}
	defer d.Close()
	id := d.Identity()
	fromCUDA := Identity{Name: "Fake Driver GPU", BusID: "0000:00:06.0", CUDA: 13000}
	switch want {
	case "fake":
		w := fromCUDA
		w.Driver, w.SMClock, w.MaxClock, w.Throttle = "999.1", 1755, 1980, []string{"sw-power-cap"}
		if !reflect.DeepEqual(id, w) {
			t.Errorf("identity %+v, want %+v", id, w)
		}
	default:
		w := fromCUDA
		w.NVML = want
		if !reflect.DeepEqual(id, w) {
			t.Errorf("identity %+v, want %+v", id, w)
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
	// Spins of two streams' GEMMs, each a wave of 132 blocks that fills an
	// SM's shared memory (over the default 48 KiB).
	gemm := loadFixture(t, "gt_twostream_gemm", "measured")
	if _, err := d.ReplayTimeline(context.Background(), gemm.tl, gemm.t, groundTruthGroups(gemm), ReplayOptions{Repeat: 1}); err != nil {
		t.Fatalf("replay of full-GPU kernels: %v", err)
	}
	if d.lim != h100Limits {
		t.Errorf("SM limits %+v, want the fake's H100 %+v", d.lim, h100Limits)
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
