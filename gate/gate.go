// Package gate decides what the command line does with an analysis in CI:
// the savings gate (--fail-on-savings, --gate-likely) fails a run when the
// removable share of the region exceeds a limit, and the allow-list
// (.nsyssync.yaml) names the sites that are known and accepted, by
// fingerprint (the current or the legacy one), program line or native
// frame. It reads a *report.Analysis and renders nothing.
package gate

import (
	"fmt"
	"strings"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/internal/format"
	"github.com/nsyssync/nsyssync/report"
)

// Options tune the CI gate.
type Options struct {
	// CountLikely counts the likely-false sites too — false dependencies
	// that only the call pattern suggests (classify.Site.Likely) —
	// (--gate-likely). Without it only what the evidence decides counts.
	CountLikely bool
}

// Result is the CI gate's decision on one analysis.
type Result struct {
	// ThresholdPct is --fail-on-savings: the largest removable share of
	// the region, in percent, that passes.
	ThresholdPct float64
	// RemovableNs sums, over the false-dependency sites counted (decided
	// ones, and likely ones with CountLikely) that the allow-list does not
	// accept, their estimated savings — or their host-blocked time when
	// the analysis carries no estimates (Basis says which).
	RemovableNs int64
	// RemovablePct is RemovableNs as a percentage of the region.
	RemovablePct float64
	Basis        string
	// Counted are the sites summed; Allowed the false-dependency sites
	// the allow-list kept out.
	Counted, Allowed []string
	// Likely are the likely-false sites the allow-list does not accept:
	// counted with CountLikely, else left out. LikelyNs and LikelyPct are
	// what they would add (or added).
	Likely      []string
	LikelyNs    int64
	LikelyPct   float64
	CountLikely bool
	Failed      bool
}

// Gate bases.
const (
	BasisSavings = "estimated savings"
	BasisBlocked = "host-blocked time (no savings estimate)"
)

// Decide decides the CI gate: it fails when the removable
// (false-dependency) savings of the sites not in the allow-list exceed
// thresholdPct percent of the region. Likely-false sites count only with
// opt.CountLikely.
func Decide(a *report.Analysis, thresholdPct float64, opt Options) Result {
	g := Result{ThresholdPct: thresholdPct, Basis: BasisBlocked, CountLikely: opt.CountLikely}
	if a.Estimated() {
		g.Basis = BasisSavings
	}
	for _, s := range a.Ordered() {
		if s.Dependency != classify.DepFalse || !s.Phase.Counted() {
			continue // set-up, tear-down and the profiler's own syncs never count
		}
		if s.NeededCopyBytes > 0 && !a.Estimated() {
			continue // its blocked time is a copy the program needs
		}
		if _, ok := a.Allowed[s.ID]; ok {
			g.Allowed = append(g.Allowed, s.ID)
			continue
		}
		ns := s.BlockedNs
		if a.Estimated() {
			ns = a.SavingsNs(s)
		}
		if s.Likely() {
			g.Likely = append(g.Likely, s.ID)
			g.LikelyNs += ns
			if !opt.CountLikely {
				continue
			}
		}
		g.Counted = append(g.Counted, s.ID)
		g.RemovableNs += ns
	}
	g.RemovablePct = percentOf(g.RemovableNs, a.Trace.Region.Duration)
	g.LikelyPct = percentOf(g.LikelyNs, a.Trace.Region.Duration)
	g.Failed = g.RemovablePct > thresholdPct
	return g
}

// String says the decision in one line.
func (g Result) String() string {
	verdict := "passed"
	if g.Failed {
		verdict = "FAILED"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "savings gate %s: removable %s %s = %.2f%% of the region (limit %g%%)",
		verdict, g.Basis, format.Duration(g.RemovableNs), g.RemovablePct, g.ThresholdPct)
	if len(g.Counted) > 0 {
		fmt.Fprintf(&b, "; sites %s", strings.Join(g.Counted, ", "))
	}
	if len(g.Allowed) > 0 {
		fmt.Fprintf(&b, "; allowed %s", strings.Join(g.Allowed, ", "))
	}
	if n := len(g.Likely); n > 0 {
		sites := "sites"
		if n == 1 {
			sites = "site"
		}
		if g.CountLikely {
			fmt.Fprintf(&b, "; %d likely-false %s counted (--gate-likely)", n, sites)
		} else {
			fmt.Fprintf(&b, "; %d likely-false %s (%s), %.2f%% of the region, not counted: --gate-likely counts them",
				n, sites, strings.Join(g.Likely, ", "), g.LikelyPct)
		}
	}
	return b.String()
}

// percentOf is part as a percentage of whole, 0 when whole is not
// positive.
func percentOf(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}
