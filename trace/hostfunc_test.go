package trace

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
)

// TestHostFuncWarning: a region that launches host functions (JAX's
// measured steps, whose waits are host-side, docs/groundtruth-nonpytorch.md;
// JAX's whole trace, whose syncs are its start-up's) gets a warning with
// the launches counted as plain SQL counts them; a region without
// host-function launches gets none.
func TestHostFuncWarning(t *testing.T) {
	dir := t.TempDir()
	jax := fixturegz.Gunzip(t, "../fixtures/nonpytorch/jax_float_loss.lean_nocmdbuf.sqlite.gz", dir)
	jaxGraphs := fixturegz.Gunzip(t, "../fixtures/nonpytorch/jax_block_each_step.lean.sqlite.gz", dir)
	for _, tc := range []struct {
		name, path, nvtx string
		warn             bool
		head             string
	}{
		{"JAX float(loss), measured steps", jax, "measured", true, "no host sync in the region, but %d host-function launches"},
		{"JAX block_until_ready with CUDA graphs, measured steps", jaxGraphs, "measured", true, "no host sync in the region, but %d host-function launches"},
		{"JAX, whole trace (start-up syncs)", jax, "", true, "syncs, the region holds %d host-function launches"},
		{"PyTorch .item() loop", filepath.Join("..", "fixtures", "gt_item_tiny.sqlite.gz"), "measured", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := loadFile(t, tc.path, LoadOptions{NVTX: tc.nvtx})
			var got string
			for _, w := range tr.Warnings {
				if strings.Contains(w, "host-function launches") {
					got = w
				}
			}
			if !tc.warn {
				if got != "" {
					t.Errorf("warning %q on a region with %d syncs", got, len(tr.Syncs))
				}
				return
			}
			db := rawDB(t, tc.path)
			want := queryInt(t, db, fmt.Sprintf(`SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
				WHERE (s.value LIKE 'cuLaunchHostFunc%%' OR s.value LIKE 'cudaLaunchHostFunc%%')
				AND r.start >= %d AND r.start < %d`, tr.Region.Start, tr.Region.End))
			if want == 0 || !strings.Contains(got, fmt.Sprintf(tc.head, want)) {
				t.Errorf("warning %q, want one counting the region's %d host-function launches", got, want)
			}
		})
	}
}
