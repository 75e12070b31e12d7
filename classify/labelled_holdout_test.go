package classify

import (
	"fmt"
	"strings"
	"testing"
)

// TestLabelledHeldOut scores the classifier on the held-out programs
// (fixtures/labelled/programs/ho_*.py): ten patterns written, labelled and
// committed after the kernel rules (kernels.go) and the printed-site rule
// (printed.go) were drawn from the labelled set, to check those rules on
// patterns they had not seen. They were captured in two modes, lean and
// nsys's defaults. docs/classifier.md ("Held out") is its log:
//
//	go test -count=1 ./classify/ -run Labelled -v
//
// The floors are the scores measured when the held-out set was first
// scored. A true dependency called false fails the test, as in
// TestLabelledScore.
func TestLabelledHeldOut(t *testing.T) {
	t.Chdir("..")
	runs := []struct {
		evidence, mode  string
		minTop, minSync float64 // floors: top-site score, share of syncs right
	}{
		{"lean", "lean", 0.750, 0.644},
		{"nsys defaults", "default", 0.650, 0.644},
	}
	programs := labelledPrograms(t, true)
	t.Logf("held out (written after the rules)")
	t.Logf("| evidence | programs | top site right | top unknown | top score | syncs | right | unknown | wrong | false where truth is true |")
	t.Logf("|---|---|---|---|---|---|---|---|---|---|")
	var all []string
	for _, run := range runs {
		var sc labelledScore
		for _, p := range programs {
			before := sc
			scoreLabelled(t, &sc, p+"."+run.mode, run.mode, Options{})
			all = append(all, fmt.Sprintf("(%s) %s: %d syncs: %d right, %d unknown, %d wrong, %d false where true", run.evidence, p,
				sc.syncs-before.syncs, sc.right-before.right, sc.unknown-before.unknown, sc.wrong-before.wrong,
				sc.falseWhenTrue-before.falseWhenTrue))
		}
		sc.top = (float64(sc.topRight) + float64(sc.topUnknown)/2) / float64(sc.programs)
		t.Logf("| %s | %d | %d | %d | %.1f%% | %d | %d (%s) | %d | %d | %d |", run.evidence, sc.programs, sc.topRight,
			sc.topUnknown, 100*sc.top, sc.syncs, sc.right, pct(sc.right, sc.syncs), sc.unknown, sc.wrong, sc.falseWhenTrue)
		for _, m := range sc.misses {
			all = append(all, fmt.Sprintf("(%s) %s", run.evidence, m))
		}
		if sc.falseWhenTrue > 0 {
			t.Errorf("held out, %s: %d syncs called false whose truth is true:\n  %s", run.evidence, sc.falseWhenTrue,
				strings.Join(sc.dangerous, "\n  "))
		}
		if sc.top+1e-9 < run.minTop {
			t.Errorf("held out, %s: top-site score %.1f%%, floor %.1f%%", run.evidence, 100*sc.top, 100*run.minTop)
		}
		if share := float64(sc.right) / float64(sc.syncs); share+1e-9 < run.minSync {
			t.Errorf("held out, %s: %.1f%% of syncs right, floor %.1f%%", run.evidence, 100*share, 100*run.minSync)
		}
	}
	for _, m := range all {
		t.Logf("  %s", m)
	}
}
