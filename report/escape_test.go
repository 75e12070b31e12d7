package report

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// hostile is a symbol name no report may pass through unescaped.
const hostile = `at::native::kernel<script>alert("x")</script>&<b>`

// hostileTimeline renames every GPU op of the real timeline it reads.
type hostileTimeline struct{ x *trace.Export }

func (h hostileTimeline) Timeline(ctx context.Context, w trace.Interval) (*trace.Timeline, error) {
	tl, err := h.x.Timeline(ctx, w)
	if err != nil {
		return nil, err
	}
	for i := range tl.Ops {
		tl.Ops[i].Name = hostile
	}
	for i := range tl.Calls {
		tl.Calls[i].Name = hostile
	}
	return tl, nil
}

// hostileAnalysis loads a real fixture and puts the hostile name
// everywhere the trace supplies text: native and Python frames, the site
// location, the NVTX path, evidence, fix, thread name and warnings.
func hostileAnalysis(t *testing.T) loaded {
	l := load(t, "syncs_backtrace.sqlite", "")
	a := l.analysis
	for i := range a.Trace.Syncs {
		s := &a.Trace.Syncs[i]
		native := s.Native()
		for j := range native {
			native[j].Symbol = hostile + native[j].Symbol
		}
		py := s.Python()
		for j := range py {
			py[j].Function = hostile
		}
	}
	for tid, th := range a.Trace.Threads {
		th.Name = hostile
		a.Trace.Threads[tid] = th
	}
	a.Trace.Warnings = append(a.Trace.Warnings, hostile)
	for i := range a.Sites {
		s := &a.Sites[i]
		s.Location.Function = hostile
		s.Location.Frames = append([]string{hostile}, s.Location.Frames...)
		s.NVTX = append(s.NVTX, hostile)
		s.Evidence = []string{"native frame " + hostile}
		s.Fix = "replace " + hostile
		s.Category = hostile
	}
	return l
}

// TestHTMLEscapesTraceText renders a real export whose symbols carry
// <script> and checks that no tag from the trace reaches the page.
func TestHTMLEscapesTraceText(t *testing.T) {
	l := hostileAnalysis(t)
	var b bytes.Buffer
	if err := l.analysis.WriteHTML(context.Background(), &b, HTMLOptions{Timelines: hostileTimeline{l.export}}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, raw := range []string{"<script", "</script", "&<b>"} {
		if strings.Contains(page, raw) {
			t.Errorf("page contains %q from the trace", raw)
		}
	}
	escaped := strings.Count(page, "&lt;script&gt;")
	// Frames, location, NVTX, evidence, fix, category, thread lanes, op and
	// call titles: the name shows, escaped, many times.
	if escaped < 20 {
		t.Errorf("escaped name shows %d times, want it in every place the trace's text goes", escaped)
	}
	if !strings.Contains(page, "<svg class=\"timeline\"") {
		t.Errorf("no timeline drawn")
	}
}

// TestMarkdownEscapesTraceText: GitHub renders HTML inside Markdown, so
// the hostile name must arrive as entities in text, table cells and
// <details> summaries, and stay literal inside code fences.
func TestMarkdownEscapesTraceText(t *testing.T) {
	l := hostileAnalysis(t)
	var b bytes.Buffer
	if err := l.analysis.WriteMarkdown(&b, MarkdownOptions{Details: 100}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	outside := md
	// Code fences show their text literally: take them out before looking
	// for raw tags.
	for {
		start := strings.Index(outside, "```\n")
		if start < 0 {
			break
		}
		end := strings.Index(outside[start+4:], "\n```")
		if end < 0 {
			t.Fatalf("unclosed fence")
		}
		outside = outside[:start] + outside[start+4+end+4:]
	}
	if strings.Contains(outside, "<script") || strings.Contains(outside, "&<b>") {
		t.Errorf("raw tag outside code fences:\n%s", outside)
	}
	if !strings.Contains(outside, "&lt;script&gt;") {
		t.Errorf("escaped name missing")
	}
	// Every table row keeps its 8 cells: no unescaped | from the trace.
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| s") {
			if n := strings.Count(line, "|") - strings.Count(line, `\|`); n != 9 {
				t.Errorf("row with %d cell borders: %s", n, line)
			}
		}
	}
}

// TestTextAndPerfettoCarryTraceTextSafely: the terminal report strips
// control characters (escape sequences from a hostile export), and the
// Perfetto JSON stays valid with the name intact.
func TestTextAndPerfettoCarryTraceTextSafely(t *testing.T) {
	l := hostileAnalysis(t)
	for i := range l.analysis.Sites {
		l.analysis.Sites[i].Location.Function = "step\x1b]0;pwned\x07\x1b[31m"
	}
	var text bytes.Buffer
	if err := l.analysis.WriteText(&text, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(text.String(), "\x1b\x07") {
		t.Errorf("control characters from the trace reached the terminal")
	}
	var pf bytes.Buffer
	if err := l.analysis.WritePerfetto(context.Background(), &pf, hostileTimeline{l.export}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []chromeEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(pf.Bytes(), &doc); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	found := false
	for _, e := range doc.TraceEvents {
		found = found || e.Name == hostile
	}
	if !found {
		t.Errorf("the op name did not survive the JSON round trip")
	}
}
