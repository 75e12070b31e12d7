package report

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/trace"
)

// renderCase is one output format of FuzzRenderHostile: how to render it,
// the most one name may add to it, and whether it is text shown to
// people (no raw control character may survive).
type renderCase struct {
	name   string
	slot   int
	shown  bool
	render func(l loaded, w *bytes.Buffer) error
}

func renderCases() []renderCase {
	ctx := context.Background()
	return []renderCase{
		{"text", 4 * textsafe.MaxDisplay, true, func(l loaded, w *bytes.Buffer) error { return l.analysis.WriteText(w, TextOptions{}) }},
		{"text colour 80", 4 * textsafe.MaxDisplay, true, func(l loaded, w *bytes.Buffer) error {
			return l.analysis.WriteText(w, TextOptions{Color: true, Width: 80})
		}},
		{"markdown", 8 * textsafe.MaxDisplay, true, func(l loaded, w *bytes.Buffer) error {
			return l.analysis.WriteMarkdown(w, MarkdownOptions{Details: 100})
		}},
		{"html", 4 * textsafe.MaxDisplay, true, func(l loaded, w *bytes.Buffer) error {
			return l.analysis.WriteHTML(ctx, w, HTMLOptions{Timelines: l.timelines})
		}},
		{"doctor", 4 * textsafe.MaxDisplay, true, func(l loaded, w *bytes.Buffer) error {
			return Diagnose(l.analysis).WriteText(w, TextOptions{Width: 100})
		}},
		{"json", textsafe.MaxJSON + 64, false, func(l loaded, w *bytes.Buffer) error { return l.analysis.WriteJSON(w) }},
		{"perfetto", textsafe.MaxJSON + 64, false, func(l loaded, w *bytes.Buffer) error {
			return l.analysis.WritePerfetto(ctx, w, l.timelines)
		}},
	}
}

// fuzzBase is what the fuzzed renderings are measured against: each
// format's size for the real fixture, and the slots a name can fill.
type fuzzBase struct {
	once  sync.Once
	sizes map[string]int
	slots int
}

func (b *fuzzBase) get(t *testing.T) *fuzzBase {
	b.once.Do(func() {
		l := load(t, "syncs_backtrace.sqlite.gz", "")
		b.sizes = map[string]int{}
		for _, c := range renderCases() {
			var w bytes.Buffer
			if err := c.render(l, &w); err != nil {
				t.Fatal(err)
			}
			b.sizes[c.name] = w.Len()
		}
		tl, err := l.export.Timeline(context.Background(), trace.Interval{Start: l.analysis.Trace.Region.Start, End: l.analysis.Trace.Region.End})
		if err != nil {
			t.Fatal(err)
		}
		b.slots = 8*len(l.analysis.Trace.Syncs) + len(tl.Ops) + len(tl.Calls) + 8*len(l.analysis.Sites)
	})
	return b
}

// FuzzRenderHostile puts a fuzzed name everywhere a real export supplies
// text (frames, calls, ops, threads, processes, NVTX, site text), and a
// fuzzed path as the program's file and the export's name, and renders
// every format. No rendering may fail or panic; text, Markdown, HTML and
// the doctor may carry no raw control character, bidirectional override
// or line separator; Markdown keeps one <details> block per site and its
// fences closed; JSON and Perfetto stay valid JSON; and every output
// stays within 3× its normal size plus a constant per name slot.
func FuzzRenderHostile(f *testing.F) {
	for _, seed := range [][2]string{
		{hostile, "/work/a\x1b[2J/b.py"},
		{"plain", "/work/fixtures/programs/syncs.py"},
		{"```\n</details>\n```", "`x`/y.py"},
		{"\u202e\u2066\u2028\u0085\x00\xff\xfe", "a\r\nb"},
		{strings.Repeat("x", 5000), strings.Repeat("d/", 3000) + "f.py"},
		{"| a | b |\n|---|---|", "<script>.py"},
	} {
		f.Add(seed[0], seed[1])
	}
	var base fuzzBase
	f.Fuzz(func(t *testing.T, name, file string) {
		b := base.get(t)
		l := load(t, "syncs_backtrace.sqlite.gz", "")
		rename(l.analysis, name)
		l.analysis.Trace.Path = file
		for i := range l.analysis.Sites {
			l.analysis.Sites[i].Location.File = file
		}
		l.timelines = renamedTimeline{l.export, name}
		for _, c := range renderCases() {
			var w bytes.Buffer
			if err := c.render(l, &w); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if bound := 3*b.sizes[c.name] + b.slots*c.slot; w.Len() > bound {
				t.Fatalf("%s: %d bytes, more than %d", c.name, w.Len(), bound)
			}
			out := colourCode.ReplaceAllString(w.String(), "")
			switch {
			case c.shown:
				if i := strings.IndexFunc(out, rawCharacter); i >= 0 {
					t.Fatalf("%s: raw %q at byte %d: %q", c.name, []rune(out[i:])[0], i, out[max(0, i-40):min(len(out), i+40)])
				}
			case !json.Valid(w.Bytes()):
				t.Fatalf("%s: invalid JSON", c.name)
			}
			if c.name == "markdown" {
				prose := outsideCode(t, out)
				if o, cl := strings.Count(prose, "<details>"), strings.Count(prose, "</details>"); o != cl || o != len(l.analysis.Sites) {
					t.Fatalf("markdown: %d <details> and %d </details> for %d sites", o, cl, len(l.analysis.Sites))
				}
			}
		}
	})
}

// rawCharacter is a character no text-like output may carry from the
// trace: a control character other than the report's own line feeds and
// tabs, a bidirectional control, a line or paragraph separator, or a
// byte that is not UTF-8.
func rawCharacter(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r == unicode.ReplacementChar:
		return false // what html/template and the escapers write for bad bytes
	case unicode.IsControl(r), r == '\u2028', r == '\u2029':
		return true
	}
	return unicode.Is(unicode.Bidi_Control, r)
}
