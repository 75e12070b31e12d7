package report

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/contract"
)

// rawControls are what no text-like output may carry from the trace: ESC,
// BEL, CR, C1's CSI (U+009B) and the right-to-left override.
var rawControls = []string{"\x1b", "\x07", "\r", "\u009b", "\u202e"}

// colourCode is an SGR sequence lipgloss writes: the only escape allowed
// in a coloured report.
var colourCode = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// TestHostileTextOutputs renders the hostile export in every text-like
// format and checks that no control character or bidirectional override
// from the trace survives, that colour still works, and that the
// Markdown keeps its structure.
func TestHostileTextOutputs(t *testing.T) {
	l := hostileAnalysis(t)
	ctx := context.Background()
	render := map[string]func(*bytes.Buffer) error{
		"text":        func(b *bytes.Buffer) error { return l.analysis.WriteText(b, TextOptions{}) },
		"text colour": func(b *bytes.Buffer) error { return l.analysis.WriteText(b, TextOptions{Color: true, Width: 100}) },
		"markdown":    func(b *bytes.Buffer) error { return l.analysis.WriteMarkdown(b, MarkdownOptions{Details: 100}) },
		"html":        func(b *bytes.Buffer) error { return l.analysis.WriteHTML(ctx, b, HTMLOptions{Timelines: l.timelines}) },
		"doctor":      func(b *bytes.Buffer) error { return Diagnose(l.analysis).WriteText(b, TextOptions{Width: 100}) },
		"doctor colour": func(b *bytes.Buffer) error {
			return Diagnose(l.analysis).WriteText(b, TextOptions{Width: 100, Color: true})
		},
	}
	for name, r := range render {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := r(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if strings.HasSuffix(name, "colour") {
				if !colourCode.MatchString(out) {
					t.Errorf("no colour in a coloured report")
				}
				out = colourCode.ReplaceAllString(out, "")
			}
			for _, c := range rawControls {
				if i := strings.Index(out, c); i >= 0 {
					t.Errorf("raw %q from the trace at byte %d: %q", c, i, out[max(0, i-40):min(len(out), i+40)])
				}
			}
			// The doctor names no site: only the report shows the name.
			if !strings.HasPrefix(name, "doctor") && !strings.Contains(out, `\x1b]0;PWNED\x07`) {
				t.Errorf("the escape sequence is not shown in its visible form")
			}
		})
	}
}

// TestHostileMarkdownStructure: the hostile name's line breaks, </details>
// and Markdown neither close a block, nor render as a link, an image or a
// heading.
func TestHostileMarkdownStructure(t *testing.T) {
	l := hostileAnalysis(t)
	var b bytes.Buffer
	if err := l.analysis.WriteMarkdown(&b, MarkdownOptions{Details: 100}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	prose := outsideCode(t, md)
	opened, closed := strings.Count(prose, "<details>"), strings.Count(prose, "</details>")
	if opened != closed || opened != len(l.analysis.Sites) {
		t.Errorf("%d <details> and %d </details>, want one each per site (%d)", opened, closed, len(l.analysis.Sites))
	}
	// A link or an image is ](…: its ] unescaped. In HTML lines ] is &#93;.
	if m := regexp.MustCompile(`(^|[^\\])\]\(`).FindString(prose); m != "" {
		t.Errorf("link syntax outside code: %q", m)
	}
	if strings.Contains(prose, "](http") && !strings.Contains(prose, `\](http`) {
		t.Errorf("unescaped ](http outside code")
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "![") || strings.HasPrefix(line, "[link]") {
			t.Errorf("a line of the trace's text starts a block: %q", line)
		}
	}
	// GitHub links a bare URL in Markdown text, not in an HTML block
	// (the <details><summary> line).
	for _, line := range strings.Split(prose, "\n") {
		if !strings.HasPrefix(line, "<details>") && (strings.Contains(line, "://") || strings.Contains(line, "www.")) {
			t.Errorf("a bare URL outside code would be linked: %q", line)
		}
	}
}

// outsideCode is the Markdown without its fenced code blocks and code
// spans, whose content shows literally.
func outsideCode(t *testing.T, md string) string {
	t.Helper()
	var out []string
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		switch {
		case fence == "" && strings.HasPrefix(line, "```"):
			fence = strings.TrimRight(line, "`") + strings.Repeat("`", len(line)-len(strings.TrimRight(line, "`")))
		case fence != "" && line == fence:
			fence = ""
		case fence == "":
			out = append(out, line)
		}
	}
	if fence != "" {
		t.Fatalf("unclosed fence %q", fence)
	}
	// Code spans: an unescaped backtick pair on one line.
	span := regexp.MustCompile("(^|[^\\\\])`[^`]*[^\\\\]`")
	return span.ReplaceAllString(strings.Join(out, "\n"), "$1")
}

// TestHostileJSONKeepsText: JSON escaping carries the hostile name whole,
// control characters and all, and the output stays valid. encoding/json
// escapes C0 controls, not C1 ones nor U+202E: those stay raw in a JSON
// string, which a JSON reader decodes as they were.
func TestHostileJSONKeepsText(t *testing.T) {
	l := hostileAnalysis(t)
	var b bytes.Buffer
	if err := l.analysis.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"\x1b", "\x07", "\r", "\n![x]"} {
		if strings.Contains(b.String(), c) {
			t.Errorf("raw %q in the JSON", c)
		}
	}
	var doc contract.Document
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	if doc.Sites[0].Location.Function != hostile || doc.Sites[0].Category != hostile {
		t.Errorf("site text changed: %q", doc.Sites[0].Location.Function)
	}
	if doc.Notes[len(doc.Notes)-1] != hostile {
		t.Errorf("warning changed")
	}
	if doc.Syncs[0].Thread != hostile || doc.Syncs[0].APIs[0] != hostile {
		t.Errorf("sync text changed: %q, %q", doc.Syncs[0].Thread, doc.Syncs[0].APIs)
	}
}
