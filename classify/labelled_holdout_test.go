package classify

import "testing"

// TestLabelledHeldOut scores the classifier on the held-out programs
// (fixtures/labelled/programs/ho_*.py): ten patterns written, labelled and
// committed after the kernel rules (kernels.go) and the printed-site rule
// (printed.go) were drawn from the labelled set, to check those rules on
// patterns they had not seen. They were captured in two modes, lean and
// nsys's defaults; the defaults' exports (1.2 MB) left the repository in
// stop 28 for the fixtures' size budget (their score, 100% with the
// program found, as the lean mode's, is in docs/classifier.md "Held
// out"). docs/classifier.md ("Held out") is its log:
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
		{"lean, program found without flags", "lean", Options{FindSources: true}, 1.000, 0.933},
	})
}

// TestLabelledHeldOutRound2 scores the second held-out round
// (programs/ho2_*.py): nine patterns written, labelled and committed
// (09be9f4) after the GradScaler-kernel, library-display and
// copy-only-kept rules and the attribute and closure analysis, before any
// capture, and captured in all four modes. Floors: the scores measured
// when the round was first scored, except the two backtrace modes, which
// rose when a sync made inside a library became a site of its own
// (sitekey.go), and the source mode again with the after-the-loop
// analysis (pyfill.go; docs/classifier.md has every number).
func TestLabelledHeldOutRound2(t *testing.T) {
	t.Chdir("..")
	t.Logf("held out, round 2 (written after the rules)")
	found := Options{FindSources: true}
	scoreRuns(t, "held out (round 2), ", labelledPrograms(t, "ho2_"), []labelledRun{
		{"lean", "lean", Options{}, 0.611, 0.250},
		{"lean, program found without flags", "lean", found, 0.777, 0.500},
		{"autograd NVTX", "autograd", Options{}, 0.555, 0.250},
		{"autograd NVTX, program found without flags", "autograd", found, 0.722, 0.500},
	})
}

// TestLabelledHeldOutRound3 scores the third held-out round
// (programs/ho3_*.py): eight patterns written and labelled after stop 14's
// rules and before the after-the-loop analysis of containers (pyfill.go),
// committed before any capture (4b14064). As first scored, the source mode
// called one true dependency false (ho3_passed_to_checker: a list handed
// to a checker function); the floors are the scores after the fix and the
// analysis (docs/classifier.md, "Held out, round 3", has both), and the
// source mode's after the rule for containers tested in their loop, which
// was drawn from this round's three true programs (in-sample here; round 4
// checks it).
func TestLabelledHeldOutRound3(t *testing.T) {
	t.Chdir("..")
	t.Logf("held out, round 3 (written after the rules)")
	found := Options{FindSources: true}
	scoreRuns(t, "held out (round 3), ", labelledPrograms(t, "ho3_"), []labelledRun{
		{"lean", "lean", Options{}, 0.500, 0},
		{"lean, program found without flags", "lean", found, 0.937, 0.875},
		{"autograd NVTX", "autograd", Options{}, 0.500, 0},
		{"autograd NVTX, program found without flags", "autograd", found, 0.937, 0.875},
	})
}

// TestLabelledHeldOutRound4 scores the fourth held-out round
// (programs/ho4_*.py): six patterns written and labelled after the
// after-the-loop analysis and before the rule for containers tested inside
// their loop, committed before any capture (28506a5), captured lean and
// with backtraces. Floors: the scores with that rule (75.0% with the source
// before it); docs/classifier.md ("Held out, round 4") has both.
func TestLabelledHeldOutRound4(t *testing.T) {
	t.Chdir("..")
	t.Logf("held out, round 4 (written after the rules)")
	scoreRuns(t, "held out (round 4), ", labelledPrograms(t, "ho4_"), []labelledRun{
		{"lean", "lean", Options{}, 0.500, 0},
		{"lean, program found without flags", "lean", Options{FindSources: true}, 0.916, 0.833},
		{"backtraces, source found without flags", "backtrace", Options{FindSources: true}, 1.000, 1.000},
	})
}

