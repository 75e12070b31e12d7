package program

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/trace"
)

// corpusDir is the shared corpus of real third-party exports.
const corpusDir = "../../shared/corpus"

// load opens and loads an export; one without a CUDA trace gives nil.
func load(t *testing.T, path string) *trace.Trace {
	t.Helper()
	x, err := trace.Open(context.Background(), path)
	if errors.Is(err, trace.ErrNoCUDATrace) {
		return nil
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer x.Close()
	tr, err := x.Load(context.Background(), trace.LoadOptions{})
	if errors.Is(err, trace.ErrNoCUDATrace) {
		return nil
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tr
}

// TestDetectCorpus checks the detection of every corpus export against
// what SOURCES.md says the program is, and the evidence that decided.
func TestDetectCorpus(t *testing.T) {
	cases := []struct {
		file      string
		framework Framework
		language  string
		evidence  string // a fact the evidence must hold
	}{
		{"cuda-cloverleaf_perlmutter-a100_nsys2024.5.sqlite", CUDA, CPP, "process cuda-cloverleaf"},
		{"cuda-gemm-event-bench_rtx5070ti_nsys2025.5.sqlite", CUDA, CPP, "no framework's kernel or library names, no interpreter"},
		{"cuda-gpudb-hashjoin-mordred_quadro-rtx6000_nsys2021.2.sqlite", CUDA, CPP, "no framework's kernel or library names, no interpreter"},
		{"cuda-hungarian-devsync_2xrtx3090_nsys2025.5.sqlite", CUDA, CPP, "process build/test1"},
		{"cuda-jetson-orin-video-histogram_nsys2024.5.sqlite", CUDA, CPP, "process ./ex3"},
		{"cuda-rodinia-gaussian-threadsync_rtx3090_nsys2022.4.sqlite", CUDA, CPP, "process ./gaussian"},
		{"cupy-gtls_rtx3060_nsys2023.1.sqlite", CuPy, Python, "kernels cupy_…"},
		{"icon-graupel-no-cuda-trace_reexport2025.3.sqlite", "", "", ""}, // no CUDA trace: nothing to detect from
		{"jax-alpa-profile-mem-driverapi_reexport2025.3.sqlite", JAX, Python, "kernels jax::…"},
		// No kernel table and no JAX name anywhere: a Python program of
		// unknown framework (NCCL's domain is all there is).
		{"jax-alpa-report1-nokernels_reexport2025.3.sqlite", Unknown, Python, "process python"},
		{"mpi-cuda-saxpy_perlmutter-a100_nsys2022.2.sqlite", MPI, CPP, `NVTX domain "MPI"`},
		{"openacc-jacobi_4xv100_reexport2025.3.sqlite", OpenACC, Native, "NVHPC OpenACC kernels FUNC_LINE_gpu"},
		{"openacc-nvhpc_rtx3080_nsys2020.5.sqlite", OpenACC, Native, "NVHPC OpenACC runtime kernels __pgi_uacc_…"},
		{"openmp-offload-heat_t4_nsys2023.3.sqlite", OpenMP, Native, "NVHPC OpenMP target kernels nvkernel_…"},
		{"pytorch-aiprofiler-train-baseline_reexport2025.3.sqlite", PyTorch, Python, "kernels at::native::…"},
		{"pytorch-aiprofiler-train-firstopt-nvtx_reexport2025.3.sqlite", PyTorch, Python, "process python3"},
		{"pytorch-cnn-dlprof_rtx2070s_nsys2022.1.sqlite", PyTorch, Python, "kernels at::native::…"},
		{"pytorch-llm-inference-sim_rtx4060ti_nsys2024.6.sqlite", PyTorch, Python, "process python"},
		// nvFuser's C++ test binary (gtest HopperMatmulTest).
		{"pytorch-nvfuser-matmul_8xh100_reexport2025.3.sqlite", PyTorch, CPP, "process ./bin/test_matmul"},
		{"pytorch-nvfuser-xentropy-bench_h200_nsys2025.1.sqlite", PyTorch, Python, "process pytest"},
		{"rapids-cudf_quadro-rtx8000_nsys2020.3.sqlite", RAPIDS, Python, `NVTX domain "cudf_python"`},
		{"tensorrt-memfusion_4xrtx3090_nsys2023.1.sqlite", TensorRT, Python, `NVTX domain "TensorRT"`},
		{"wsl2-cupy-quda-lqcd-nokernels_rtx4060laptop_nsys2023.3.sqlite", CuPy, Python, "kernels cupy_…"},
	}
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	if len(files) == 0 {
		t.Skipf("no shared corpus at %s", corpusDir)
	}
	seen := map[string]bool{}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			seen[c.file] = true
			tr := load(t, filepath.Join(corpusDir, c.file))
			if c.framework == "" {
				if tr != nil {
					t.Fatalf("loaded, want no CUDA trace")
				}
				return
			}
			p := Detect(tr)
			if p.Framework != c.framework || p.Language != c.language {
				t.Errorf("detected %s / %s, want %s / %s (evidence: %s)", p.Framework, p.Language, c.framework, c.language, p.Why())
			}
			if !slices.Contains(p.Evidence, c.evidence) {
				t.Errorf("evidence %q lacks %q", p.Evidence, c.evidence)
			}
		})
	}
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s: a corpus export without an expected detection", filepath.Base(f))
		}
	}
}

