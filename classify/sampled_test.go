package classify

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// TestSampleUserFrames checks which frames of a sampled stack are the
// program's: those past the first run of CUDA frames from the top.
func TestSampleUserFrames(t *testing.T) {
	cuda := trace.Frame{Symbol: "0x7f72b474d692", Module: "/usr/lib64/libcuda.so.525.105.17", Unresolved: true}
	cases := []struct {
		name  string
		stack []trace.Frame
		want  []string
	}{
		{"driver then cudart linked into the program", []trace.Frame{cuda, {Symbol: "__cudart1050", Module: "/bin/app"},
			{Symbol: "cudaDeviceSynchronize", Module: "/bin/app"}, {Symbol: "advec_mom_kernel(int)", Module: "/bin/app"}, {Symbol: "main", Module: "/bin/app"}},
			[]string{"advec_mom_kernel(int)", "main"}},
		{"a spin-wait's clock call above the driver", []trace.Frame{{Symbol: "__clock_gettime", Module: "/usr/lib64/libc-2.17.so"}, cuda,
			{Symbol: "0x1", Module: "/bin/app", Unresolved: true}, {Symbol: "ForwardSub()", Module: "/bin/app"}},
			[]string{"ForwardSub()"}},
		{"PyTorch through libcudart", []trace.Frame{cuda, {Symbol: "cudaDeviceSynchronize", Module: "/env/lib/libcudart.so.12"},
			{Symbol: "c10::cuda::device_synchronize()", Module: "/env/lib/libc10_cuda.so"}, {Symbol: "THCPModule_cudaSynchronize(_object*, _object*)", Module: "/env/lib/libtorch_python.so"}},
			[]string{"c10::cuda::device_synchronize()", "THCPModule_cudaSynchronize(_object*, _object*)"}},
		{"cut short inside the driver", []trace.Frame{cuda}, nil},
		{"no CUDA frame at all", []trace.Frame{{Symbol: "main", Module: "/bin/app"}}, nil},
	}
	for _, c := range cases {
		var got []string
		for _, f := range sampleUserFrames(nil, c.stack) {
			got = append(got, f.Symbol)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSampledSites checks, on the corpus exports with CPU samples inside
// syncs, that the samples name the program's function of a C++ site (as
// evidence and as its location) and the operation of a PyTorch one, and
// that they change no site's syncs and no verdict: the same export with
// the samples dropped groups the same syncs into the same sites, with the
// same dependency and category.
func TestSampledSites(t *testing.T) {
	cases := []struct {
		file     string
		function string // the program function a site's sampled stack names
		basis    Basis  // the basis of that site's verdict
	}{
		{"cuda-cloverleaf_perlmutter-a100_nsys2024.5.sqlite", "advection(global_variables&)", BasisPattern},
		{"cuda-rodinia-gaussian-threadsync_rtx3090_nsys2022.4.sqlite", "ForwardSub()", BasisPattern},
		{"cuda-hungarian-devsync_2xrtx3090_nsys2025.5.sqlite", "solve_from_kl(", BasisPattern},
		{"pytorch-llm-inference-sim_rtx4060ti_nsys2024.6.sqlite", "c10::cuda::device_synchronize()", BasisSamples},
	}
	dir := "../../shared/corpus"
	if files, _ := filepath.Glob(filepath.Join(dir, "*.sqlite")); len(files) == 0 {
		t.Skip("no shared corpus at ../../shared/corpus (it sits beside the repository in CI)")
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			tr := load(t, filepath.Join(dir, c.file))
			sites := Sites(tr)
			found := false
			for _, s := range sites {
				if !strings.HasPrefix(s.Location.Function, c.function) {
					continue
				}
				ev := strings.Join(s.Evidence, "\n")
				if !strings.Contains(ev, "CPU samples inside this site's syncs: `"+shortSymbol(c.function)) || s.Basis != c.basis {
					t.Errorf("%s at %s: basis %s, evidence %q", s.ID, s.Location.Function, s.Basis, s.Evidence)
				}
				found = true
			}
			if !found {
				t.Errorf("no site located at %s from its samples", c.function)
			}
			// The same trace without samples.
			bare := *tr
			bare.Syncs = slices.Clone(tr.Syncs)
			for i := range bare.Syncs {
				bare.Syncs[i].SetSamples(nil)
			}
			without := Sites(&bare)
			if len(without) != len(sites) {
				t.Fatalf("%d sites with samples, %d without", len(sites), len(without))
			}
			for i := range sites {
				a, b := sites[i], without[i]
				if a.Key != b.Key || !slices.Equal(a.Syncs, b.Syncs) || a.Dependency != b.Dependency || a.Category != b.Category {
					t.Errorf("site %d: %s %s/%s %d syncs with samples, %s %s/%s %d without", i, a.Key, a.Dependency, a.Category, len(a.Syncs), b.Key, b.Dependency, b.Category, len(b.Syncs))
				}
				if b.Basis.rank() > a.Basis.rank() {
					t.Errorf("site %d: basis %s with samples, %s without", i, a.Basis, b.Basis)
				}
			}
		})
	}
}