// TestLabelledHeldOutRound5 scores the fifth held-out round
// (programs/ho5_*.py and their local modules _ho5_*.py): ten programs
// written and labelled by a helper who did not read the classifier,
// committed before any capture (71ad272), captured lean and with autograd
// NVTX. Scored without the program's files (Options{}) and with them found
// as the commands find them (FindSources: the captured command line's
// script, looked for under the current directory). Floors: the scores
// measured when the program matcher landed; docs/classifier.md ("Held
// out, round 5") has them before and after.
func TestLabelledHeldOutRound5(t *testing.T) {
	t.Chdir("..")
	t.Logf("held out, round 5 (written before the program matcher)")
	found := Options{FindSources: true}
	scoreRuns(t, "held out (round 5), ", labelledPrograms(t, "ho5_"), []labelledRun{
		{"lean", "lean", Options{}, 0.500, 0},
		{"lean, program found without flags", "lean", found, 0.650, 0.307}, // 0.600, 0.230 before d963010
		{"autograd NVTX", "autograd", Options{}, 0.500, 0},
		{"autograd NVTX, program found without flags", "autograd", found, 0.650, 0.307},
	})
}

// TestLabelledHeldOutRound6 scores the sixth held-out round
// (programs/ho6_*.py and _ho6_*.py): ten programs written and labelled by
// a helper told what the program matcher does (README, "How verdicts are
// reached", item 6) but not its code, five of them traps for it (a true
// dependency that a reading of the program could take for a logged
// value), committed before any capture (9485931; its three modules went
// in with 0a1d98b), captured lean and with autograd NVTX after round 5's
// fixes. Floors: the scores as first scored, after the rule "formatting a
// 0-d tensor" stopped deciding false (as first scored it called two of the
// traps false in the autograd mode, matcher or not: docs/classifier.md).
func TestLabelledHeldOutRound6(t *testing.T) {
	t.Chdir("..")
	t.Logf("held out, round 6 (written against the description of the program matcher)")
	found := Options{FindSources: true}
	scoreRuns(t, "held out (round 6), ", labelledPrograms(t, "ho6_"), []labelledRun{
		{"lean", "lean", Options{}, 0.500, 0},
		{"lean, program found without flags", "lean", found, 0.750, 0.461},
		{"autograd NVTX", "autograd", Options{}, 0.500, 0},
		{"autograd NVTX, program found without flags", "autograd", found, 0.750, 0.461},
	})
}

// TestLabelledHeldOutRound7 scores the seventh held-out round
// (programs/ho7_*.py and _ho7_*.py): ten programs written and labelled by
// a helper who did not read the classifier, asked for ordinary training
// and evaluation code that includes '%' formatting and key functions in
// new roles (round 6 led to following both), committed (c6d4d5b) before
// any capture and before the matcher ran on them, captured lean and with
// autograd NVTX. As first scored 65.0% lean with the program; the floors
// are the scores after an empty slice (`x[:, 0]`) stopped counting as a
// bound that may be a tensor (docs/classifier.md has both).
func TestLabelledHeldOutRound7(t *testing.T) {
	t.Chdir("..")
	t.Logf("held out, round 7 (written after round 6's fixes)")
	found := Options{FindSources: true}
	scoreRuns(t, "held out (round 7), ", labelledPrograms(t, "ho7_"), []labelledRun{
		{"lean", "lean", Options{}, 0.500, 0},
		{"lean, program found without flags", "lean", found, 0.800, 0.450},
		{"autograd NVTX", "autograd", Options{}, 0.555, 0.052},
		{"autograd NVTX, program found without flags", "autograd", found, 0.833, 0.473},
	})
}

// sampledRound is one held-out round of programs with long GPU steps
// (programs/ps*_*.py and _ps_common.py), captured lean and lean with
// Python periodic sampling (pysample), each committed before any capture,
// with its floors: top-site score and share of syncs right, for lean,
// lean with the program found, sampling without the source, and sampling
// with the program found.
type sampledRound struct {
	name, prefix, title string
	floors              [4][2]float64
}

