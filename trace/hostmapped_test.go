package trace

import (
	"context"
	"path/filepath"
	"testing"
)

// TestHostMapped reads, on the corpus exports, which processes use memory
// the host reads without a copy call: managed memory by call
// (cudaMallocManaged, cuMemAllocManaged) or by its unified-memory
// migrations (the Hungarian solver's __managed__ flags, no call), and
// none where the program only allocates pinned memory (cudaHostAlloc,
// cudaHostRegister, cuMemHostAlloc: flags not recorded).
func TestHostMapped(t *testing.T) {
	corpus := filepath.Join("..", "..", "shared", "corpus")
	for _, tc := range []struct {
		file string
		want []string // the evidence per process, any order
	}{
		{"cuda-hungarian-devsync_2xrtx3090_nsys2025.5.sqlite", []string{"managed memory: unified-memory migrations in its GPU activity"}},
		{"cuda-jetson-orin-video-histogram_nsys2024.5.sqlite", []string{"it calls cudaMallocManaged"}},
		{"openmp-offload-heat_t4_nsys2023.3.sqlite", []string{"it calls cuMemAllocManaged"}},
		{"mpi-cuda-saxpy_perlmutter-a100_nsys2022.2.sqlite", nil},
		{"cupy-gtls_rtx3060_nsys2023.1.sqlite", nil},
		{"openacc-jacobi_4xv100_reexport2025.3.sqlite", nil},
		{"cuda-gemm-event-bench_rtx5070ti_nsys2025.5.sqlite", nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ctx := context.Background()
			x, err := Open(ctx, filepath.Join(corpus, tc.file))
			if err != nil {
				t.Skipf("export not here: %v", err)
			}
			defer x.Close()
			tr, err := x.Load(ctx, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, why := range tr.HostMapped {
				got = append(got, why)
			}
			if len(got) != len(tc.want) || len(got) == 1 && got[0] != tc.want[0] {
				t.Errorf("host-mapped processes: %q, want %q", got, tc.want)
			}
		})
	}
}
