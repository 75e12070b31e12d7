package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
)

// nonPyTorchDir holds the non-PyTorch ground truth of issue 16 item 8:
// programs/ (labelled before any capture), NAME.MODE.sqlite.gz and
// NAME.MODE.truth.json (fixtures/nonpytorch/README.md says how they were
// made).
const nonPyTorchDir = "../../fixtures/nonpytorch"

// npTruth is what the scoring reads of a NAME.MODE.truth.json.
type npTruth struct {
	Fixture string `json:"fixture"`
	Label   struct {
		Dependency   string `json:"dependency"`
		Category     string `json:"category"`
		Framework    string `json:"framework"`
		SyncsPerStep int    `json:"syncs_per_step"`
	} `json:"label"`
	Steps      int     `json:"steps_in_measured"`
	Expected   int     `json:"expected_events_in_measured"`
	CountCheck string  `json:"count_check"`
	TraceNote  *string `json:"trace_note"`
	Measured   *struct {
		Written struct {
			Median float64 `json:"median_ms"`
		} `json:"written"`
		Rewritten struct {
			Median float64 `json:"median_ms"`
		} `json:"rewritten"`
		SavingMs       float64    `json:"saving_ms_per_step"`
		SavingFraction float64    `json:"saving_fraction"`
		Interval       [2]float64 `json:"saving_fraction_interval"`
	} `json:"measured"`
	Events []struct {
		Pid        int64  `json:"pid"`
		Tid        int64  `json:"tid"`
		Start      int64  `json:"start"`
		Dependency string `json:"dependency"`
		Category   string `json:"category"`
	} `json:"events"`
}

// npReport is what the scoring reads of the JSON report (the nsyssync/v1
// contract, so that the test scores what users get).
type npReport struct {
	Trace struct {
		Region struct {
			DurationNs int64 `json:"duration_ns"`
		} `json:"region"`
	} `json:"trace"`
	Totals struct {
		Syncs              int     `json:"syncs"`
		EstimatedSavingsNs int64   `json:"estimated_savings_ns"`
		EstimatedFraction  float64 `json:"estimated_savings_fraction"`
		BaselineNs         int64   `json:"estimate_baseline_ns"`
	} `json:"totals"`
	Sites []struct {
		ID                 string  `json:"id"`
		Dependency         string  `json:"dependency"`
		Category           string  `json:"category"`
		EstimatedSavingsNs int64   `json:"estimated_savings_ns"`
		EstimatedFraction  float64 `json:"estimated_savings_fraction"`
	} `json:"sites"`
	Syncs []struct {
		Site    string `json:"site"`
		Pid     int64  `json:"pid"`
		Tid     int64  `json:"tid"`
		StartNs int64  `json:"start_ns"`
	} `json:"syncs"`
}

// npScore is the score over all fixtures.
type npScore struct {
	fixtures, scored        int // fixtures; those whose waits the trace shows
	depRight, bothRight     int // dependency right; dependency and category right
	unknown, falseWhenTrue  int
	estimated, estimateHits int // fixtures with a measured saving; estimate within target
	rows, misses, dangerous []string
}

// The floors are the score when the set was committed: a regression under
// them fails. The misses stay in docs/groundtruth-nonpytorch.md. The
// estimate floor fell from 14 to 12 when needed result copies got the
// copy-overlap bound instead of the deleted copy (issue 16): the CuPy
// double-buffered rewrite saves 58% of a step where the bound allows 27–30%
// (the docs say why; issue 17 models the rewrite). It rose to 14 when the
// C++ and CuPy programs were re-captured one at a time (2026-11-28): two
// C++ captures made side by side with others had recorded the other
// capture's kernels as a millisecond of launch delay per step. Scored
// since by issue 17's rule (2 points or 20%, was 3 or 30%: 12 of 20) and
// with the double-buffer bound of needed copies in a loop: 15; with two
// held-out needed-copy programs (four exports, three within): 18 of 24;
// with eight held-out CuPy programs (16 exports, 12 within; one more
// dependency right): 30 of 40; with three held-out memory-management
// programs (captured on an H200, 2026-11-28: six exports, every verdict
// right, four estimates within, the host-bound cun_small_alloc under by
// half): 34 of 46.
const (
	npFloorDepRight     = 12 // fixtures whose dependency is right
	npFloorBothRight    = 10 // fixtures whose dependency and category are right
	npFloorEstimateHits = 34 // estimates within target of the measured saving
	// npFloorEstimateHitsLaunches: with --overhead-from-launches, 36 of 46
	// when measured (stop 25: two CuPy lean captures come within).
	npFloorEstimateHitsLaunches = 36
)

