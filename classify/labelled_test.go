package classify

import (
	"fmt"
	"strings"
	"testing"
)

// labelledScore is one evidence mode's score on the labelled set.
type labelledScore struct {
	programs                     int     // programs with syncs (top site scored)
	topRight, topUnknown         int     // top sites right, left unknown (worth half)
	syncs, right, unknown, wrong int     // syncs inside "measured"
	falseWhenTrue                int     // syncs called false whose truth is true
	top                          float64 // (topRight + topUnknown/2) / programs
	misses                       []string
	dangerous                    []string
}

// scoreLabelled classifies one fixture and scores it against its truth: the
// top site inside "measured" (most blocked time among the range's syncs)
// and every sync of the range.
func scoreLabelled(t *testing.T, sc *labelledScore, dir, name, mode string, opt Options) {
	t.Helper()
	truth := readLabelledTruth(t, dir, name)
	tr := loadLabelled(t, dir, name)
	type key struct{ pid, corr int64 }
	want := map[key]label{}
	for _, e := range truth.Events {
		want[key{e.Pid, e.CorrelationID}] = label{e.Dependency, e.Category}
	}
	verdicts := opt.Verdicts(tr)
	blocked := map[int]int64{} // sync index -> blocked ns, inside "measured"
	found := 0
	for i := range tr.Syncs {
		s := &tr.Syncs[i]
		if !inMeasured(s) {
			continue
		}
		l, ok := want[key{s.GlobalPid.Pid(), s.Calls()[0].CorrelationID}]
		if !ok {
			t.Errorf("%s: sync e%d (%s, correlation id %d) inside measured is not in the truth file", name, i+1,
				strings.Join(s.APIs(), "+"), s.Calls()[0].CorrelationID)
			continue
		}
		found++
		blocked[i] = s.Duration()
		v := verdicts[i]
		sc.syncs++
		switch {
		case string(v.Dependency) == l.dep && v.Category == l.cat:
			sc.right++
		case v.Dependency == DepUnknown:
			sc.unknown++
		default:
			sc.wrong++
			sc.misses = append(sc.misses, fmt.Sprintf("%s: e%d said %s/%s, truth %s/%s (rule %s)", name, i+1, v.Dependency, v.Category, l.dep, l.cat, v.Rule))
		}
		if v.Dependency == DepFalse && l.dep == "true" {
			sc.falseWhenTrue++
			sc.dangerous = append(sc.dangerous, fmt.Sprintf("%s: e%d (%s) said false/%s, truth true/%s (rule %s)",
				name, i+1, strings.Join(s.APIs(), "+"), v.Category, l.cat, v.Rule))
		}
	}
	if found != len(truth.Events) {
		t.Errorf("%s: the tool finds %d of the truth's %d syncs inside measured", name, found, len(truth.Events))
	}
	if len(truth.Events) == 0 {
		return // a negative control: nothing to rank
	}
	var top *Site
	var topNs int64 = -1
	sites := opt.Sites(tr)
	for i := range sites {
		var ns int64
		for _, j := range sites[i].Syncs {
			ns += blocked[j]
			// A site's verdict may say more than its syncs' (printedSite):
			// it may not call a true dependency false either.
			if _, in := blocked[j]; in && sites[i].Dependency == DepFalse &&
				want[key{tr.Syncs[j].GlobalPid.Pid(), tr.Syncs[j].Calls()[0].CorrelationID}].dep == "true" {
				sc.falseWhenTrue++
				sc.dangerous = append(sc.dangerous, fmt.Sprintf("%s: site %s (e%d) said false/%s, truth true", name, sites[i].ID, j+1, sites[i].Category))
			}
		}
		if ns > topNs && ns > 0 {
			top, topNs = &sites[i], ns
		}
	}
	sc.programs++
	if top == nil {
		sc.misses = append(sc.misses, fmt.Sprintf("%s: no site inside measured", name))
		return
	}
	right, depRight := true, true
	var truths []string
	for _, j := range top.Syncs {
		if _, in := blocked[j]; !in {
			continue
		}
		l := want[key{tr.Syncs[j].GlobalPid.Pid(), tr.Syncs[j].Calls()[0].CorrelationID}]
		truths = appendNew(truths, l.dep+"/"+l.cat)
		right = right && string(top.Dependency) == l.dep && top.Category == l.cat
		depRight = depRight && string(top.Dependency) == l.dep
	}
	// Half a point for a verdict that leaves the question open: the
	// dependency unknown, or the right dependency with the category unknown.
	switch {
	case right:
		sc.topRight++
	case top.Dependency == DepUnknown || (depRight && top.Category == CatUnknown):
		sc.topUnknown++
	}
	if !right {
		sc.misses = append(sc.misses, fmt.Sprintf("%s: top site %s (%d syncs at %s) said %s/%s, truth %s", name, top.ID,
			len(top.Syncs), siteWhere(top), top.Dependency, top.Category, strings.Join(truths, " + ")))
	}
}

