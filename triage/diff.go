package triage

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/nsyssync/nsyssync/internal/format"
	"github.com/nsyssync/nsyssync/internal/words"
)

// DiffSchema names the JSON form of a diff.
const DiffSchema = "nsyssync-diff/v1"

// Status says how a site changed between two snapshots.
type Status string

// Statuses, in report order.
const (
	StatusNew    Status = "new"
	StatusGrown  Status = "grown"
	StatusShrunk Status = "shrunk"
	StatusGone   Status = "gone"
	StatusSame   Status = "same"
)

var statusOrder = []Status{StatusNew, StatusGrown, StatusShrunk, StatusGone, StatusSame}

// Change is one site's change in host-blocked time.
type Change struct {
	Fingerprint  string   `json:"fingerprint"`
	Status       Status   `json:"status"`
	APIs         []string `json:"apis"`
	Location     string   `json:"location"`
	Dependency   string   `json:"dependency"`
	Category     string   `json:"category"`
	OldCount     int      `json:"old_count"`
	NewCount     int      `json:"new_count"`
	OldBlockedNs int64    `json:"old_blocked_ns"`
	NewBlockedNs int64    `json:"new_blocked_ns"`
	DeltaNs      int64    `json:"delta_ns"`
	// ChangePct is the change relative to the site's own old blocked
	// time; 0 for new and gone sites.
	ChangePct float64 `json:"change_pct"`
	// ShareOfOldPct is the change as a percent of the old snapshot's total
	// blocked time: what the regression gate weighs.
	ShareOfOldPct      float64 `json:"share_of_old_pct"`
	OldEstimatedSaving int64   `json:"old_estimated_savings_ns"`
	NewEstimatedSaving int64   `json:"new_estimated_savings_ns"`
	// Traces and TracePaths are the traces the site was found in (as
	// SiteTotal has them): the new side's, or the old side's for a site
	// that is gone.
	Traces     int      `json:"traces"`
	TracePaths []string `json:"trace_paths"`
}

// Side describes one snapshot of a diff.
type Side struct {
	Label              string `json:"label"`
	Traces             int    `json:"traces"`
	Failed             int    `json:"failed"`
	Syncs              int    `json:"syncs"`
	BlockedNs          int64  `json:"blocked_ns"`
	EstimatedSavingsNs int64  `json:"estimated_savings_ns"`
}

// Diff compares two snapshots site by site.
type Diff struct {
	Schema string `json:"schema"`
	Old    Side   `json:"old"`
	New    Side   `json:"new"`
	// TotalChangePct is the change of the total blocked time, in percent
	// of the old total.
	TotalChangePct float64 `json:"total_change_pct"`
	// MinChangePct: a site whose blocked time moved less than this, in
	// percent of its own old time, is "same".
	MinChangePct float64  `json:"min_change_pct"`
	Changes      []Change `json:"changes"`
}

func sideOf(s *Snapshot) Side {
	return Side{Label: s.Label, Traces: s.Traces, Failed: s.Failed, Syncs: s.Syncs, BlockedNs: s.BlockedNs, EstimatedSavingsNs: s.EstimatedSavingsNs}
}

// Compare diffs two snapshots. Sites are matched by fingerprint; a site is
// grown or shrunk when its blocked time moved by at least minChangePct
// percent of its old time.
func Compare(old, cur *Snapshot, minChangePct float64) Diff {
	d := Diff{Schema: DiffSchema, Old: sideOf(old), New: sideOf(cur), MinChangePct: minChangePct,
		TotalChangePct: percentOf(cur.BlockedNs-old.BlockedNs, old.BlockedNs)}
	fps := map[string]bool{}
	for fp := range old.Sites {
		fps[fp] = true
	}
	for fp := range cur.Sites {
		fps[fp] = true
	}
	for fp := range fps {
		o, n := old.Sites[fp], cur.Sites[fp]
		c := Change{Fingerprint: fp}
		ref := n
		if ref == nil {
			ref = o
		}
		c.APIs, c.Location, c.Dependency, c.Category = ref.APIs, ref.Location, ref.Dependency, ref.Category
		c.Traces, c.TracePaths = ref.Traces, ref.TracePaths
		if c.TracePaths == nil {
			c.TracePaths = []string{}
		}
		if o != nil {
			c.OldCount, c.OldBlockedNs, c.OldEstimatedSaving = o.Count, o.BlockedNs, o.EstimatedSavingsNs
		}
		if n != nil {
			c.NewCount, c.NewBlockedNs, c.NewEstimatedSaving = n.Count, n.BlockedNs, n.EstimatedSavingsNs
		}
		c.DeltaNs = c.NewBlockedNs - c.OldBlockedNs
		c.ShareOfOldPct = percentOf(c.DeltaNs, old.BlockedNs)
		switch {
		case o == nil:
			c.Status = StatusNew
		case n == nil:
			c.Status = StatusGone
		default:
			c.ChangePct = percentOf(c.DeltaNs, c.OldBlockedNs)
			switch {
			case c.DeltaNs > 0 && c.ChangePct >= minChangePct:
				c.Status = StatusGrown
			case c.DeltaNs < 0 && -c.ChangePct >= minChangePct:
				c.Status = StatusShrunk
			default:
				c.Status = StatusSame
			}
		}
		d.Changes = append(d.Changes, c)
	}
	slices.SortFunc(d.Changes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(slices.Index(statusOrder, a.Status), slices.Index(statusOrder, b.Status)),
			cmp.Compare(abs(b.DeltaNs), abs(a.DeltaNs)), cmp.Compare(b.NewBlockedNs, a.NewBlockedNs),
			strings.Compare(a.Fingerprint, b.Fingerprint))
	})
	if d.Changes == nil {
		d.Changes = []Change{}
	}
	return d
}