// sampledRounds: the rounds of stops 18 and 20, in order.
var sampledRounds = []sampledRound{
	// Round 8 (b379d1b): six programs whose steps queue milliseconds of
	// GPU work before the read, as real steps do, so that samples land
	// inside their syncs; two built so that the program's lines alone
	// cannot decide (a logged read and a tested one of the same kind; a
	// kept .tolist() and a .tolist() sizing a split elsewhere).
	{"round8", "ps_", "Python periodic sampling", [4][2]float64{{0.500, 0.142}, {0.666, 0.285}, {0.500, 0.142}, {1.000, 0.857}}},
	// Round 9 (521ba41): eight programs by a helper who had not read the
	// classifier, after the sample reading landed (its first
	// out-of-sample check), three traps (a log line a monitor parses and
	// compares, a logged value tested in another file's function, a count
	// stored in a dict and used as topk's k). As first scored, sampled
	// with the program found, 62.5% with the f-string trap's three syncs
	// called false by "tensor printing" (Tensor.__format__ frames); the
	// floors are after that rule stopped deciding on them.
	{"round9", "ps9_", "Python periodic sampling, after the sampled-line reading", [4][2]float64{{0.562, 0.111}, {0.750, 0.444}, {0.562, 0.111}, {0.875, 0.777}}},
	// Round 10 (40d2661): eight by another helper, after round 9's fixes,
	// three traps. Floors: as first scored, the code unchanged; raised
	// after d963010 (trend_word_logline, a test that picks a log word).
	{"round10", "ps10_", "Python periodic sampling, after round 9's fixes", [4][2]float64{{0.437, 0}, {0.500, 0.200}, {0.437, 0}, {0.625, 0.400}}},
	// Round 11 (32a11dd): eight programs reading one bool a step, by a
	// helper, two traps (a flag stored in a dict the step then tests; a
	// helper that logs the flag and returns it to a caller that
	// branches), committed before it was read; it checks two changes made
	// while it was written: a bool read right after a reduction joins the
	// program matcher, and option keywords (device=, generator=, …) are not
	// sizes. Lean with the program: 50.0% before them, 75.0% after; stop
	// 28's rules made ps11_finite_history_list (lean) and
	// ps11_guard_only_logged (sampling) right.
	{"round11", "ps11_", "bool reads, after the 1-byte matcher change", [4][2]float64{{0.500, 0.500}, {0.875, 0.875}, {0.500, 0.500}, {1.000, 1.000}}},
	// Round 12 (7466fd9): eight programs reading values into records, by a
	// helper, four traps, after dict literals came to be followed by key
	// (unchanged by it: every top site unknown either way). As first
	// scored, with the program found, one trap was called false: an int
	// stored into a nested dict then used as narrow()'s length, taken as
	// only shown; stores into nested containers are now stores into their
	// root. Floors: after that fix (all unknown); raised after d963010
	// (values through the program's functions and dict keys).
	{"round12", "ps12_", "records, after dict entries are followed by key", [4][2]float64{{0.500, 0}, {0.625, 0.250}, {0.500, 0}, {0.687, 0.375}}},
	// Rounds 13-16 (stop 20; cc92a39, 7ad3192, 3245bdd, f2d883b): eight
	// programs each by helpers who had not read the classifier, values
	// handed to the program's own functions and methods; captured in four
	// modes, lean and pysample committed (the defaults and backtraces,
	// scored with them, are in a3a930f: with the program, as lean and as
	// pysample). Each round was scored out of sample against the rules
	// drawn from the rounds before it (docs/classifier.md "Round 16, and
	// what the four rounds say"): round 13 by none (all unknown; the first
	// callee following, b80e895, called its logging trap true and was
	// withdrawn), round 14 by d963010 (50.0 -> 56.2%), round 15 by
	// d963010 (62.5%) and 407b388 (50.0%), round 16 by all (50.0%; 43.8%
	// with dd04322's fallback, withdrawn). Floors: the final code, rounds
	// 13 and 14 in sample. Sampled floors raised in stop 30: round 15 (a
	// comprehension over a read, followed: ps15_chunk_plan_budget_break),
	// round 16 (a function that only picks a record of constants picks a
	// label: ps16_eval_verdict_stream, called true before, unknown now).
	// Stop 31 (docs/classifier.md "Helpers in other modules, elements
	// read out, pure picks"): round 9 raised (a metrics dict's hard rows
	// through a helper, a run log's skip); round 16's sampled floor raised
	// (a CFL step size picked by a pure function, called true before,
	// unknown now); round 15 lowered with the program found: its
	// saturation ledger's int() kept until after the loop is now followed
	// (false, right) but named logging where the label says a copy to the
	// host — a miss of category, kept. Stop 32 (docs/classifier.md "Dict
	// entries, early returns and search loops"): rounds 12, 15 and 16
	// raised with the program found (a nested dict's entry sizing
	// narrow(); a mode picked and handed on, a depth; a phase's rows
	// narrowing a batch), the patience note and the gap-band counts no
	// longer called true (false, named a copy to the host where the labels
	// say logging).
	{"round13", "ps13_", "values handed to the program's functions and methods", [4][2]float64{{0.500, 0}, {0.625, 0.222}, {0.500, 0}, {0.687, 0.333}}},
	{"round14", "ps14_", "values through the program's small functions", [4][2]float64{{0.500, 0}, {0.500, 0}, {0.500, 0}, {0.687, 0.375}}},
	{"round15", "ps15_", "values unpacked and passed through functions of the file", [4][2]float64{{0.500, 0}, {0.500, 0.125}, {0.500, 0}, {0.562, 0.375}}},
	{"round16", "ps16_", "values classified, formatted or computed with by functions of the file", [4][2]float64{{0.500, 0}, {0.562, 0.125}, {0.500, 0}, {0.687, 0.500}}},
}

