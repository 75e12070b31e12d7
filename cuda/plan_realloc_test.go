package cuda

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
)

// TestPlanReallocGoesWithTheFree checks the replay's side of the
// re-allocation rule (whatif.ClaimReallocs) on the warm capture of the
// labelled program that calls empty_cache() every step: with the frees
// removed, the plan leaves out the cudaMalloc that each step makes again,
// all but the region's first (no free before it), as the simulator does.
func TestPlanReallocGoesWithTheFree(t *testing.T) {
	const name = "mem_empty_cache.lean"
	gz := filepath.Join("..", "fixtures", "labelled", "savings", name+".sqlite.gz")
	f := loadFixtureFile(t, fixturegz.Gunzip(t, gz, t.TempDir()), name, "measured")
	frees := f.syncsInRange("measured")
	if len(frees) == 0 {
		t.Fatal("no sync in measured")
	}
	mallocs := func(p *Plan) (n int) {
		for _, iv := range p.Intervals {
			for _, tp := range iv.Threads {
				for _, a := range tp.Actions {
					if strings.HasPrefix(a.Name, "cudaMalloc") {
						n++
					}
				}
			}
		}
		return n
	}
	base, err := BuildPlan(f.tl, f.t, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	removed, err := BuildPlan(f.tl, f.t, PlanOptions{Remove: [][]int{frees}})
	if err != nil {
		t.Fatal(err)
	}
	b, r := mallocs(base), mallocs(removed)
	if b < len(frees) {
		t.Fatalf("unchanged plan: %d cudaMalloc actions, want at least the %d frees' re-allocations", b, len(frees))
	}
	if r > b-len(frees)+1 {
		t.Errorf("frees removed: %d cudaMalloc actions of %d, want the re-allocations after the %d frees gone", r, b, len(frees))
	}
}
