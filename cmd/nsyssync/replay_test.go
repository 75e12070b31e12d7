package main

import (
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/cuda"
)

const gtFixture = "../../fixtures/gt_twostream_sync.sqlite.gz"

// TestReplayWithoutGPU: with no driver, replay and calibrate say so in
// one line and exit 1.
func TestReplayWithoutGPU(t *testing.T) {
	if d, err := cuda.Open(cuda.Options{}); err == nil {
		d.Close()
		t.Skip("a GPU is present")
	}
	for _, args := range [][]string{{"replay", gtFixture}, {"replay", "--nvtx", "measured", "--format", "json", gtFixture}, {"calibrate"}} {
		code, out, errOut := runCLI(t, args...)
		if code != exitError || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want 1 and nothing", args, code, out)
		}
		if !strings.HasPrefix(errOut, "nsyssync: no GPU found (no NVIDIA driver (libcuda.so.1 not found)") ||
			!strings.HasSuffix(errOut, ": the simulator's estimate stands (nsyssync analyze)\n") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: stderr %q, want one line saying no GPU was found and the simulator's estimate stands", args, errOut)
		}
	}
}

func TestReplayBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"replay", "--format", "xml", gtFixture},
		{"replay", "--repeat", "0", gtFixture},
		{"replay", "--profiler-overhead", "-1us", gtFixture},
		{"replay"},
		{"calibrate", "--samples", "0"},
		{"calibrate", "extra"},
	} {
		if code, _, errOut := runCLI(t, args...); code != exitUsage || !strings.HasPrefix(errOut, "nsyssync: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
	}
}
