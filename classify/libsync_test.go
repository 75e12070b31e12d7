package classify

import (
	"strings"
	"testing"
)

// TestLibrarySites checks, on the corpus, that explicit syncs a library
// makes inside its own calls are not "likely false" with advice for the
// program's code: thrust's end-of-algorithm wait under CuPy's sort
// (GTLS, shown by the thrust kernel before each wait), libcudf's waits
// inside its NVTX ranges (cuDF), QUDA's driver-API waits (the WSL2 export:
// QUDA's kernels name it, no GPU activity) are unknown, name the library
// and phrase the fix at the program's call; the program's own syncs in
// the same exports keep their verdicts (cuDF's pageable upload, the
// runtime-API device synchronize of the QUDA export's Python side). The
// thrust rule was drawn from GTLS and checked on cuDF, whose aggregate
// waits also follow thrust kernels; no labelled fixture moves.
func TestLibrarySites(t *testing.T) {
	for _, c := range []struct {
		file, site string
		dep        Dependency
		library    string   // "": none
		fix        []string // words the fix says
	}{
		{"cupy-gtls_rtx3060_nsys2023.1.sqlite", "s1", DepUnknown, "thrust", []string{"inside thrust", "`argsort`"}},
		{"rapids-cudf_quadro-rtx8000_nsys2020.3.sqlite", "s1", DepUnknown, "libcudf:aggregate", []string{"inside libcudf", "(`aggregate`)", "groupby"}},
		{"rapids-cudf_quadro-rtx8000_nsys2020.3.sqlite", "s8", DepUnknown, "libcudf:sorted_order", []string{"inside libcudf"}},
		{"rapids-cudf_quadro-rtx8000_nsys2020.3.sqlite", "s2", DepFalse, "", []string{"cudf.read_parquet"}},
		{"wsl2-cupy-quda-lqcd-nokernels_rtx4060laptop_nsys2023.3.sqlite", "s1", DepUnknown, "QUDA", []string{"inside QUDA", "loadGaugeQuda"}},
		{"wsl2-cupy-quda-lqcd-nokernels_rtx4060laptop_nsys2023.3.sqlite", "s2", DepUnknown, "QUDA", []string{"inside QUDA"}},
		{"wsl2-cupy-quda-lqcd-nokernels_rtx4060laptop_nsys2023.3.sqlite", "s4", DepFalse, "", []string{"cupy.cuda"}},
		{"cuda-gemm-event-bench_rtx5070ti_nsys2025.5.sqlite", "s2", DepFalse, "", []string{"cudaStreamWaitEvent"}},
	} {
		t.Run(c.file+" "+c.site, func(t *testing.T) {
			got := corpusSite(t, c.file, c.site)
			if got.Dependency != c.dep || got.Location.Library != c.library {
				t.Fatalf("%s: %s, library %q; want %s, %q", c.site, got.Dependency, got.Location.Library, c.dep, c.library)
			}
			for _, w := range c.fix {
				if !strings.Contains(got.Fix, w) {
					t.Errorf("%s: fix %q lacks %q", c.site, got.Fix, w)
				}
			}
			if c.library != "" && (len(got.Evidence) == 0 || !strings.HasPrefix(got.Evidence[0], "made inside ")) {
				t.Errorf("%s: evidence %q", c.site, got.Evidence)
			}
		})
	}
}