// TestDetectFixtures checks that every PyTorch fixture reads as PyTorch
// from Python: the repository's fixtures and the labelled set in its lean
// capture (the least evidence) and its backtrace capture.
func TestDetectFixtures(t *testing.T) {
	files, _ := filepath.Glob("../fixtures/*.sqlite*")
	for _, mode := range []string{"lean", "backtrace"} {
		gz, _ := filepath.Glob("../fixtures/labelled/*." + mode + ".sqlite.gz")
		files = append(files, gz...)
	}
	if len(files) < 60 {
		t.Fatalf("found %d fixtures, want the repository's and the labelled set", len(files))
	}
	dir := t.TempDir()
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			path := f
			if strings.HasSuffix(f, ".gz") {
				path = fixturegz.Gunzip(t, f, dir)
			}
			tr := load(t, path)
			if tr == nil {
				t.Fatal("no CUDA trace")
			}
			p := Detect(tr)
			if p.Framework != PyTorch || p.Language != Python {
				t.Errorf("detected %s / %s, want pytorch / Python (evidence: %s)", p.Framework, p.Language, p.Why())
			}
		})
	}
}

// TestDetectNonPyTorchFixtures checks the ground-truth programs beyond
// PyTorch (fixtures/nonpytorch): each is detected as the framework its
// truth file names, JAX from XLA's NVTX ranges alone (its lean captures
// hold no jax:: kernel or library name).
func TestDetectNonPyTorchFixtures(t *testing.T) {
	want := map[string]Framework{"cu_": CUDA, "cp_": CuPy, "jax_": JAX}
	files, _ := filepath.Glob("../fixtures/nonpytorch/*.sqlite.gz")
	if len(files) < 20 {
		t.Fatalf("found %d non-PyTorch fixtures, want 20", len(files))
	}
	dir := t.TempDir()
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			tr := load(t, fixturegz.Gunzip(t, f, dir))
			p := Detect(tr)
			for prefix, fw := range want {
				if !strings.HasPrefix(filepath.Base(f), prefix) {
					continue
				}
				if fw == CUDA {
					if p.Framework != CUDA || p.Language != CPP {
						t.Errorf("detected %s / %s, want plain CUDA from C/C++ (evidence: %s)", p.Framework, p.Language, p.Why())
					}
					continue
				}
				if p.Framework != fw || p.Language != Python {
					t.Errorf("detected %s / %s, want %s / Python (evidence: %s)", p.Framework, p.Language, fw, p.Why())
				}
			}
		})
	}
}

// TestDetectSummary checks the header's words for detected programs.
func TestDetectSummary(t *testing.T) {
	cases := []struct {
		p    Program
		want string
	}{
		{Program{Framework: OpenACC, Language: Native, Also: []Framework{MPI}}, "OpenACC (C/C++/Fortran) + MPI"},
		{Program{Framework: CUDA, Language: CPP}, "CUDA (C/C++)"},
		{Program{Framework: Unknown, Language: Python}, "unknown framework (Python)"},
		{Program{Framework: JAX, Language: UnknownLanguage}, "JAX/XLA"},
	}
	for _, c := range cases {
		if got := c.p.Summary(); got != c.want {
			t.Errorf("Summary() = %q, want %q", got, c.want)
		}
	}
}

// TestDetectQUDA: QUDA's kernels (mangled _ZN4quda… in the WSL2 export,
// which has no GPU activity) name it beside CuPy, the framework; no other
// corpus export names it.
func TestDetectQUDA(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	if len(files) == 0 {
		t.Skipf("no shared corpus at %s", corpusDir)
	}
	for _, f := range files {
		tr := load(t, f)
		if tr == nil {
			continue
		}
		p := Detect(tr)
		want := strings.HasPrefix(filepath.Base(f), "wsl2-cupy-quda")
		if got := slices.Contains(p.Also, QUDA); got != want || p.Framework == QUDA {
			t.Errorf("%s: %s, also %v (evidence %q); QUDA beside it: %v", filepath.Base(f), p.Framework, p.Also, p.Evidence, want)
		}
		if want && !slices.Contains(p.Evidence, "kernels quda::… (mangled _ZN4quda…)") {
			t.Errorf("%s: evidence %q", filepath.Base(f), p.Evidence)
		}
	}
}
