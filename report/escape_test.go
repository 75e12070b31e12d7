package report

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// hostile is a symbol name no report may pass through unescaped: HTML,
// terminal escape sequences (OSC sets the title, BEL ends it, CSI clears
// the screen), a right-to-left override, and line breaks followed by
// Markdown that would render as an image and a link and close the
// <details> block it is in.
const hostile = "at::native::kernel<script>alert(\"x\")</script>&<b>|`" +
	"\x1b]0;PWNED\x07\x1b[2J\u009b31m\u202etxt.exe" +
	"\n![x](http://evil.example/i.png)\n</details>\n\n[link](https://evil.example)\r\n# www.evil.example"

// hostileTimeline renames every GPU op and API call of the real timeline
// it reads.
type hostileTimeline struct{ x *trace.Export }

func (h hostileTimeline) Timeline(ctx context.Context, w trace.Interval) (*trace.Timeline, error) {
	return renamedTimeline{h.x, hostile}.Timeline(ctx, w)
}

// renamedTimeline renames every GPU op and API call to name.
type renamedTimeline struct {
	x    *trace.Export
	name string
}

func (r renamedTimeline) Timeline(ctx context.Context, w trace.Interval) (*trace.Timeline, error) {
	tl, err := r.x.Timeline(ctx, w)
	if err != nil {
		return nil, err
	}
	for i := range tl.Ops {
		tl.Ops[i].Name = r.name
	}
	for i := range tl.Calls {
		tl.Calls[i].Name = r.name
	}
	return tl, nil
}

// hostileAnalysis loads a real fixture and puts the hostile name
// everywhere the trace supplies text.
func hostileAnalysis(t *testing.T) loaded {
	l := load(t, "syncs_backtrace.sqlite.gz", "")
	rename(l.analysis, hostile)
	l.timelines = hostileTimeline{l.export}
	return l
}

// rename puts name everywhere the trace supplies text: native and Python
// frames, the syncs' calls and NVTX ranges, thread and process names,
// the region, the site location, NVTX path, evidence, fix, category and
// the warnings.
func rename(a *Analysis, name string) {
	for i := range a.Trace.Syncs {
		s := &a.Trace.Syncs[i]
		native := s.Native()
		for j := range native {
			native[j].Symbol = name + native[j].Symbol
		}
		py := s.Python()
		for j := range py {
			py[j].Function = name
		}
		calls := s.Calls()
		for j := range calls {
			calls[j].Name = name
		}
		nvtx := s.NVTX()
		for j := range nvtx {
			nvtx[j].Name = name
		}
	}
	for tid, th := range a.Trace.Threads {
		th.Name = name
		a.Trace.Threads[tid] = th
	}
	for pid, p := range a.Trace.Processes {
		p.Name = name
		a.Trace.Processes[pid] = p
	}
	a.Trace.Warnings = append(a.Trace.Warnings, name)
	for i := range a.Sites {
		s := &a.Sites[i]
		s.Location.Function = name
		s.Location.Frames = append([]string{name}, s.Location.Frames...)
		s.NVTX = append(s.NVTX, name)
		s.Evidence = []string{"native frame " + name, "in `" + name + "`"}
		s.Fix = "replace " + name
		s.Category = name
	}
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