// TestGroundTruthNonPyTorch analyses every fixture of fixtures/nonpytorch
// with the CLI (`analyze --nvtx measured --format json`) and scores the
// verdict of each labelled wait and the estimated saving against the
// saving measured without the profiler. The table in
// docs/groundtruth-nonpytorch.md is its log:
//
//	go test -count=1 ./cmd/nsyssync/ -run GroundTruthNonPyTorch -v
//
// It fails when a true dependency is called false, when the tool and the
// truth file disagree on which syncs lie inside "measured", or when the
// score falls under its floor.
func TestGroundTruthNonPyTorch(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(nonPyTorchDir, "*.truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 16 {
		t.Fatalf("%d truth files in %s, want at least 16", len(paths), nonPyTorchDir)
	}
	sort.Strings(paths)
	var sc, launches npScore
	for _, p := range paths {
		scoreNonPyTorch(t, &sc, p)
		scoreNonPyTorch(t, &launches, p, "--overhead-from-launches")
	}
	t.Logf("| fixture | framework | label | nsyssync says | estimated saving | measured saving (rewritten) | verdict | estimate |")
	t.Logf("|---|---|---|---|---|---|---|---|")
	for _, r := range sc.rows {
		t.Logf("%s", r)
	}
	t.Logf("fixtures %d (waits visible in %d): dependency right %d, dependency and category right %d, unknown %d, "+
		"false where true %d; estimates within target %d of %d", sc.fixtures, sc.scored, sc.depRight, sc.bothRight,
		sc.unknown, sc.falseWhenTrue, sc.estimateHits, sc.estimated)
	for _, m := range sc.misses {
		t.Logf("  miss: %s", m)
	}
	if sc.falseWhenTrue > 0 {
		t.Errorf("%d fixtures whose needed wait is called false:\n  %s", sc.falseWhenTrue, strings.Join(sc.dangerous, "\n  "))
	}
	t.Logf("with --overhead-from-launches: estimates within target %d of %d", launches.estimateHits, launches.estimated)
	if launches.estimateHits < npFloorEstimateHitsLaunches {
		t.Errorf("with --overhead-from-launches: %d estimates within target, floor %d", launches.estimateHits, npFloorEstimateHitsLaunches)
	}
	if sc.depRight < npFloorDepRight || sc.bothRight < npFloorBothRight || sc.estimateHits < npFloorEstimateHits {
		t.Errorf("score under its floor: dependency right %d (floor %d), both right %d (floor %d), estimates %d (floor %d)",
			sc.depRight, npFloorDepRight, sc.bothRight, npFloorBothRight, sc.estimateHits, npFloorEstimateHits)
	}
}

// scoreNonPyTorch analyses one fixture and adds its row and score.
func scoreNonPyTorch(t *testing.T, sc *npScore, truthPath string, flags ...string) {
	t.Helper()
	var tr npTruth
	b, err := os.ReadFile(truthPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("%s: %v", truthPath, err)
	}
	name := strings.TrimSuffix(tr.Fixture, ".sqlite.gz")
	if len(tr.Events) != tr.Expected && tr.TraceNote == nil {
		t.Fatalf("%s: %d events, %d expected, and no trace note saying why", truthPath, len(tr.Events), tr.Expected)
	}
	db := fixturegz.Gunzip(t, filepath.Join(nonPyTorchDir, tr.Fixture), t.TempDir())
	rep := analyzeMeasured(t, db, flags...)
	sc.fixtures++
	verdict, hit := npVerdict(t, sc, name, &tr, &rep)
	est, estHit := npEstimate(sc, name, &tr, &rep)
	label := tr.Label.Dependency + "/" + tr.Label.Category
	measured := "not measured"
	if m := tr.Measured; m != nil {
		measured = fmt.Sprintf("%.3f ms/step (%.1f%%, passes %.1f–%.1f%%)", m.SavingMs, 100*m.SavingFraction,
			100*m.Interval[0], 100*m.Interval[1])
	}
	sc.rows = append(sc.rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s |", name, tr.Label.Framework, label,
		verdict, est, measured, hit, estHit))
}

// analyzeMeasured runs `analyze --nvtx measured --format json` (and any
// further flags) on an export and reads the report, as users get it.
func analyzeMeasured(t *testing.T, path string, flags ...string) npReport {
	t.Helper()
	code, out, stderr := runCLI(t, append([]string{"analyze", "--nvtx", "measured", "--format", "json", path}, flags...)...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", path, code, stderr)
	}
	var rep npReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rep
}

