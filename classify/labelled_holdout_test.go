package classify

import "testing"

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
	t.Logf("held out (written after the rules)")
	scoreRuns(t, "held out, ", labelledPrograms(t, "ho_"), []labelledRun{
		{"lean", "lean", Options{}, 0.750, 0.644},
		{"nsys defaults", "default", Options{}, 0.700, 0.644},
	})
}
