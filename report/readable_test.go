package report

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/nsyssync/nsyssync/trace"
)

// sitesRows returns the lines of the SITES table of a text report.
func sitesRows(text string) []string {
	_, rest, _ := strings.Cut(text, "\nSITES\n")
	table, _, _ := strings.Cut(rest, "\n\n")
	lines := strings.Split(table, "\n")
	return lines[1:]
}

// TestNarrowTableKeepsLocation: at 80 columns each listed site's row
// keeps its file and line, else its function's or innermost NVTX range's
// head, for every fixture and corpus export; and no line of SITES is
// wider than 80.
func TestNarrowTableKeepsLocation(t *testing.T) {
	var all []loaded
	for _, f := range []string{"syncs_backtrace.sqlite.gz", "patterns_backtrace.sqlite.gz", "syncs_autograd.sqlite.gz", "multiproc_lean.sqlite.gz"} {
		all = append(all, load(t, f, ""))
	}
	all = append(all, loadCorpus(t)...)
	checked := map[string]int{}
	for _, l := range all {
		a := l.analysis
		var buf bytes.Buffer
		if err := a.WriteText(&buf, TextOptions{Top: 10, Width: 80}); err != nil {
			t.Fatal(err)
		}
		rows := sitesRows(buf.String())
		for _, r := range rows {
			if w := ansi.StringWidth(r); w > 80 {
				t.Errorf("%s: SITES line %d cells wide: %q", a.Trace.Path, w, r)
			}
		}
		for i, s := range a.Ordered() {
			if i >= 10 {
				break
			}
			var want, kind string
			switch {
			case s.Location.File != "":
				want, kind = fmt.Sprintf("%s:%d", path.Base(s.Location.File), s.Location.Line), "file:line"
			case s.Location.Function != "":
				want, kind = ansi.Truncate(shortFunction(termText(s.Location.Function)), 12, ""), "function"
			case len(s.NVTX) > 0:
				names := nvtxNames(s)
				inner := termText(compactRange(names[len(names)-1]))
				if ansi.StringWidth(inner) > 16 {
					inner = ansi.Truncate(inner, 16, "") // cut to the width: its head shows
				}
				want, kind = inner, "innermost range"
			default:
				continue
			}
			found := false
			for _, r := range rows {
				if strings.HasPrefix(r, s.ID+" ") && strings.Contains(r, want) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: site %s row lost its %s %q at 80 columns:\n%s", a.Trace.Path, s.ID, kind, want, strings.Join(rows, "\n"))
			}
			checked[kind]++
		}
	}
	for _, kind := range []string{"file:line", "function", "innermost range"} {
		if checked[kind] == 0 {
			t.Errorf("no site with a %s checked", kind)
		}
	}
}