// TestLabelledScore scores the classifier on the labelled set of issue 15
// (fixtures/labelled: programs it was not written against), per capture
// mode. The table in docs/classifier.md is its log:
//
//	go test -count=1 ./classify/ -run Labelled -v
//
// The floors are the scores measured when the set was committed, so a
// regression fails; the targets are in the docs.
func TestLabelledScore(t *testing.T) {
	// The programs' files are found as a user running nsyssync from the
	// repository's root would: by the suffix of the recorded path under
	// the current directory (the recorded one is the GPU machine's).
	t.Chdir("..")
	withSource := Options{SourceRoot: "."} // the repository's root
	found := Options{FindSources: true}
	scoreRuns(t, "", labelledPrograms(t, ""), []labelledRun{
		{"lean", "lean", Options{}, 0.824, 0.616},
		{"lean, program found without flags", "lean", found, 0.945, 0.794},
		{"nsys defaults", "default", Options{}, 0.810, 0.616},
		{"nsys defaults, program found without flags", "default", found, 0.932, 0.794},
		{"autograd NVTX", "autograd", Options{}, 0.837, 0.726},
		{"autograd NVTX, program found without flags", "autograd", found, 0.958, 0.904},
		{"backtraces, no source", "backtrace", Options{}, 0.864, 0.821},
		{"backtraces, source found without flags", "backtrace", found, 0.972, 0.986},
		{"backtraces + --source-root", "backtrace", withSource, 0.972, 0.986},
	})
}

// labelledRun is one capture mode scored, with the options of the
// analysis and the floors that fail a regression.
type labelledRun struct {
	evidence, mode  string
	opt             Options
	minTop, minSync float64 // floors: top-site score, share of syncs right
}

// scoreRuns scores the programs in each run's mode, logs the table (the
// rows of docs/classifier.md) and every miss, and fails on a true
// dependency called false or a score under its floor. set prefixes the
// failures ("held out, ").
func scoreRuns(t *testing.T, set string, programs []string, runs []labelledRun) {
	t.Helper()
	scoreRunsIn(t, labelledDir(), set, programs, runs)
}

// scoreRunsIn is scoreRuns on the captures of the set in dir
// (fixturesSet).
func scoreRunsIn(t *testing.T, dir, set string, programs []string, runs []labelledRun) {
	t.Logf("| evidence | programs | top site right | top unknown | top score | syncs | right | unknown | wrong | false where truth is true |")
	t.Logf("|---|---|---|---|---|---|---|---|---|---|")
	var all []string
	for _, run := range runs {
		var sc labelledScore
		for _, p := range programs {
			name := p + "." + run.mode
			if why, skip := notCommitted[name]; skip {
				all = append(all, fmt.Sprintf("(%s) %s: not committed: %s", run.evidence, name, why))
				continue
			}
			before := sc
			scoreLabelled(t, &sc, dir, name, run.mode, run.opt)
			if set != "" {
				all = append(all, fmt.Sprintf("(%s) %s: %d syncs: %d right, %d unknown, %d wrong, %d false where true", run.evidence, p,
					sc.syncs-before.syncs, sc.right-before.right, sc.unknown-before.unknown, sc.wrong-before.wrong,
					sc.falseWhenTrue-before.falseWhenTrue))
			}
		}
		sc.top = (float64(sc.topRight) + float64(sc.topUnknown)/2) / float64(sc.programs)
		t.Logf("| %s | %d | %d | %d | %.1f%% | %d | %d (%s) | %d | %d | %d |", run.evidence, sc.programs, sc.topRight,
			sc.topUnknown, 100*sc.top, sc.syncs, sc.right, pct(sc.right, sc.syncs), sc.unknown, sc.wrong, sc.falseWhenTrue)
		for _, m := range sc.misses {
			all = append(all, fmt.Sprintf("(%s) %s", run.evidence, m))
		}
		if sc.falseWhenTrue > 0 {
			t.Errorf("%s%s: %d syncs called false whose truth is true:\n  %s", set, run.evidence, sc.falseWhenTrue,
				strings.Join(sc.dangerous, "\n  "))
		}
		if sc.top+1e-9 < run.minTop {
			t.Errorf("%s%s: top-site score %.1f%%, floor %.1f%%", set, run.evidence, 100*sc.top, 100*run.minTop)
		}
		if share := float64(sc.right) / float64(sc.syncs); share+1e-9 < run.minSync {
			t.Errorf("%s%s: %.1f%% of syncs right, floor %.1f%%", set, run.evidence, 100*share, 100*run.minSync)
		}
	}
	for _, m := range all {
		t.Logf("  %s", m)
	}
}
