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

// TestLabelledHeldOutRound2 scores the second held-out round
// (programs/ho2_*.py): nine patterns written, labelled and committed
// (09be9f4) after the GradScaler-kernel, library-display and
// copy-only-kept rules and the attribute and closure analysis, before any
// capture, and captured in all four modes. Floors: the scores measured
// when the round was first scored, except the two backtrace modes, which
// rose when a sync made inside a library became a site of its own
// (sitekey.go; docs/classifier.md has both numbers).
func TestLabelledHeldOutRound2(t *testing.T) {
	t.Chdir("..")
	t.Logf("held out, round 2 (written after the rules)")
	found := Options{FindSources: true}
	scoreRuns(t, "held out (round 2), ", labelledPrograms(t, "ho2_"), []labelledRun{
		{"lean", "lean", Options{}, 0.611, 0.250},
		{"nsys defaults", "default", Options{}, 0.555, 0.250},
		{"autograd NVTX", "autograd", Options{}, 0.611, 0.333},
		{"backtraces, no source", "backtrace", Options{}, 0.722, 0.583},
		{"backtraces, source found without flags", "backtrace", found, 0.722, 0.583},
	})
}
