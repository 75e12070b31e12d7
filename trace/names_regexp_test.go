package trace

import (
	"regexp"
	"testing"
)

// TestNamesMatchTheirRegexps: NormalizeName and baseName strip what the
// regular expressions they replaced stripped — `_v[0-9]+$` from runtime
// names, `(_v[0-9]+)?(_ptds|_ptsz)?$` from any — on names of every shape.
func TestNamesMatchTheirRegexps(t *testing.T) {
	cupti := regexp.MustCompile(`_v[0-9]+$`)
	driver := regexp.MustCompile(`(_v[0-9]+)?(_ptds|_ptsz)?$`)
	norm := func(raw string) string {
		if len(raw) >= 4 && raw[:4] == "cuda" {
			return cupti.ReplaceAllString(raw, "")
		}
		return raw
	}
	names := []string{"cudaStreamSynchronize_v3020", "cudaStreamSynchronize", "cuMemcpyDtoH_v2", "cuMemcpyHtoDAsync_v2_ptsz",
		"cudaMemcpy_ptds", "cudaMemcpyAsync_v3020_ptsz", "cudaFoo_v", "cudaFoo_vx1", "cuFoo_v2_v3", "cuFoo_v2x", "cudaFoo_v2_ptds",
		"", "_v1", "cuda", "cuda_v", "cuCtxSynchronize", "cuMemFree_v2", "cudaMalloc_v3020_v2", "x_ptsz", "x_v12_ptds_v1", "cuMemcpy_ptds_v2"}
	for _, n := range names {
		if got, want := NormalizeName(n), norm(n); got != want {
			t.Errorf("NormalizeName(%q) = %q, want %q", n, got, want)
		}
		if got, want := baseName(n), driver.ReplaceAllString(norm(n), ""); got != want {
			t.Errorf("baseName(%q) = %q, want %q", n, got, want)
		}
	}
}
