package triage

import (
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nsyssync/nsyssync/internal/format"
	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/internal/words"
)

// SummarySchema names the JSON form of a batch summary.
const SummarySchema = "nsyssync-batch/v1"

// Summary folds a batch's results: totals per trace, failures, and the
// sites across traces.
type Summary struct {
	traces []TraceTotals
	sites  *Snapshot
}

// TraceTotals is one analysed trace in the summary.
type TraceTotals struct {
	Path               string `json:"path"`
	NsysVersion        string `json:"nsys_version"`
	GPU                string `json:"gpu"`
	Region             string `json:"region,omitempty"`
	RegionNs           int64  `json:"region_ns"`
	Syncs              int    `json:"syncs"`
	Sites              int    `json:"sites"`
	BlockedNs          int64  `json:"blocked_ns"`
	EstimatedSavingsNs int64  `json:"estimated_savings_ns"`
}

// Failure is an input that could not be analysed.
type Failure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// NewSummary returns an empty summary.
func NewSummary() *Summary { return &Summary{sites: NewSnapshot("batch")} }

// Add folds one result in.
func (s *Summary) Add(r Result) {
	if r.Err != nil || r.Doc == nil {
		s.sites.AddResult(r)
		return
	}
	d := r.Doc
	s.traces = append(s.traces, TraceTotals{Path: r.Path, NsysVersion: d.Trace.NsysVersion, GPU: d.Trace.GPU, Region: d.Trace.Region.Name,
		RegionNs: d.Trace.Region.DurationNs, Syncs: d.Totals.Syncs, Sites: len(d.Sites), BlockedNs: d.Totals.BlockedNs,
		EstimatedSavingsNs: d.Totals.EstimatedSavingsNs})
	s.sites.AddResult(r)
}

// Failed is the number of inputs that could not be analysed.
func (s *Summary) Failed() int { return len(s.sites.Failures) }

// Analysed is the number of traces analysed.
func (s *Summary) Analysed() int { return len(s.traces) }

// SummaryReport is the JSON form of a summary (--format json).
type SummaryReport struct {
	Schema   string `json:"schema"`
	Inputs   int    `json:"inputs"`
	Analysed int    `json:"analysed"`
	Failed   int    `json:"failed"`
	// Totals over the analysed traces.
	Syncs              int           `json:"syncs"`
	BlockedNs          int64         `json:"blocked_ns"`
	EstimatedSavingsNs int64         `json:"estimated_savings_ns"`
	Traces             []TraceTotals `json:"traces"`
	Failures           []Failure     `json:"failures"`
	// TopSites are the sites that cost most across all traces.
	TopSites []SiteTotal `json:"top_sites"`
	// Widespread are the sites seen in two traces or more, in the most
	// traces first.
	Widespread []SiteTotal `json:"widespread_sites"`
}

// Report returns the summary with at most top sites in each list (0: all).
func (s *Summary) Report(top int) SummaryReport {
	r := SummaryReport{Schema: SummarySchema, Inputs: len(s.traces) + len(s.sites.Failures), Analysed: len(s.traces), Failed: len(s.sites.Failures),
		Syncs: s.sites.Syncs, BlockedNs: s.sites.BlockedNs, EstimatedSavingsNs: s.sites.EstimatedSavingsNs,
		Traces: nonNilSlice(s.traces), Failures: nonNilSlice(s.sites.Failures)}
	r.TopSites = firstN(s.sites.Ordered(), top)
	r.Widespread = firstN(s.sites.Widespread(), top)
	return r
}

func firstN(sites []*SiteTotal, n int) []SiteTotal {
	if n > 0 && len(sites) > n {
		sites = sites[:n]
	}
	out := make([]SiteTotal, len(sites))
	for i, s := range sites {
		out[i] = *s
	}
	return out
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// WriteJSON writes the summary as indented JSON.
func (r SummaryReport) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the batch summary: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing the batch summary: %w", err)
	}
	return nil
}

// WriteText writes the summary for a terminal or a log.
func (r SummaryReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "batch    %s: %d analysed, %d failed\n", words.Count(r.Inputs, "input", "inputs"), r.Analysed, r.Failed)
	fmt.Fprintf(&b, "syncs    %s, host blocked %s\n", words.Count(r.Syncs, "host sync", "host syncs"), format.Duration(r.BlockedNs))
	if r.EstimatedSavingsNs > 0 {
		fmt.Fprintf(&b, "savings  %s estimated\n", format.Duration(r.EstimatedSavingsNs))
	}
	if len(r.Traces) > 0 {
		b.WriteString("\nTRACES\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SYNCS\tSITES\tBLOCKED\tREGION\tSAVINGS\tTRACE")
		for _, t := range r.Traces {
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\n", t.Syncs, t.Sites, format.Duration(t.BlockedNs), format.Duration(t.RegionNs),
				savings(t.EstimatedSavingsNs), term(t.Path))
		}
		tw.Flush()
	}
	writeSites(&b, "TOP SITES (all traces)", r.TopSites)
	writeSites(&b, "SITES IN MANY TRACES", r.Widespread)
	if len(r.Failures) > 0 {
		b.WriteString("\nFAILED\n")
		for _, f := range r.Failures {
			fmt.Fprintf(&b, "%s\n", term(f.Error))
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the batch summary: %w", err)
	}
	return nil
}

func writeSites(b *strings.Builder, title string, sites []SiteTotal) {
	if len(sites) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", title)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FINGERPRINT\tTRACE\tCOUNT\tBLOCKED\tSAVINGS\tDEPENDENCY\tCATEGORY\tAPIS\tWHERE")
	for _, s := range sites {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", term(s.Fingerprint), traceCell(s.TracePaths, s.Traces), s.Count, format.Duration(s.BlockedNs),
			savings(s.EstimatedSavingsNs), term(s.Dependency), term(s.Category), term(strings.Join(s.APIs, "+")), orDash(term(s.Location)))
	}
	tw.Flush()
}

// savings formats an estimated saving: "-" while not estimated, a
// negative one (the rewrite costs more) with a minus sign.
func savings(ns int64) string {
	switch {
	case ns == 0:
		return "-"
	case ns < 0:
		return "−" + format.Duration(-ns)
	}
	return format.Duration(ns)
}

// term is the display form of text from a trace, a results file or the
// findings database in the text tables (textsafe.Display): control
// characters, tabs and line breaks visible, so that no escape sequence
// reaches the terminal and no cell breaks its row, and names shortened.
func term(s string) string { return textsafe.Display(s, textsafe.Terminal) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// traceCell names the traces of a row in a text table: the base name of
// the first, and how many more ("train.sqlite +2 more"); "-" for none.
// traces is the count when the paths are not all known.
func traceCell(paths []string, traces int) string {
	if len(paths) == 0 {
		return "-"
	}
	name := term(path.Base(strings.ReplaceAll(paths[0], `\`, "/")))
	if more := max(traces, len(paths)) - 1; more > 0 {
		name += " +" + strconv.Itoa(more) + " more"
	}
	return name
}
