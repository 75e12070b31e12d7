package classify

import (
	"os"
	"strings"
	"testing"
)

// corpusSite classifies a corpus export and returns its site id; the
// test is skipped without the corpus.
func corpusSite(t *testing.T, file, id string) *Site {
	t.Helper()
	path := "../../shared/corpus/" + file
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no corpus export: %v", err)
	}
	sites := Sites(load(t, path))
	for i := range sites {
		if sites[i].ID == id {
			return &sites[i]
		}
	}
	t.Fatalf("%s: no site %s", file, id)
	return nil
}

// TestHostMappedSites checks the rule on the corpus: the explicit syncs
// of a process that reads managed memory without a copy call (the
// Hungarian solver's __managed__ flags, seen by their unified-memory
// migrations; the Jetson loop's cudaMallocManaged) are unknown and out
// of every total, with the evidence saying why; a copy site of a process
// with managed memory (OpenMP heat) and the explicit syncs of processes
// that only allocate pinned memory (GEMM bench: cudaMallocHost; CuPy
// GTLS: cudaHostAlloc; OpenACC Jacobi: cuMemHostAlloc) keep their
// verdicts. The rule was drawn from the first two; the others, and every
// labelled fixture (unchanged), check it.
func TestHostMappedSites(t *testing.T) {
	for _, c := range []struct {
		file, site string
		dep        Dependency
		hostRead   string // "" : not held out
	}{
		{"cuda-hungarian-devsync_2xrtx3090_nsys2025.5.sqlite", "s1", DepUnknown, "managed memory: unified-memory migrations in its GPU activity"},
		{"cuda-hungarian-devsync_2xrtx3090_nsys2025.5.sqlite", "s7", DepUnknown, "managed memory: unified-memory migrations in its GPU activity"},
		{"cuda-jetson-orin-video-histogram_nsys2024.5.sqlite", "s2", DepUnknown, "it calls cudaMallocManaged"},
		{"cuda-jetson-orin-video-histogram_nsys2024.5.sqlite", "s1", DepUnknown, ""}, // cudaMemset: not an explicit sync
		{"openmp-offload-heat_t4_nsys2023.3.sqlite", "s1", DepFalse, ""},
		{"cuda-gemm-event-bench_rtx5070ti_nsys2025.5.sqlite", "s1", DepFalse, ""},
		{"cupy-gtls_rtx3060_nsys2023.1.sqlite", "s1", DepUnknown, ""}, // unknown: thrust's own wait (TestLibrarySites), not a host read
		{"openacc-jacobi_4xv100_reexport2025.3.sqlite", "s1", DepFalse, ""},
	} {
		t.Run(c.file+" "+c.site, func(t *testing.T) {
			got := corpusSite(t, c.file, c.site)
			if got.Dependency != c.dep || got.HostRead != c.hostRead {
				t.Fatalf("%s: %s, host read %q; want %s, %q", c.site, got.Dependency, got.HostRead, c.dep, c.hostRead)
			}
			if c.hostRead == "" {
				return
			}
			if got.Counting() != CountNone || len(got.Evidence) == 0 || !strings.Contains(got.Evidence[0], c.hostRead) ||
				!strings.Contains(got.Fix, "keep the wait wherever the host reads such memory") {
				t.Errorf("%s: counting %d, evidence %q, fix %q", c.site, got.Counting(), got.Evidence, got.Fix)
			}
		})
	}
}
