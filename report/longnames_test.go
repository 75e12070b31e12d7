package report

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/trace"
)

// countingWriter counts bytes and keeps none.
type countingWriter struct{ n int }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

// TestLongNamesBoundOutput gives every name of a real export (frames,
// calls, ops, threads, NVTX ranges, site text) a megabyte and checks that
// every format stays within 3× its normal size plus a constant per
// string slot (a bound of about 3–6 MB here, where the names alone
// would pass 1 GB): output grows with the number of syncs and ops, not with
// the length of the names.
func TestLongNamesBoundOutput(t *testing.T) {
	long := "file_" + strings.Repeat("x", 1<<20) + ".py:34"
	ctx := context.Background()
	formats := []struct {
		name string
		// slot is the most one name may add: its display form, or its
		// bounded JSON form.
		slot   int
		render func(l loaded, w io.Writer) error
	}{
		{"text", 4 * textsafe.MaxDisplay, func(l loaded, w io.Writer) error { return l.analysis.WriteText(w, TextOptions{}) }},
		{"markdown", 8 * textsafe.MaxDisplay, func(l loaded, w io.Writer) error {
			return l.analysis.WriteMarkdown(w, MarkdownOptions{Details: 100})
		}},
		{"html", 4 * textsafe.MaxDisplay, func(l loaded, w io.Writer) error {
			return l.analysis.WriteHTML(ctx, w, HTMLOptions{Timelines: l.timelines})
		}},
		{"json", textsafe.MaxJSON + 64, func(l loaded, w io.Writer) error { return l.analysis.WriteJSON(w) }},
		{"perfetto", textsafe.MaxJSON + 64, func(l loaded, w io.Writer) error { return l.analysis.WritePerfetto(ctx, w, l.timelines) }},
	}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			normal := load(t, "syncs_backtrace.sqlite.gz", "")
			var base countingWriter
			if err := f.render(normal, &base); err != nil {
				t.Fatal(err)
			}
			l := load(t, "syncs_backtrace.sqlite.gz", "")
			rename(l.analysis, long)
			l.timelines = renamedTimeline{l.export, long}
			var got countingWriter
			if err := f.render(l, &got); err != nil {
				t.Fatal(err)
			}
			// The slots a name may fill: each op and call its name; each
			// sync and site up to 8 (a sync's Perfetto event repeats its
			// site's category, evidence, fix and location, and its calls).
			tl, err := l.export.Timeline(ctx, trace.Interval{Start: l.analysis.Trace.Region.Start, End: l.analysis.Trace.Region.End})
			if err != nil {
				t.Fatal(err)
			}
			slots := 8*len(l.analysis.Trace.Syncs) + len(tl.Ops) + len(tl.Calls) + 8*len(l.analysis.Sites)
			bound := 3*base.n + slots*f.slot
			t.Logf("%s: %d bytes normally, %d with 1 MB names (bound %d; unbounded it would pass %d)", f.name, base.n, got.n, bound, len(long)*slots)
			if got.n > bound {
				t.Errorf("%d bytes with 1 MB names, more than %d", got.n, bound)
			}
		})
	}
}

// TestLongNameDisplayKeepsEnds: the display form of a long location keeps
// its start and its end (file:line and the end of the symbol).
func TestLongNameDisplayKeepsEnds(t *testing.T) {
	l := load(t, "syncs_backtrace.sqlite.gz", "")
	long := "head_" + strings.Repeat("x", 1<<20) + "_tail"
	rename(l.analysis, long)
	var b bytes.Buffer
	if err := l.analysis.WriteText(&b, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "head_xxx") || !strings.Contains(b.String(), "xxx_tail") || !strings.Contains(b.String(), "x…x") {
		t.Errorf("the display form lost an end or the ellipsis")
	}
}
