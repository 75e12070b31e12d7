package gate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/report"
)

// falseSites returns the false-dependency sites of an analysis, with the
// classifier's verdicts; a test that needs one skips cleanly when the
// classifier gives none.
func falseSites(a *report.Analysis) []*classify.Site {
	var out []*classify.Site
	for _, s := range a.Ordered() {
		if s.Dependency == classify.DepFalse {
			out = append(out, s)
		}
	}
	return out
}

// TestGateBlockedBasis: without estimates, the gate sums the host-blocked
// time of the false-dependency sites, and the allow-list takes sites out.
func TestGateBlockedBasis(t *testing.T) {
	a := load(t, "syncs_backtrace.sqlite.gz", "measured").analysis
	// Make the verdicts of the test explicit (real syncs, chosen verdicts),
	// so that it does not depend on the classifier's rules.
	for i := range a.Sites {
		a.Sites[i].Dependency = classify.DepTrue
	}
	logLoss := &a.Sites[siteWith(t, a, "log_loss")]
	free := &a.Sites[siteWith(t, a, "free_memory")]
	logLoss.Dependency, free.Dependency = classify.DepFalse, classify.DepFalse
	removable := logLoss.BlockedNs + free.BlockedNs
	pct := 100 * float64(removable) / float64(a.Trace.Region.Duration)

	g := Decide(a, pct-0.01, Options{})
	if !g.Failed || g.RemovableNs != removable || g.Basis != BasisBlocked || len(g.Counted) != 2 {
		t.Errorf("just under the removable share: %+v, want failed on %d ns of 2 sites", g, removable)
	}
	if g := Decide(a, pct+0.01, Options{}); g.Failed {
		t.Errorf("just over the removable share: failed: %s", g)
	}
	if !strings.Contains(g.String(), "FAILED") || !strings.Contains(g.String(), logLoss.ID) {
		t.Errorf("gate line %q names neither the verdict nor the sites", g.String())
	}

	a.Allowed = (&AllowList{Entries: []AllowEntry{{Python: "syncs.py:60", Reason: "empty_cache on purpose"}}}).Match(a)
	g = Decide(a, pct-0.01, Options{})
	if g.RemovableNs != logLoss.BlockedNs || len(g.Allowed) != 1 || g.Allowed[0] != free.ID {
		t.Errorf("with free_memory allowed: %+v", g)
	}
	a.Allowed[logLoss.ID] = "logged on purpose"
	if g := Decide(a, 0, Options{}); g.Failed || g.RemovableNs != 0 {
		t.Errorf("every false site allowed, yet %s", g)
	}
}

// TestGateSavingsBasis: with estimates, the gate sums the estimated
// savings of the false-dependency sites instead (here the lean trace's
// likely-false sites, counted with CountLikely).
func TestGateSavingsBasis(t *testing.T) {
	a := load(t, "syncs_lean.sqlite.gz", "measured").analysis
	fs := falseSites(a)
	if len(fs) == 0 {
		t.Skip("the classifier marks no site of syncs_lean false")
	}
	a.Estimates = &report.Estimates{Sites: map[string]report.SiteEstimate{}}
	var want int64
	for i, s := range a.Sites {
		// Savings of a tenth of the blocked time plus the index: distinct
		// per site, so that a wrong site in the sum shows.
		e := s.BlockedNs/10 + int64(i)
		a.Estimates.Sites[s.ID] = report.SiteEstimate{SavingsNs: e}
		if s.Dependency == classify.DepFalse {
			want += e
		}
	}
	g := Decide(a, 0, Options{CountLikely: true})
	if g.Basis != BasisSavings || g.RemovableNs != want || len(g.Counted) != len(fs) {
		t.Errorf("gate %+v, want %d ns over %d sites", g, want, len(fs))
	}
	if g.Failed != (want > 0) {
		t.Errorf("failed = %v with %d ns removable at 0%%", g.Failed, want)
	}
}

// TestGateLikely: on the real fixtures, the gate counts the false sites
// the evidence decides (backtraces) and leaves out those only the call
// pattern suggests (lean traces) — saying so, with their share — unless
// CountLikely (--gate-likely) counts them.
func TestGateLikely(t *testing.T) {
	for _, tc := range []struct {
		fixture     string
		countLikely bool
		wantCounted string // which false sites are summed: "decided", "all"
		wantNote    string // in the gate's line; "" none of the two notes
	}{
		{"syncs_lean.sqlite.gz", false, "decided", "not counted: --gate-likely counts them"},
		{"syncs_lean.sqlite.gz", true, "all", "likely-false sites counted (--gate-likely)"},
		{"multiproc_lean.sqlite.gz", false, "decided", "not counted: --gate-likely counts them"},
		{"syncs_backtrace.sqlite.gz", false, "decided", ""},
		{"syncs_backtrace.sqlite.gz", true, "all", ""},
	} {
		t.Run(fmt.Sprintf("%s/likely=%v", tc.fixture, tc.countLikely), func(t *testing.T) {
			a := load(t, tc.fixture, "").analysis
			var decided, likely []string
			var decidedNs, likelyNs int64
			for _, s := range falseSites(a) {
				if s.Likely() {
					likely, likelyNs = append(likely, s.ID), likelyNs+s.BlockedNs
				} else {
					decided, decidedNs = append(decided, s.ID), decidedNs+s.BlockedNs
				}
			}
			if strings.HasPrefix(tc.fixture, "syncs_lean") && (len(likely) == 0 || len(decided) != 0) {
				t.Fatalf("lean trace: %d likely and %d decided false sites, want only likely ones", len(likely), len(decided))
			}
			if strings.Contains(tc.fixture, "backtrace") && (len(likely) != 0 || len(decided) == 0) {
				t.Fatalf("backtrace trace: %d likely and %d decided false sites, want only decided ones", len(likely), len(decided))
			}
			g := Decide(a, 0, Options{CountLikely: tc.countLikely})
			wantNs, wantSites := decidedNs, len(decided)
			if tc.wantCounted == "all" {
				wantNs, wantSites = decidedNs+likelyNs, len(decided)+len(likely)
			}
			if g.RemovableNs != wantNs || len(g.Counted) != wantSites || len(g.Likely) != len(likely) || g.LikelyNs != likelyNs {
				t.Errorf("gate %+v, want %d ns over %d sites, %d likely (%d ns)", g, wantNs, wantSites, len(likely), likelyNs)
			}
			if g.Failed != (wantNs > 0) {
				t.Errorf("failed = %v with %d ns removable at 0%%", g.Failed, wantNs)
			}
			line := g.String()
			if tc.wantNote != "" && !strings.Contains(line, tc.wantNote) {
				t.Errorf("gate line %q lacks %q", line, tc.wantNote)
			}
			if tc.wantNote == "" && strings.Contains(line, "likely") {
				t.Errorf("gate line %q speaks of likely sites where there are none", line)
			}
			if !tc.countLikely && len(likely) > 0 && !strings.Contains(line, fmt.Sprintf("%d likely-false site", len(likely))) {
				t.Errorf("gate line %q does not count the %d likely sites left out", line, len(likely))
			}
		})
	}
}
