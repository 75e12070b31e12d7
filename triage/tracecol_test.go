package triage

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTraceColumn: batch's top sites (JSON and text) and history's tables
// say which trace each site is from: every trace_paths entry is an input
// whose document holds the site's fingerprint, and every such input is
// listed.
func TestTraceColumn(t *testing.T) {
	results, holds := fixtureResults(t, 2, "syncs_lean.sqlite.gz", "syncs_autograd.sqlite.gz", "multiproc_lean.sqlite.gz")
	sum := NewSummary()
	for _, r := range results {
		sum.Add(r)
	}
	rep := sum.Report(0)
	multi := 0
	for _, s := range rep.TopSites {
		if !slices.Equal(s.TracePaths, holds[s.Fingerprint]) {
			t.Errorf("site %s: trace_paths %q, want %q", s.Fingerprint, s.TracePaths, holds[s.Fingerprint])
		}
		if len(s.TracePaths) != s.Traces {
			t.Errorf("site %s: %d trace_paths for %d traces", s.Fingerprint, len(s.TracePaths), s.Traces)
		}
		if s.Traces > 1 {
			multi++
		}
	}
	if multi == 0 {
		t.Error("no site in two traces: the test does not see a multi-trace row")
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "TRACE ") || !strings.Contains(text.String(), "syncs_autograd.sqlite.gz") ||
		!strings.Contains(text.String(), " +1 more") {
		t.Errorf("batch text has no trace column:\n%s", text.String())
	}

	ctx := context.Background()
	db, err := OpenDB(ctx, filepath.Join(t.TempDir(), "triage.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recordRun(t, db, "night", results)
	top, err := db.Top(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range top {
		latest := h.Points[len(h.Points)-1]
		if len(latest.TracePaths) != latest.Traces || len(latest.TracePaths) != len(holds[h.Fingerprint]) {
			t.Errorf("history of %s: trace_paths %q for %d traces, want %q", h.Fingerprint, latest.TracePaths, latest.Traces, holds[h.Fingerprint])
		}
	}
	var hist bytes.Buffer
	if err := WriteTopText(&hist, top); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hist.String(), "TRACE") || !strings.Contains(hist.String(), "multiproc_lean.sqlite.gz") {
		t.Errorf("history top table has no trace column:\n%s", hist.String())
	}
	hist.Reset()
	if err := top[0].WriteText(&hist); err != nil {
		t.Fatal(err)
	}
	if base := filepath.Base(holds[top[0].Fingerprint][0]); !strings.Contains(hist.String(), base) {
		t.Errorf("history of a site does not name its trace %s:\n%s", base, hist.String())
	}
}

// TestDiffTraceColumn: diff's changes say which traces each site is from
// (JSON trace_paths, text TRACE): the new side's traces holding it, or
// the old side's for a site that is gone.
func TestDiffTraceColumn(t *testing.T) {
	side := func(label string, files ...string) (*Snapshot, map[string][]string) {
		results, holds := fixtureResults(t, 1, files...)
		s := NewSnapshot(label)
		for _, r := range results {
			s.AddResult(r)
		}
		return s, holds
	}
	old, oldHolds := side("old", "syncs_lean.sqlite.gz", "syncs_autograd.sqlite.gz")
	cur, curHolds := side("new", "syncs_lean.sqlite.gz", "multiproc_lean.sqlite.gz")
	d := Compare(old, cur, 0)
	if d.Count(StatusGone) == 0 || d.Count(StatusNew) == 0 {
		t.Fatalf("no gone or no new site (%d changes): the test does not see both sides", len(d.Changes))
	}
	for _, c := range d.Changes {
		want := curHolds[c.Fingerprint]
		if c.Status == StatusGone {
			want = oldHolds[c.Fingerprint]
		}
		if !slices.Equal(c.TracePaths, want) || c.Traces != len(want) {
			t.Errorf("%s site %s: trace_paths %q (%d traces), want %q", c.Status, c.Fingerprint, c.TracePaths, c.Traces, want)
		}
	}
	var js, text bytes.Buffer
	if err := d.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteText(&text, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"trace_paths": [`) {
		t.Errorf("diff JSON has no trace_paths:\n%s", js.String())
	}
	if !strings.Contains(text.String(), " TRACE ") || !strings.Contains(text.String(), "syncs_autograd.sqlite.gz") ||
		!strings.Contains(text.String(), "multiproc_lean.sqlite.gz") {
		t.Errorf("diff text has no trace column:\n%s", text.String())
	}
}

// fixtureResults analyses fixtures (without estimates) and returns their
// results, and for each fingerprint the inputs whose documents hold it, in
// input order.
func fixtureResults(t *testing.T, jobs int, files ...string) ([]Result, map[string][]string) {
	t.Helper()
	var inputs []Input
	for _, f := range files {
		inputs = append(inputs, Input{Path: filepath.Join(fixturesDir, f)})
	}
	results := collect(t, inputs, Options{Analysis: noEstimate, Jobs: jobs})
	holds := map[string][]string{}
	for _, r := range results {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		for _, s := range r.Doc.Sites {
			if !slices.Contains(holds[s.Fingerprint], r.Path) {
				holds[s.Fingerprint] = append(holds[s.Fingerprint], r.Path)
			}
		}
	}
	return results, holds
}
