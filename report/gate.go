package report

import (
	"fmt"
	"strings"

	"github.com/nsyssync/nsyssync/classify"
)

// GateResult is the CI gate's decision on one analysis.
type GateResult struct {
	// ThresholdPct is --fail-on-savings: the largest removable share of
	// the region, in percent, that passes.
	ThresholdPct float64
	// RemovableNs sums, over the false-dependency sites the allow-list
	// does not accept, their estimated savings — or their host-blocked
	// time when the analysis carries no estimates (Basis says which).
	RemovableNs int64
	// RemovablePct is RemovableNs as a percentage of the region.
	RemovablePct float64
	Basis        string
	// Counted are the sites summed; Allowed the false-dependency sites
	// the allow-list kept out.
	Counted, Allowed []string
	Failed           bool
}

// Gate bases.
const (
	GateBasisSavings = "estimated savings"
	GateBasisBlocked = "host-blocked time (no savings estimate)"
)

// Gate decides the CI gate: it fails when the removable (false-dependency)
// savings of the sites not in the allow-list exceed thresholdPct percent of
// the region.
func (a *Analysis) Gate(thresholdPct float64) GateResult {
	g := GateResult{ThresholdPct: thresholdPct, Basis: GateBasisBlocked}
	if a.Estimated() {
		g.Basis = GateBasisSavings
	}
	for _, s := range a.Ordered() {
		if s.Dependency != classify.DepFalse {
			continue
		}
		if _, ok := a.Allowed[s.ID]; ok {
			g.Allowed = append(g.Allowed, s.ID)
			continue
		}
		g.Counted = append(g.Counted, s.ID)
		if a.Estimated() {
			g.RemovableNs += a.SavingsNs(s)
		} else {
			g.RemovableNs += s.BlockedNs
		}
	}
	g.RemovablePct = 100 * fraction(g.RemovableNs, a.Trace.Region.Duration)
	g.Failed = g.RemovablePct > thresholdPct
	return g
}

// String says the decision in one line.
func (g GateResult) String() string {
	verdict := "passed"
	if g.Failed {
		verdict = "FAILED"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "savings gate %s: removable %s %s = %.2f%% of the region (limit %g%%)",
		verdict, g.Basis, Duration(g.RemovableNs), g.RemovablePct, g.ThresholdPct)
	if len(g.Counted) > 0 {
		fmt.Fprintf(&b, "; sites %s", strings.Join(g.Counted, ", "))
	}
	if len(g.Allowed) > 0 {
		fmt.Fprintf(&b, "; allowed %s", strings.Join(g.Allowed, ", "))
	}
	return b.String()
}
