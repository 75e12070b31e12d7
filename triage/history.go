package triage

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nsyssync/nsyssync/internal/format"
)

// WriteText writes a site's trend, one run a line, with the change from
// the run before.
func (h *SiteHistory) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "site     %s  %s", term(h.Fingerprint), term(strings.Join(h.APIs, "+")))
	if h.Location != "" {
		fmt.Fprintf(&b, " at %s", term(h.Location))
	}
	b.WriteString("\n")
	if last := h.latestPresent(); last != nil {
		fmt.Fprintf(&b, "verdict  dependency %s, %s\n", term(last.Dependency), term(last.Category))
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tLABEL\tSTARTED\tTRACES\tCOUNT\tBLOCKED\tCHANGE\tSAVINGS\tTRACE")
	var prev *HistoryPoint
	for i := range h.Points {
		p := &h.Points[i]
		if p.Traces == 0 {
			fmt.Fprintf(tw, "%d\t%s\t%s\t0/%d\t-\t-\t%s\t-\t-\n", p.Run.ID, term(p.Run.Label), term(p.Run.Started), p.Run.Traces, change(prev, p))
		} else {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d/%d\t%d\t%s\t%s\t%s\t%s\n", p.Run.ID, term(p.Run.Label), term(p.Run.Started), p.Traces, p.Run.Traces, p.Count,
				format.Duration(p.BlockedNs), change(prev, p), savings(p.EstimatedSavingsNs), traceCell(p.TracePaths, p.Traces))
		}
		prev = p
	}
	tw.Flush()
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the history: %w", err)
	}
	return nil
}

func (h *SiteHistory) latestPresent() *HistoryPoint {
	for i := len(h.Points) - 1; i >= 0; i-- {
		if h.Points[i].Traces > 0 {
			return &h.Points[i]
		}
	}
	return nil
}

// change describes the step from one run to the next.
func change(prev, p *HistoryPoint) string {
	switch {
	case prev == nil:
		return ""
	case prev.Traces == 0 && p.Traces == 0:
		return ""
	case prev.Traces == 0:
		return "new"
	case p.Traces == 0:
		return "gone"
	}
	return pctText(percentOf(p.BlockedNs-prev.BlockedNs, prev.BlockedNs))
}

// WriteTopText writes the top sites of the latest run with their trend,
// blocked time per run oldest first.
func WriteTopText(w io.Writer, sites []*SiteHistory) error {
	var b strings.Builder
	if len(sites) == 0 {
		b.WriteString("no sites recorded\n")
	} else {
		runs := sites[0].Points
		fmt.Fprintf(&b, "runs     %d to %d (%s … %s); blocked time per run, oldest first\n\n", runs[0].Run.ID, runs[len(runs)-1].Run.ID,
			term(runs[0].Run.Label), term(runs[len(runs)-1].Run.Label))
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if len(sites) > 0 {
		fmt.Fprintln(tw, "FINGERPRINT\tLATEST\tTREND\tDEPENDENCY\tTRACE\tAPIS\tWHERE")
	}
	for _, h := range sites {
		var trend []string
		for _, p := range h.Points {
			if p.Traces == 0 {
				trend = append(trend, "-")
			} else {
				trend = append(trend, format.Duration(p.BlockedNs))
			}
		}
		latest, dep, traces := "-", "", "-"
		if l := h.Points[len(h.Points)-1]; l.Traces > 0 {
			latest, dep, traces = format.Duration(l.BlockedNs), term(l.Dependency), traceCell(l.TracePaths, l.Traces)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", term(h.Fingerprint), latest, strings.Join(trend, " → "), dep, traces, term(strings.Join(h.APIs, "+")),
			orDash(term(h.Location)))
	}
	tw.Flush()
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the top sites: %w", err)
	}
	return nil
}

// WriteRunsText lists the recorded runs.
func WriteRunsText(w io.Writer, runs []Run) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tLABEL\tSTARTED\tFINISHED\tTRACES\tFAILED\tSYNCS\tBLOCKED\tSHARDS")
	for _, r := range runs {
		fin := r.Finished
		if fin == "" {
			fin = "(unfinished)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.ID, term(r.Label), term(r.Started), term(fin), r.Traces, r.Failed, r.Syncs,
			format.Duration(r.BlockedNs), term(r.Shard))
	}
	tw.Flush()
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the runs: %w", err)
	}
	return nil
}
