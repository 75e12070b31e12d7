package cuda

import (
	"strings"
	"testing"
)

// TestPlanPinnedRewrite checks the replay's side of the pinned rewrite on
// the ground truth's 8 MiB pageable copies (gt_h2d_large) and 256 KiB ones
// (gt_h2d_medium): replayed unchanged, a staged copy is its recorded time
// (a real copy would be pinned, several times faster); with its sync
// removed, it is a real copy of all its bytes. A copy too small to be
// staged stays a real copy either way. Unchanged, each is issued after the
// host's staging of it (Work.StagedNs); rewritten, at once.
func TestPlanPinnedRewrite(t *testing.T) {
	for _, tc := range []struct {
		name        string
		bytes       int64
		stagedSpins bool
	}{
		{"gt_h2d_large", 8 << 20, true},
		{"gt_h2d_medium", 256 << 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := loadFixture(t, tc.name, "measured")
			site := f.syncsInRange("sync:h2d")
			if len(site) == 0 {
				t.Fatal("no sync in sync:h2d")
			}
			staged := func(p *Plan) (n int) {
				for _, iv := range p.Intervals {
					for _, tp := range iv.Threads {
						for _, w := range tp.Work {
							if w.StagedNs > 0 {
								n++
							}
						}
					}
				}
				return n
			}
			count := func(p *Plan) (copies, spins int) {
				for _, iv := range p.Intervals {
					for _, tp := range iv.Threads {
						for _, w := range tp.Work {
							switch {
							case w.Kind == WorkCopy && w.Bytes == tc.bytes:
								copies++
							case w.Kind == WorkSpin && strings.Contains(w.Op, "staged"):
								spins++
							}
						}
					}
				}
				return copies, spins
			}
			base, err := BuildPlan(f.tl, f.t, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			removed, err := BuildPlan(f.tl, f.t, PlanOptions{Remove: [][]int{site}})
			if err != nil {
				t.Fatal(err)
			}
			bc, bs := count(base)
			rc, rs := count(removed)
			// Every recorded pageable copy to the device is staged on the
			// host before its GPU part; a rewritten one is not.
			if sb, sr := staged(base), staged(removed); sb < len(site) || sr != 0 {
				t.Errorf("staged copies: unchanged %d, rewritten %d; want at least %d and 0", sb, sr, len(site))
			}
			if tc.stagedSpins {
				if bc != 0 || bs < len(site) {
					t.Errorf("unchanged: %d real copies, %d staged spins; want 0 and at least %d", bc, bs, len(site))
				}
				if rc < len(site) || rs != bs-rc {
					t.Errorf("rewritten: %d real copies, %d staged spins (unchanged %d); want every removed copy real", rc, rs, bs)
				}
				return
			}
			if bs != 0 || rs != 0 || bc < len(site) || rc != bc {
				t.Errorf("small copies: unchanged %d copies %d spins, rewritten %d copies %d spins; want real copies both ways", bc, bs, rc, rs)
			}
		})
	}
}