// TestNVTXNameRoundTrip: the NVTX names a report shows are the names as
// written: each one --nvtx accepts, and the site says how many other
// iterations it groups. The folded form --nvtx would not find.
func TestNVTXNameRoundTrip(t *testing.T) {
	l := load(t, "syncs_backtrace.sqlite.gz", "measured")
	a := l.analysis
	var text bytes.Buffer
	if err := a.WriteText(&text, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	grouped := 0
	for _, s := range a.Sites {
		if len(s.NVTX) == 0 {
			continue
		}
		names := nvtxNames(&s)
		for _, n := range names {
			tr, err := l.export.Load(context.Background(), trace.LoadOptions{NVTX: n})
			if err != nil {
				t.Errorf("site %s: --nvtx %q (shown) fails: %v", s.ID, n, err)
				continue
			}
			if len(tr.Syncs) == 0 {
				t.Errorf("site %s: --nvtx %q holds no sync", s.ID, n)
			}
		}
		if s.NVTXOthers > 0 {
			grouped++
			shown := nvtxText(&s)
			if !strings.Contains(shown, fmt.Sprintf("(and %d more like it)", s.NVTXOthers)) || !strings.Contains(text.String(), shown) {
				t.Errorf("site %s: report does not say %q", s.ID, shown)
			}
			folded := s.NVTX[len(s.NVTX)-1]
			if _, err := l.export.Load(context.Background(), trace.LoadOptions{NVTX: folded}); err == nil {
				t.Errorf("site %s: the folded name %q is accepted too: the test proves nothing", s.ID, folded)
			}
		}
	}
	if grouped == 0 {
		t.Fatal("no site groups several iterations")
	}
	// The JSON keeps the folded path and adds the written one.
	for _, s := range jsonSites(t, a) {
		if nvtx, _ := s["nvtx"].([]any); len(nvtx) > 0 {
			written, _ := s["nvtx_as_written"].([]any)
			if len(written) != len(nvtx) {
				t.Errorf("site %v: nvtx %v, nvtx_as_written %v", s["id"], nvtx, written)
			}
		}
	}
}

// TestMarkerName: a long structured marker shows by its name field, any
// other long name is clipped, a short one stays.
func TestMarkerName(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, c := range []struct{ in, want string }{
		{"Batch 17", "Batch 17"},
		{`{"name": "forward", "args": "` + long + `"}`, "forward {…}"},
		{`{'mod': 'torch.nn.functional', 'op': 'conv2d', 'args': [{'name': '', 'shape': (64, 3)}], 'x': '` + long + `'}`,
			"torch.nn.functional.conv2d {…}"},
		{`{'traceMarker': ['a.py:1'], 'funcStack': '/<module>/Net::forward/conv2d', 'pad': '` + long + `'}`, "conv2d {…}"},
		{long, strings.Repeat("x", maxMarkerRunes-1) + "…"},
		{"{" + long, "{" + strings.Repeat("x", maxMarkerRunes-2) + "…"},
		{`{"name": "forward", "n": 3}`, `{"name": "forward", "n": 3}`},
	} {
		if got := markerName(c.in); got != c.want {
			t.Errorf("markerName(%.40q…) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDLProfMarkerShortened: the DLProf export's 1,500-character JSON
// markers show by their names in every report, whole in the JSON.
func TestDLProfMarkerShortened(t *testing.T) {
	var a *Analysis
	for _, l := range loadCorpus(t) {
		if strings.Contains(l.analysis.Trace.Path, "dlprof") {
			a = l.analysis
		}
	}
	if a == nil {
		t.Skip("no DLProf export in the corpus")
	}
	var text, md bytes.Buffer
	if err := a.WriteText(&text, TextOptions{Width: 120}); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteMarkdown(&md, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		if strings.Contains(out, "traceMarker") {
			t.Errorf("%s report shows a whole DLProf marker", name)
		}
		if !strings.Contains(out, "torch.nn.functional.conv2d {…}") {
			t.Errorf("%s report does not name the marker by its op", name)
		}
	}
}

// onePlural finds a count of one with a plural noun.
var onePlural = regexp.MustCompile(`(^|[^0-9.,])1 (ops|sites|traces|syncs|host syncs|bytes|inputs|files|runs|frames)\b`)

// TestSingularForOne: no report of any fixture or corpus export, in any
// format, says "1 ops", "1 sites", …
func TestSingularForOne(t *testing.T) {
	all := loadCorpus(t)
	for _, f := range []string{"syncs_backtrace.sqlite.gz", "syncs_autograd.sqlite.gz", "multiproc_lean.sqlite.gz", "gt_item_tiny.sqlite.gz"} {
		all = append(all, load(t, f, ""))
	}
	ones := 0
	for _, l := range all {
		for format, out := range renderAll(t, l) {
			if m := onePlural.FindString(out); m != "" {
				t.Errorf("%s %s: %q", l.analysis.Trace.Path, format, m)
			}
			ones += strings.Count(out, "1 op,") + strings.Count(out, " 1 site")
		}
	}
	if ones == 0 {
		t.Error("no count of one in any report: the test sees no singular")
	}
}

// TestIdleAfterLegend: under LONGEST SYNCS (text) and in the top sites
// (HTML), a legend says what busy and end mean.
func TestIdleAfterLegend(t *testing.T) {
	l := load(t, "multiproc_lean.sqlite.gz", "")
	var text, page bytes.Buffer
	if err := l.analysis.WriteText(&text, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := l.analysis.WriteHTML(context.Background(), &page, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	_, longest, _ := strings.Cut(text.String(), "\nLONGEST SYNCS\n")
	if !strings.Contains(longest, " end ") && !strings.Contains(longest, " busy ") {
		t.Fatalf("no end or busy in LONGEST SYNCS:\n%s", longest)
	}
	if !strings.Contains(strings.ReplaceAll(longest, "\n", " "), IdleAfterLegend) {
		t.Errorf("LONGEST SYNCS has no legend:\n%s", longest)
	}
	if !strings.Contains(page.String(), "busy: that work was still running") || !strings.Contains(page.String(), "end: none followed") {
		t.Error("the HTML report has no legend for busy and end")
	}
}
