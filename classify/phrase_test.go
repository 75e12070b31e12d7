package classify

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/program"
)

// TestFixWordsPerProgram checks, on real exports, that a site's fix is
// written in its program's words: the named site (by its APIs, the first
// site holding them) must say every word of want and none of avoid. The
// PyTorch fixture keeps the rule table's PyTorch text.
func TestFixWordsPerProgram(t *testing.T) {
	corpus := "../../shared/corpus/"
	cases := []struct {
		file  string
		apis  []string
		want  []string
		avoid []string
	}{
		{corpus + "cuda-rodinia-gaussian-threadsync_rtx3090_nsys2022.4.sqlite", []string{"cudaThreadSynchronize"},
			[]string{"`cudaThreadSynchronize` waits for every stream", "cudaStreamWaitEvent"}, []string{"wait_stream", "torch"}},
		{corpus + "cuda-gemm-event-bench_rtx5070ti_nsys2025.5.sqlite", []string{"cudaFreeHost"},
			[]string{"pinned host memory", "Allocate pinned buffers once"}, []string{"cudaFreeAsync"}},
		{corpus + "cuda-jetson-orin-video-histogram_nsys2024.5.sqlite", []string{"cudaMemset"},
			[]string{"cudaMemsetAsync", "Look at it on stream"}, nil},
		{corpus + "openacc-jacobi_4xv100_reexport2025.3.sqlite", []string{"cuStreamSynchronize"},
			[]string{"async(n)", "-t openacc"}, []string{"cudaStreamWaitEvent", "torch"}},
		{corpus + "openacc-nvhpc_rtx3080_nsys2020.5.sqlite", []string{"cuMemcpyHtoDAsync_v2", "cuStreamSynchronize"},
			[]string{"enter data", "Look at it on stream"}, []string{"non_blocking"}},
		{corpus + "openmp-offload-heat_t4_nsys2023.3.sqlite", []string{"cuMemcpyDtoHAsync_v2", "cuStreamSynchronize"},
			[]string{"target update from", "the copy is needed"}, []string{"non_blocking"}},
		{corpus + "cupy-gtls_rtx3060_nsys2023.1.sqlite", []string{"cudaMemcpy"},
			[]string{"cupy.asnumpy", "blocking=False"}, []string{"non_blocking", ".item()"}},
		{corpus + "jax-alpa-profile-mem-driverapi_reexport2025.3.sqlite", []string{"cuCtxSynchronize"},
			[]string{"block_until_ready"}, []string{"torch"}},
		{corpus + "jax-alpa-report1-nokernels_reexport2025.3.sqlite", []string{"cudaFreeHost"},
			[]string{"Allocate pinned buffers once"}, []string{"cudaFreeAsync"}},
		{corpus + "mpi-cuda-saxpy_perlmutter-a100_nsys2022.2.sqlite", []string{"cudaMemcpy"},
			[]string{"CUDA-aware MPI"}, []string{"non_blocking"}},
		{"../fixtures/syncs_lean.sqlite.gz", []string{"cudaDeviceSynchronize"},
			[]string{"wait_stream"}, nil},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file)+" "+strings.Join(c.apis, "+"), func(t *testing.T) {
			tr := load(t, c.file)
			var fix string
			for _, s := range (Options{}).Sites(tr) {
				if slices.Equal(s.APIs, c.apis) {
					fix = s.Fix
					break
				}
			}
			if fix == "" {
				t.Fatalf("no site with APIs %v, or its fix is empty", c.apis)
			}
			for _, w := range c.want {
				if !strings.Contains(fix, w) {
					t.Errorf("fix lacks %q: %s", w, fix)
				}
			}
			for _, w := range c.avoid {
				if strings.Contains(fix, w) {
					t.Errorf("fix says %q: %s", w, fix)
				}
			}
		})
	}
}

// TestDialectOf: the vocabulary follows the framework, PyTorch's only for
// PyTorch from Python and for Python frames of an unknown framework.
func TestDialectOf(t *testing.T) {
	tr := load(t, "../fixtures/syncs_backtrace.sqlite.gz") // has Python frames
	lean := load(t, "../fixtures/syncs_lean.sqlite.gz")    // has none
	cases := []struct {
		p    program.Program
		lean bool
		want dialect
	}{
		{program.Program{Framework: program.PyTorch, Language: program.Python}, false, dTorch},
		{program.Program{Framework: program.PyTorch, Language: program.CPP}, false, dCUDA},
		{program.Program{Framework: program.Unknown, Language: program.Python}, false, dTorch},
		{program.Program{Framework: program.Unknown, Language: program.Python}, true, dCUDA},
		{program.Program{Framework: program.CUDA, Language: program.CPP}, false, dCUDA},
		{program.Program{Framework: program.TensorRT, Language: program.Python}, false, dCUDA},
		{program.Program{Framework: program.OpenACC}, false, dOpenACC},
		{program.Program{Framework: program.OpenMP}, false, dOpenMP},
		{program.Program{Framework: program.MPI}, false, dMPI},
		{program.Program{Framework: program.CuPy}, false, dCuPy},
		{program.Program{Framework: program.JAX}, false, dJAX},
		{program.Program{Framework: program.RAPIDS}, false, dRAPIDS},
	}
	for _, c := range cases {
		in := tr
		if c.lean {
			in = lean
		}
		if got := dialectOf(c.p, in); got != c.want {
			t.Errorf("dialectOf(%s/%s, lean=%v) = %d, want %d", c.p.Framework, c.p.Language, c.lean, got, c.want)
		}
	}
}
