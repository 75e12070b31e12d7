package report

import (
	"context"
	_ "embed"
	"fmt"
	"github.com/nsyssync/nsyssync/internal/format"
	"html/template"
	"io"
	"strings"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/internal/words"
	"github.com/nsyssync/nsyssync/trace"
)

//go:embed templates/report.html.tmpl
var htmlTemplateText string

// htmlTemplate escapes everything it is given: html/template knows the
// context (text, attribute, SVG) of each value.
var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"plus":  func(a, b int) int { return a + b },
	"minus": func(a, b int) int { return a - b },
	"count": words.Count,
}).Parse(htmlTemplateText))

// HTMLOptions tune the HTML report.
type HTMLOptions struct {
	// Top limits the sites of the table; 0 lists all.
	Top int
	// Details is how many top sites get a section with a timeline
	// picture; 0 means 5.
	Details int
	// Timelines reads the windows the pictures show (the open
	// *trace.Export); nil: no pictures.
	Timelines TimelineReader
	// GateLine, when set, adds the CI gate's decision (gate.Result's
	// line) to the summary.
	GateLine string
}

const defaultHTMLDetails = 5

type htmlPage struct {
	Title     string
	Summary   [][2]string
	Warnings  []string
	Sites     []htmlSiteRow
	MoreSites int
	// IdleLegend says what "GPU idle after" holds, busy and end included;
	// SavingsLegend what a saving's interval is ("" without one).
	IdleLegend, SavingsLegend string
	Details                   []htmlDetail
	NoSyncs                   bool
}

type htmlSiteRow struct {
	// Dependency names the CSS class (dep-false); DependencyText is shown
	// ("likely false" when only the call pattern suggests it).
	ID, Dependency, DependencyText, Category, Blocked, Mean, Savings, Location, Allowed string
	Count                                                                               int
}

type htmlDetail struct {
	Row            htmlSiteRow
	APIs           string
	Fingerprint    string
	Confidence     string
	NVTX           string
	Evidence       [][]span
	Fix            []span
	Rewrite        string // the rewrite the saving assumes
	PythonFrames   []string
	NativeFrames   []string
	SyncID         string
	SyncWhat       string
	Timeline       *svgTimeline
	TimelineNote   string
	Simulated      *svgTimeline
	SimulatedNote  string
	WaitedFor      string
	GPUIdleAfter   string
	RepresentsNote string
}

// WriteHTML writes one self-contained HTML page (inline CSS and SVG, no
// script, nothing fetched): the summary, the sites table, and for each top
// site its evidence, fix and a timeline picture of a representative sync.
func (a *Analysis) WriteHTML(ctx context.Context, w io.Writer, opt HTMLOptions) error {
	page, err := a.htmlPage(ctx, opt)
	if err != nil {
		return err
	}
	var b strings.Builder
	if err := htmlTemplate.Execute(&b, page); err != nil {
		return fmt.Errorf("rendering the HTML report: %w", err)
	}
	return writeString(w, b.String())
}

func (a *Analysis) htmlPage(ctx context.Context, opt HTMLOptions) (*htmlPage, error) {
	t := a.Trace
	p := &htmlPage{Title: "nsyssync: " + htmlText(t.Path), Warnings: htmlTexts(t.Warnings), NoSyncs: len(t.Syncs) == 0,
		IdleLegend: idleAfterLegendHTML, SavingsLegend: a.savingsLegend()}
	blocked := t.BlockedNs()
	p.Summary = [][2]string{
		{"trace", htmlText(t.Path)},
		{"export", htmlText(t.Schema.Version())},
		{"GPU", htmlText(a.GPUName())},
		{"program", htmlText(a.programText())},
		{"region", htmlText(a.RegionName()) + ", " + format.Duration(t.Region.Duration)},
		{"host syncs", fmt.Sprintf("%d at %s; host blocked %s (%s of the region)", len(t.Syncs), plural(len(a.Sites), "site", "sites"), format.Duration(blocked), format.Percent(blocked, t.Region.Duration))},
		{"estimated savings", a.totalSavingsText()},
		{"evidence", evidenceSummary(&t.Evidence, len(t.Syncs))},
	}
	if opt.GateLine != "" {
		p.Summary = append(p.Summary, [2]string{"CI gate", htmlText(opt.GateLine)})
	}
	sites := a.Ordered()
	for i, s := range sites {
		if opt.Top > 0 && i >= opt.Top {
			p.MoreSites = len(sites) - opt.Top
			break
		}
		p.Sites = append(p.Sites, a.htmlRow(s))
	}
	n := opt.Details
	if n <= 0 {
		n = defaultHTMLDetails
	}
	if opt.Top > 0 {
		n = min(n, opt.Top)
	}
	for _, s := range sites[:min(n, len(sites))] {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, err := a.htmlDetail(ctx, s, opt.Timelines)
		if err != nil {
			return nil, err
		}
		p.Details = append(p.Details, d)
	}
	return p, nil
}