// npVerdict matches the truth's events with the report's syncs and scores
// the verdict of the sites that hold them.
func npVerdict(t *testing.T, sc *npScore, name string, tr *npTruth, rep *npReport) (verdict, hit string) {
	t.Helper()
	type key struct{ pid, tid, start int64 }
	site := map[key]string{}
	for _, s := range rep.Syncs {
		site[key{s.Pid, s.Tid, s.StartNs}] = s.Site
	}
	if len(rep.Syncs) != len(tr.Events) {
		t.Errorf("%s: the tool finds %d syncs inside measured, the truth file %d", name, len(rep.Syncs), len(tr.Events))
	}
	if len(tr.Events) == 0 {
		sc.misses = append(sc.misses, fmt.Sprintf("%s: the label's %d waits are not in the CUDA trace; nothing to classify",
			name, tr.Expected))
		return "no sync in the trace", "miss (invisible)"
	}
	sc.scored++
	var says []string
	dep, both, unknown, dangerous := true, true, false, false
	for _, e := range tr.Events {
		id, ok := site[key{e.Pid, e.Tid, e.Start}]
		if !ok {
			t.Errorf("%s: the truth's event at %d (tid %d) is not among the tool's syncs", name, e.Start, e.Tid)
			dep, both = false, false
			continue
		}
		for _, s := range rep.Sites {
			if s.ID != id {
				continue
			}
			v := s.Dependency + "/" + s.Category
			if !slices.Contains(says, v) {
				says = append(says, v)
			}
			dep = dep && s.Dependency == e.Dependency
			both = both && s.Dependency == e.Dependency && s.Category == e.Category
			unknown = unknown || s.Dependency == "unknown"
			if s.Dependency == "false" && e.Dependency == "true" && !dangerous {
				dangerous = true
				sc.dangerous = append(sc.dangerous, fmt.Sprintf("%s: site %s said %s, truth %s/%s", name, s.ID, v, e.Dependency, e.Category))
			}
		}
	}
	if dangerous {
		sc.falseWhenTrue++
	}
	verdict = strings.Join(says, " + ")
	switch {
	case both:
		sc.depRight++
		sc.bothRight++
		return verdict, "hit"
	case dep:
		sc.depRight++
		sc.misses = append(sc.misses, fmt.Sprintf("%s: dependency right, category %s, truth %s", name, verdict, tr.Label.Category))
		return verdict, "dependency only"
	case unknown:
		sc.unknown++
		sc.misses = append(sc.misses, fmt.Sprintf("%s: said %s, truth %s/%s", name, verdict, tr.Label.Dependency, tr.Label.Category))
		return verdict, "miss (unknown)"
	}
	sc.misses = append(sc.misses, fmt.Sprintf("%s: said %s, truth %s/%s", name, verdict, tr.Label.Dependency, tr.Label.Category))
	return verdict, "miss (wrong)"
}

// npEstimate compares the estimated saving (a fraction of the region) with
// the measured one (a fraction of a step as written) by issue 17's rule,
// the replay's (cuda's withinTarget): within 2 points or 20% of the
// measured saving, whichever is larger, of the interval the timing passes
// span. (Until 2026-11-28 this test used the looser 3 points or 30%.)
func npEstimate(sc *npScore, name string, tr *npTruth, rep *npReport) (est, hit string) {
	perStep := float64(rep.Totals.EstimatedSavingsNs) / 1e6 / float64(max(tr.Steps, 1))
	est = fmt.Sprintf("%.3f ms/step (%.1f%%)", perStep, 100*rep.Totals.EstimatedFraction)
	m := tr.Measured
	if m == nil {
		return est, "-"
	}
	sc.estimated++
	f := rep.Totals.EstimatedFraction
	hit = scoreSaving(f, m.SavingFraction, m.Interval)
	if hit == "within" {
		sc.estimateHits++
		return est, hit
	}
	sc.misses = append(sc.misses, fmt.Sprintf("%s: estimated %.1f%% of the region, measured %.1f%% of a step", name,
		100*f, 100*m.SavingFraction))
	return est, hit
}

// scoreSaving scores an estimated saving f (a fraction) by issue 17's rule
// against a measured saving and the interval its timing passes span:
// "within", "miss (over)" or "miss (under)".
func scoreSaving(f, measured float64, interval [2]float64) string {
	lo, hi := min(interval[0], measured), max(interval[1], measured)
	dist := math.Max(0, math.Max(lo-f, f-hi))
	switch {
	case dist <= math.Max(0.02, 0.2*math.Abs(measured)):
		return "within"
	case f > hi:
		return "miss (over)"
	}
	return "miss (under)"
}