// percentOf is 100·part/whole; ±Inf when whole is 0 and part is not (JSON
// cannot hold it, so it is capped at ±1e9).
func percentOf(part, whole int64) float64 {
	switch {
	case part == 0:
		return 0
	case whole == 0:
		return math.Copysign(1e9, float64(part))
	}
	return 100 * float64(part) / float64(whole)
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// Count returns how many sites have the status.
func (d Diff) Count(s Status) int {
	n := 0
	for _, c := range d.Changes {
		if c.Status == s {
			n++
		}
	}
	return n
}

// Regressions applies the CI gate: the new snapshot regressed when its
// total blocked time grew by more than pct percent of the old total, or
// when one site, new or grown, added more than pct percent of the old
// total. Weighing every change against the old total keeps the jitter of
// small sites from failing a build. It returns one line per reason; none
// when the gate passes.
func (d Diff) Regressions(pct float64) []string {
	var out []string
	if d.TotalChangePct > pct {
		out = append(out, fmt.Sprintf("total host-blocked time grew %s (%s → %s), more than %g%%",
			pctText(d.TotalChangePct), format.Duration(d.Old.BlockedNs), format.Duration(d.New.BlockedNs), pct))
	}
	for _, c := range d.Changes {
		if (c.Status == StatusNew || c.Status == StatusGrown) && c.ShareOfOldPct > pct {
			out = append(out, fmt.Sprintf("site %s (%s) %s by %s, %s of the old total, more than %g%%",
				term(c.Fingerprint), term(describeChange(c)), c.Status, format.Duration(c.DeltaNs), pctText(c.ShareOfOldPct), pct))
		}
	}
	return out
}

func describeChange(c Change) string {
	what := strings.Join(c.APIs, "+")
	if c.Location != "" {
		what += " at " + c.Location
	}
	return what
}

func pctText(p float64) string {
	if math.Abs(p) >= 1e9 {
		if p > 0 {
			return "from nothing"
		}
		return "to nothing"
	}
	return fmt.Sprintf("%+.1f%%", p)
}

// WriteJSON writes the diff as indented JSON.
func (d Diff) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the diff: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing the diff: %w", err)
	}
	return nil
}

// WriteText writes the diff for people; unchanged sites are counted, not
// listed, unless all is set.
func (d Diff) WriteText(w io.Writer, all bool) error {
	var b strings.Builder
	side := func(name string, s Side) {
		fmt.Fprintf(&b, "%s  %s: %s", name, term(s.Label), words.Count(s.Traces, "trace", "traces"))
		if s.Failed > 0 {
			fmt.Fprintf(&b, " (%d failed)", s.Failed)
		}
		fmt.Fprintf(&b, ", %s, host blocked %s\n", words.Count(s.Syncs, "sync", "syncs"), format.Duration(s.BlockedNs))
	}
	side("old  ", d.Old)
	side("new  ", d.New)
	fmt.Fprintf(&b, "total  %s\n", pctText(d.TotalChangePct))
	fmt.Fprintf(&b, "sites  %d new, %d grown, %d shrunk, %d gone, %d within ±%g%%\n",
		d.Count(StatusNew), d.Count(StatusGrown), d.Count(StatusShrunk), d.Count(StatusGone), d.Count(StatusSame), d.MinChangePct)
	if d.Old.Traces != d.New.Traces {
		fmt.Fprintf(&b, "note   the sides hold different numbers of traces (%d, %d): totals are not like for like\n", d.Old.Traces, d.New.Traces)
	}
	listed := 0
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, c := range d.Changes {
		if c.Status == StatusSame && !all {
			continue
		}
		if listed == 0 {
			b.WriteString("\n")
			fmt.Fprintln(tw, "STATUS\tFINGERPRINT\tOLD\tNEW\tCHANGE\tCOUNT\tTRACE\tAPIS\tWHERE")
		}
		listed++
		change := signedDuration(c.DeltaNs)
		if c.Status == StatusGrown || c.Status == StatusShrunk {
			change += fmt.Sprintf(" (%+.0f%%)", c.ChangePct)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d→%d\t%s\t%s\t%s\n", c.Status, term(c.Fingerprint), blockedOrDash(c.OldBlockedNs, c.Status == StatusNew),
			blockedOrDash(c.NewBlockedNs, c.Status == StatusGone), change, c.OldCount, c.NewCount, traceCell(c.TracePaths, c.Traces),
			term(strings.Join(c.APIs, "+")), orDash(term(c.Location)))
	}
	tw.Flush()
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the diff: %w", err)
	}
	return nil
}

func signedDuration(ns int64) string {
	if ns < 0 {
		return "-" + format.Duration(-ns)
	}
	return "+" + format.Duration(ns)
}

func blockedOrDash(ns int64, absent bool) string {
	if absent {
		return "-"
	}
	return format.Duration(ns)
}