// TestLabelledHeldOutSampled scores rounds 8 to 16 (sampledRounds):
//
//	go test -count=1 ./classify/ -run HeldOutSampled -v
func TestLabelledHeldOutSampled(t *testing.T) {
	t.Chdir("..")
	found := Options{FindSources: true}
	for _, r := range sampledRounds {
		t.Run(r.name, func(t *testing.T) {
			t.Logf("held out, %s (%s)", r.name, r.title)
			f := r.floors
			scoreRuns(t, "held out ("+r.name+"), ", labelledPrograms(t, r.prefix), []labelledRun{
				{"lean", "lean", Options{}, f[0][0], f[0][1]},
				{"lean, program found without flags", "lean", found, f[1][0], f[1][1]},
				{"lean + Python sampling, no source", "pysample", Options{}, f[2][0], f[2][1]},
				{"lean + Python sampling, program found without flags", "pysample", found, f[3][0], f[3][1]},
			})
		})
	}
}

// leanRounds are the held-out rounds on the program's classes, each
// written and labelled by a helper who had read neither the classifier nor
// the other rounds, committed before any capture, captured lean, with
// backtraces and with nsys's defaults, and scored at each code state
// (docs/classifier.md, "Held out, rounds 17 to 19" and "Values handed to
// the program's methods (stop 27)", has every mode); their lean exports
// are committed. Floors, lean and lean with the program found: the scores
// at capture, raised where a later rule made a program right.
var leanRounds = []struct {
	name, prefix, title string
	floors              [2][2]float64
}{
	// after the rule that reads an attribute in every file (17d3f3c),
	// committed b37ba18; stop 27 made ps17_average_meter_trend_word right
	// (stop 29 made ps17_budget_statement_every right: a read after the loop)
	{"round17", "ps17_", "values kept in attributes of the program's classes", [2][2]float64{{0.500, 0}, {0.625, 0.250}}},
	// after both attribute rules (17d3f3c, 4db2414), committed 0260566
	// (stop 28 made ps18_drift_guard_assert right)
	{"round18", "ps18_", "values gone on from attributes into others", [2][2]float64{{0.500, 0}, {0.562, 0.125}}},
	// after every attribute rule (a6b678a), committed bc5a1a1; stop 27
	// made ps19_coverage_note_pick right
	{"round19", "ps19_", "values handed out by properties and methods", [2][2]float64{{0.500, 0}, {0.687, 0.375}}}, // raised in stop 31
	// before any rule of stop 27, committed 168c78a
	// (stop 28 made ps20_meter_kw_update_printed right; stop 29 made
	// ps20_best_note_cpu_flag_printed false, as labelled, with the
	// category of a copy, device-to-host-copy, where the label says
	// logging: a category miss where it was unknown; and
	// ps20_monitor_best_branch_prints right, its best read after the loop)
	{"round20", "ps20_", "values handed to methods of the program's classes", [2][2]float64{{0.500, 0}, {0.625, 0.375}}}, // raised in stop 31
	// after the method and best-so-far rules, committed 8a82ab8: two of
	// its false programs were called true until the state rule
	// (pystate.go)
	// (stop 28 made two of its traps and ps21_early_stop_val_gate right,
	// stop 29 ps21_spike_status_skip)
	{"round21", "ps21_", "best-so-far, flags and streaks in the program's classes", [2][2]float64{{0.500, 0}, {0.750, 0.500}}},
	// after every rule of stop 27 but the store by key, committed 872014d
	// (stop 28 made two of its traps and two of its true programs right)
	{"round22", "ps22_", "monitoring and bookkeeping objects of the program's classes", [2][2]float64{{0.500, 0}, {0.750, 0.500}}},
	// after every rule of stop 27 but the last, committed d212859; its
	// trap ps23_best_val_note was called true with the program until stop
	// 28 (dict.update a store, a read into a followed name a cycle)
	{"round23", "ps23_", "metrics records kept and written", [2][2]float64{{0.500, 0}, {0.625, 0.250}}},
	// after stop 28's first rules (math functions, text, numbers in
	// attributes, state that cycles back), committed 8d62c7e
	{"round24", "ps24_", "monitoring objects that classify, count and flag a value", [2][2]float64{{0.500, 0}, {0.687, 0.375}}},
	// after every rule of stop 28, committed 7f4dd4d
	// (stop 29 made ps25_gradnorm_rescale and ps25_spike_skip_update right)
	{"round25", "ps25_", "utilities modules of several classes, one or two used", [2][2]float64{{0.500, 0}, {0.625, 0.250}}},
	// after every rule of stop 28 but the attribute's reads deciding
	// (pydecides.go), the state rule in every method and lists on self in
	// a test's arms, committed 7e1951b: 43.8% lean with the program as
	// first scored (three traps called true), in sample after; stop 29
	// took ps26_watch_diverged_after_loop from true to unknown and made
	// ps26_plateau_apply_lr right
	{"round26", "ps26_", "the value read inside a method of the program's class", [2][2]float64{{0.500, 0}, {0.750, 0.500}}},
}

// TestLabelledHeldOutLean scores rounds 17 to 26 (leanRounds):
//
//	go test -count=1 ./classify/ -run HeldOutLean -v
func TestLabelledHeldOutLean(t *testing.T) {
	t.Chdir("..")
	for _, r := range leanRounds {
		t.Run(r.name, func(t *testing.T) {
			t.Logf("held out, %s (%s)", r.name, r.title)
			f := r.floors
			scoreRuns(t, "held out ("+r.name+"), ", labelledPrograms(t, r.prefix), []labelledRun{
				{"lean", "lean", Options{}, f[0][0], f[0][1]},
				{"lean, program found without flags", "lean", Options{FindSources: true}, f[1][0], f[1][1]},
			})
		})
	}
}