func (a *Analysis) htmlRow(s *classify.Site) htmlSiteRow {
	return htmlSiteRow{ID: s.ID, Dependency: string(s.Dependency), DependencyText: dependencyText(s), Category: htmlText(s.Category), Count: len(s.Syncs),
		Blocked: format.Duration(s.BlockedNs), Mean: format.Duration(meanNs(s)), Savings: a.savingsText(s), Location: htmlText(siteLabel(s)),
		Allowed: htmlText(a.Allowed[s.ID])}
}

func (a *Analysis) htmlDetail(ctx context.Context, s *classify.Site, tr TimelineReader) (htmlDetail, error) {
	d := htmlDetail{Row: a.htmlRow(s), APIs: htmlText(strings.Join(s.APIs, " + ")), Fingerprint: classify.Fingerprint(s),
		NVTX: htmlText(nvtxText(s)), PythonFrames: htmlTexts(s.Location.Frames)}
	for _, e := range s.Evidence {
		d.Evidence = append(d.Evidence, htmlSpans(e))
	}
	if s.Fix != "" {
		d.Fix = htmlSpans(s.Fix)
	}
	if rw, ok := a.RewriteAssumed(s); ok {
		d.Rewrite = htmlText(rw.Assumes)
	}
	if s.Confidence > 0 {
		d.Confidence = fmt.Sprintf("%.2f", s.Confidence)
	}
	idx := representativeSync(a.Trace, s)
	if idx < 0 {
		return d, nil
	}
	sy := &a.Trace.Syncs[idx]
	if s.Location.File != "" {
		for _, f := range classify.UserFrames(sy.Native()) {
			d.NativeFrames = append(d.NativeFrames, htmlText(f.Symbol))
		}
	} else if s.Location.Function != "" {
		d.NativeFrames, d.PythonFrames = d.PythonFrames, nil
	}
	d.SyncID = "e" + itoa(idx+1)
	d.SyncWhat = htmlText(What(sy))
	d.WaitedFor = waited(sy)
	d.GPUIdleAfter = idleAfter(sy)
	if len(s.Syncs) > 1 {
		d.RepresentsNote = fmt.Sprintf("the costliest of the site's %d syncs: the longest wait plus GPU idle after it", len(s.Syncs))
	}
	if tr == nil {
		d.TimelineNote = "No timeline: the report was rendered without access to the export."
		return d, nil
	}
	window, bubble := syncWindow(sy)
	tl, err := tr.Timeline(ctx, window)
	if err != nil {
		return d, fmt.Errorf("reading the timeline of %s: %w", d.SyncID, err)
	}
	d.Timeline = layoutTimeline(tl, a.Trace, sy, bubble, "recorded", true)
	// The what-if view: the same window as the estimator simulates it
	// without the site's syncs, where it provides Estimates.WithoutSyncs.
	switch {
	case a.Estimates == nil:
		d.SimulatedNote = "No simulated timeline: the savings were not estimated."
		return d, nil
	case a.Estimates.WithoutSyncs == nil:
		return d, nil
	case s.Counting() == classify.CountNone:
		d.SimulatedNote = "No simulated timeline: this site counts in no saving."
		return d, nil
	case a.Estimates.Sites[s.ID].Bound == estimate.BoundCopyOverlap:
		d.SimulatedNote = "No simulated timeline: the saving shown is the copy-overlap bound, not a replay."
		return d, nil
	}
	sim, err := a.Estimates.WithoutSyncs(ctx, s, window)
	if err != nil {
		return d, fmt.Errorf("simulating %s without its syncs: %w", s.ID, err)
	}
	d.Simulated = layoutTimeline(sim, a.Trace, sy, trace.Interval{}, "simulated without the site's syncs (the estimator's model of this window, profiler overhead kept)", false)
	return d, nil
}

// htmlText is the display form of text from the trace on the page
// (textsafe.HTML): html/template escapes it as HTML; control characters,
// bidirectional marks and line breaks are made visible and long names
// shortened.
func htmlText(s string) string { return textsafe.Display(s, textsafe.HTML) }

// htmlTexts is htmlText of each text.
func htmlTexts(texts []string) []string {
	if texts == nil {
		return nil
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = htmlText(t)
	}
	return out
}

// htmlSpans splits classifier text into code spans (codeSpans) and
// gives each piece its display form.
func htmlSpans(text string) []span {
	spans := codeSpans(text)
	for i := range spans {
		spans[i].Text = htmlText(spans[i].Text)
	}
	return spans
}

// representativeSync picks the site's sync that best shows its cost: the
// longest wait plus the GPU idle after it (the earlier one on ties); -1
// for an empty site.
func representativeSync(t *trace.Trace, s *classify.Site) int {
	best, bestCost := -1, int64(-1)
	for _, i := range s.Syncs {
		if c := syncCost(&t.Syncs[i]); c > bestCost || c == bestCost && i < best {
			best, bestCost = i, c
		}
	}
	return best
}

// syncCost is a sync's wait plus the GPU idle after it.
func syncCost(sy *trace.Sync) int64 {
	c := sy.Duration()
	if !sy.Gap.DeviceBusy && sy.Gap.IdleAfterNs > 0 {
		c += sy.Gap.IdleAfterNs
	}
	return c
}
