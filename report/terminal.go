package report

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/internal/format"
	"github.com/nsyssync/nsyssync/trace"
)

// TextOptions tune the terminal report.
type TextOptions struct {
	// Top limits the sites listed, and the syncs under LONGEST SYNCS;
	// 0 lists every site and 20 syncs.
	Top int
	// Details is how many of the top sites get their evidence, location
	// and fix spelled out; 0 means 3.
	Details int
	// Color turns on ANSI colour. The command sets it only when stdout is
	// a terminal and NO_COLOR is unset.
	Color bool
	// Width is the terminal's width in cells: long locations are
	// truncated and text wrapped to it. 0: no limit.
	Width int
}

// defaultLongest is how many syncs LONGEST SYNCS lists without --top.
const defaultLongest = 20

// defaultDetails is how many sites get a detail block without --top.
const defaultDetails = 3

// styles are the terminal report's lipgloss styles, bound to one renderer.
type styles struct {
	title, key, header, section, dim, falseDep, trueDep, unknownDep, warn, allowed lipgloss.Style
}

func newStyles(w io.Writer, color bool) *styles {
	r := lipgloss.NewRenderer(w)
	if color {
		r.SetColorProfile(termenv.ANSI256)
		r.SetHasDarkBackground(true)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return &styles{
		title:      r.NewStyle().Bold(true).Foreground(lipgloss.Color("39")),
		key:        r.NewStyle().Foreground(lipgloss.Color("245")),
		header:     r.NewStyle().Bold(true),
		section:    r.NewStyle().Bold(true).Foreground(lipgloss.Color("39")),
		dim:        r.NewStyle().Foreground(lipgloss.Color("245")),
		falseDep:   r.NewStyle().Bold(true).Foreground(lipgloss.Color("208")),
		trueDep:    r.NewStyle().Foreground(lipgloss.Color("34")),
		unknownDep: r.NewStyle().Foreground(lipgloss.Color("245")),
		warn:       r.NewStyle().Foreground(lipgloss.Color("214")),
		allowed:    r.NewStyle().Foreground(lipgloss.Color("34")),
	}
}

func (st *styles) dependency(dep string) lipgloss.Style {
	switch classify.Dependency(strings.TrimPrefix(dep, "likely ")) {
	case classify.DepFalse:
		return st.falseDep
	case classify.DepTrue:
		return st.trueDep
	}
	return st.unknownDep
}

// WriteText prints the terminal report: the summary, the sites (largest
// estimated savings first), the evidence and fix of the top sites, and the
// longest syncs.
func (a *Analysis) WriteText(w io.Writer, opt TextOptions) error {
	st := newStyles(w, opt.Color)
	var b strings.Builder
	a.textSummary(&b, st, opt.Width)
	t := a.Trace
	if len(t.Syncs) == 0 {
		b.WriteString("\nNo host syncs found.\n")
	} else {
		a.textSites(&b, st, opt)
		a.textDetails(&b, st, opt)
		a.textLongest(&b, st, opt)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// headerIndent aligns a header value's continuation lines under it.
const headerIndent = "         "

func (a *Analysis) textSummary(b *strings.Builder, st *styles, width int) {
	t := a.Trace
	kv := func(k, v string) {
		b.WriteString(st.key.Render(fmt.Sprintf("%-9s", k)))
		b.WriteString(v)
		b.WriteByte('\n')
	}
	kv("trace", termText(t.Path))
	kv("export", termText(t.Schema.Version()))
	if g := a.GPUName(); g != "" {
		kv("gpu", termText(g))
	}
	kv("program", strings.TrimPrefix(wrapIndent(termText(a.programText()), width, headerIndent), headerIndent))
	kv("region", termText(a.RegionName())+", "+format.Duration(t.Region.Duration))
	blocked := t.BlockedNs()
	kv("syncs", fmt.Sprintf("%s at %s, host blocked %s (%s of the region)",
		plural(len(t.Syncs), "host sync", "host syncs"), plural(len(a.Sites), "site", "sites"), format.Duration(blocked), format.Percent(blocked, t.Region.Duration)))
	kv("savings", strings.TrimPrefix(wrapIndent(a.totalSavingsText(), width, headerIndent), headerIndent))
	kv("evidence", evidenceSummary(&t.Evidence, len(t.Syncs)))
	for _, warn := range t.Warnings {
		b.WriteString(st.warn.Render(fmt.Sprintf("%-9s", "warning")) + termText(warn) + "\n")
	}
}

// evidenceSummary lists the kinds of evidence the export carries.
func evidenceSummary(e *trace.Evidence, syncs int) string {
	var have []string
	switch {
	case e.PythonFrames:
		have = append(have, "Python backtraces")
	case e.PythonMarks && syncs == 0:
		// Frames are read for syncs only: with none, the payload is unknown.
		have = append(have, "Python backtrace marks")
	case e.PythonMarks:
		have = append(have, "Python backtrace marks without payload")
	}
	if e.PythonSamples {
		have = append(have, fmt.Sprintf("Python periodic samples (the line of %d syncs)", e.PythonSampledSyncs))
	}
	if e.Backtraces {
		have = append(have, "native backtraces")
	}
	if e.AutogradNVTX {
		have = append(have, "autograd NVTX")
	} else if e.NVTX {
		have = append(have, "NVTX")
	}
	if len(have) == 0 {
		return "call pattern only (run 'nsyssync doctor' for how to capture more)"
	}
	return strings.Join(have, ", ")
}

func (a *Analysis) textSites(b *strings.Builder, st *styles, opt TextOptions) {
	b.WriteString("\n" + st.section.Render("SITES") + "\n")
	cols := []column{
		{header: "ID"},
		{header: "DEPENDENCY", style: st.dependency},
		{header: "CATEGORY"},
		{header: "COUNT"},
		{header: "BLOCKED"},
		{header: "MEAN", optional: true},
		{header: "SAVINGS", wrap: true},
		{header: "LOCATION", flex: true, keepTail: true},
	}
	var rows [][]string
	sites := a.Ordered()
	for i, s := range sites {
		if opt.Top > 0 && i >= opt.Top {
			break
		}
		loc := locationCell(s)
		if _, ok := a.Allowed[s.ID]; ok {
			loc = "[allowed] " + strings.ReplaceAll(loc, altSep, altSep+"[allowed] ")
		}
		rows = append(rows, []string{s.ID, dependencyText(s), categoryCell(termText(s.Category)), itoa(len(s.Syncs)),
			format.Duration(s.BlockedNs), format.Duration(meanNs(s)), a.savingsCell(s), loc})
	}
	renderTable(b, st, cols, rows, opt.Width)
	if legend := a.savingsLegend(); legend != "" {
		for _, l := range strings.Split(wrapIndent(legend, opt.Width, ""), "\n") {
			b.WriteString(st.dim.Render(l) + "\n")
		}
	}
	if opt.Top > 0 && len(sites) > opt.Top {
		b.WriteString(st.dim.Render(fmt.Sprintf("… %d more %s (--top 0 lists all)", len(sites)-opt.Top, noun(len(sites)-opt.Top, "site", "sites"))) + "\n")
	}
}

// textDetails spells out the top sites: APIs, location, NVTX path,
// evidence and fix.
func (a *Analysis) textDetails(b *strings.Builder, st *styles, opt TextOptions) {
	n := opt.Details
	if n <= 0 {
		n = defaultDetails
	}
	if opt.Top > 0 {
		n = min(n, opt.Top)
	}
	sites := a.Ordered()
	n = min(n, len(sites))
	if n == 0 {
		return
	}
	b.WriteString("\n" + st.section.Render("TOP SITES") + "\n")
	for _, s := range sites[:n] {
		dep := st.dependency(string(s.Dependency)).Render(dependencyText(s))
		head := fmt.Sprintf("%s ×%d, blocked %s, dependency %s, %s", termText(strings.Join(s.APIs, "+")),
			len(s.Syncs), format.Duration(s.BlockedNs), dep, termText(s.Category))
		if s.Confidence > 0 {
			head += fmt.Sprintf(" (confidence %.2f)", s.Confidence)
		}
		pad := strings.Repeat(" ", 4-min(len(s.ID), 3))
		b.WriteString(st.header.Render(s.ID) + pad + strings.TrimLeft(wrapIndent(head, opt.Width, "    "), " ") + "\n")
		field := func(k, v string) {
			b.WriteString(st.key.Render(fmt.Sprintf("    %-9s", k)))
			b.WriteString(strings.TrimLeft(wrapIndent(v, opt.Width, strings.Repeat(" ", 13)), " "))
			b.WriteByte('\n')
		}
		if s.Location.File != "" || s.Location.Function != "" {
			field("at", termText(Where(s)))
		} else {
			field("calls", termText(s.Reason)+" (no backtrace: grouped by API, stream and NVTX path)")
		}
		if len(s.NVTX) > 0 {
			field("nvtx", termText(nvtxText(s)))
		}
		if e := a.savingsText(s); e != "-" {
			field("savings", e)
		}
		if why := a.SavingsExplanation(s); why != "" {
			field("why", termText(why))
		}
		if rw, ok := a.RewriteAssumed(s); ok {
			field("assumes", termText(rw.Assumes))
		}
		if reason, ok := a.Allowed[s.ID]; ok {
			field("allowed", st.allowed.Render(termText(reason)))
		}
		switch {
		case len(s.Evidence) == 0:
			field("evidence", st.dim.Render("none yet"))
		default:
			for i, e := range s.Evidence {
				k := ""
				if i == 0 {
					k = "evidence"
				}
				field(k, "• "+termText(e))
			}
		}
		if s.Fix != "" {
			field("fix", termText(s.Fix))
		}
	}
}

func (a *Analysis) textLongest(b *strings.Builder, st *styles, opt TextOptions) {
	t := a.Trace
	limit := defaultLongest
	if opt.Top > 0 {
		limit = opt.Top
	}
	b.WriteString("\n" + st.section.Render("LONGEST SYNCS") + "\n")
	cols := []column{{header: "SYNC"}, {header: "SITE"}, {header: "THREAD", optional: true}, {header: "AT", optional: true}, {header: "BLOCKED"},
		{header: "WAITED FOR", wrap: true}, {header: "GPU IDLE AFTER"}, {header: "WHAT", flex: true}}
	site := a.siteIndex()
	var rows [][]string
	for _, i := range longestSyncs(t, limit) {
		s := &t.Syncs[i]
		rows = append(rows, []string{"e" + itoa(i+1), a.siteID(site, i), fmt.Sprintf("%d/%d", s.GlobalTid.Pid(), s.GlobalTid.Tid()),
			format.Duration(s.Start - t.Region.Start), format.Duration(s.Duration()), waited(s), idleAfter(s),
			termText(What(s)) + altSep + termText(whatShortCalls(s)) + keepSep + termText(whatShortRest(s))})
	}
	renderTable(b, st, cols, rows, opt.Width)
	for _, l := range strings.Split(wrapIndent(IdleAfterLegend, opt.Width, ""), "\n") {
		b.WriteString(st.dim.Render(l) + "\n")
	}
	if len(t.Syncs) > limit {
		b.WriteString(st.dim.Render(fmt.Sprintf("… %d more %s (--top N, or --format json for all)", len(t.Syncs)-limit, noun(len(t.Syncs)-limit, "sync", "syncs"))) + "\n")
	}
}

// locationCell is a site's location in the SITES table, with shorter
// alternatives for a narrow terminal (altSep): the directory goes first,
// then the function's parameters, then the outer NVTX ranges, then the
// APIs. The file and line are kept whole (keepSep), at the cost of the
// terminal's width if need be; any other location is cut to the width
// from its end, its head (the innermost NVTX range, the function) shown.
func locationCell(s *classify.Site) string {
	alts := []string{termText(siteLabel(s))}
	switch {
	case s.Location.File != "":
		head := termText(fmt.Sprintf("%s:%d", path.Base(s.Location.File), s.Location.Line))
		fn := termText(s.Location.Function)
		short := shortFunction(fn)
		alts = append(alts, head+" "+fn, head+keepSep+" "+short)
	case s.Location.Function != "":
		alts = append(alts, shortFunction(termText(s.Location.Function)))
	case len(s.NVTX) > 0:
		api := termText(shortAPIs(s.APIs))
		names := nvtxNames(s)
		for i, n := range names {
			names[i] = termText(n)
		}
		others := nvtxOthers(s)
		for k := 1; k < len(names); k++ {
			alts = append(alts, api+" in … > "+strings.Join(names[k:], " > ")+others)
		}
		inner := compactRange(names[len(names)-1])
		if len(names) > 1 {
			alts = append(alts, api+" in … > "+inner+others)
		}
		alts = append(alts, inner+" ("+api+")"+others)
	default:
		alts = append(alts, termText(shortAPIs(s.APIs)))
	}
	return strings.Join(alts, altSep)
}
