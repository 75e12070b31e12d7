package triage

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/analysis"
)

func snapshotOf(label string, sites map[string]int64) *Snapshot {
	s := NewSnapshot(label)
	s.Traces = 1
	for fp, ns := range sites {
		s.add(SiteTotal{Fingerprint: fp, APIs: []string{"cudaStreamSynchronize"}, Count: 1, BlockedNs: ns}, true)
		s.BlockedNs += ns
	}
	return s
}

func TestCompareStatuses(t *testing.T) {
	old := snapshotOf("old", map[string]int64{"a": 1000, "b": 1000, "c": 1000, "d": 1000})
	cur := snapshotOf("new", map[string]int64{"a": 1050, "b": 1500, "c": 500, "e": 200})
	d := Compare(old, cur, 10)
	want := map[string]Status{"a": StatusSame, "b": StatusGrown, "c": StatusShrunk, "d": StatusGone, "e": StatusNew}
	for _, c := range d.Changes {
		if c.Status != want[c.Fingerprint] {
			t.Errorf("%s: %s, want %s", c.Fingerprint, c.Status, want[c.Fingerprint])
		}
	}
	order := []string{"e", "b", "c", "d", "a"}
	for i, c := range d.Changes {
		if c.Fingerprint != order[i] {
			t.Errorf("change %d is %s, want %s (new, grown, shrunk, gone, same)", i, c.Fingerprint, order[i])
		}
	}
	if d.Changes[1].ChangePct != 50 || d.Changes[1].ShareOfOldPct != 12.5 {
		t.Errorf("grown site: %+v", d.Changes[1])
	}
	if d.TotalChangePct != -18.75 { // 3250 ns after 4000
		t.Errorf("total change %g, want -18.75", d.TotalChangePct)
	}
}

func TestRegressionGate(t *testing.T) {
	base := map[string]int64{"a": 1000, "b": 1000, "c": 1000, "d": 1000}
	tests := []struct {
		name    string
		cur     map[string]int64
		pct     float64
		reasons int
	}{
		{"unchanged", base, 0, 0},
		{"small jitter of a small site passes", map[string]int64{"a": 1000, "b": 1000, "c": 1000, "d": 1150}, 5, 0},
		{"one site grew 25% of the old total", map[string]int64{"a": 2000, "b": 1000, "c": 1000, "d": 1000}, 10, 2},
		{"new site of 10% hidden by a shrunk one", map[string]int64{"a": 600, "b": 1000, "c": 1000, "d": 1000, "e": 400}, 5, 1},
		{"total grew, no single site over", map[string]int64{"a": 1100, "b": 1100, "c": 1100, "d": 1100}, 5, 1},
		{"within threshold", map[string]int64{"a": 1100, "b": 1100, "c": 1100, "d": 1100}, 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Compare(snapshotOf("old", base), snapshotOf("new", tt.cur), 10)
			if got := d.Regressions(tt.pct); len(got) != tt.reasons {
				t.Errorf("%d reasons %q, want %d", len(got), got, tt.reasons)
			}
		})
	}
}

// A JSON report written by `analyze --format json` and its export give
// the same snapshot, so diffs may mix the two.
func TestSnapshotFromJSONReport(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var stream bytes.Buffer
	for _, f := range []string{"syncs_backtrace.sqlite.gz", "patterns_lean.sqlite.gz"} {
		an, err := analysis.Analyze(ctx, filepath.Join(fixturesDir, f), analysis.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := an.Report.WriteJSON(&stream); err != nil {
			t.Fatal(err)
		}
		an.Close()
	}
	jsonPath := filepath.Join(dir, "two.json")
	os.WriteFile(jsonPath, stream.Bytes(), 0o644)
	fromJSON, err := LoadSnapshot(ctx, jsonPath, Options{Analysis: noEstimate})
	if err != nil {
		t.Fatal(err)
	}
	exports := filepath.Join(dir, "exports")
	os.Mkdir(exports, 0o755)
	for _, f := range []string{"syncs_backtrace.sqlite.gz", "patterns_lean.sqlite.gz"} {
		copyFile(t, filepath.Join(fixturesDir, f), filepath.Join(exports, strings.TrimSuffix(f, ".gz")))
	}
	// The exports are estimated as the JSON reports were: savings match too.
	fromExports, err := LoadSnapshot(ctx, exports, Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if fromJSON.Traces != 2 || fromJSON.BlockedNs != fromExports.BlockedNs || len(fromJSON.Sites) != len(fromExports.Sites) {
		t.Fatalf("JSON snapshot %d traces, %d ns, %d sites; exports %d ns, %d sites", fromJSON.Traces, fromJSON.BlockedNs,
			len(fromJSON.Sites), fromExports.BlockedNs, len(fromExports.Sites))
	}
	if fromJSON.EstimatedSavingsNs <= 0 || fromJSON.EstimatedSavingsNs != fromExports.EstimatedSavingsNs {
		t.Errorf("estimated savings: JSON %d ns, exports %d ns", fromJSON.EstimatedSavingsNs, fromExports.EstimatedSavingsNs)
	}
	d := Compare(fromJSON, fromExports, 0)
	if d.Count(StatusSame) != len(d.Changes) {
		t.Errorf("JSON report and export differ: %+v", d.Changes)
	}
	for _, c := range d.Changes {
		if c.OldEstimatedSaving != c.NewEstimatedSaving {
			t.Errorf("site %s: estimated saving %d ns in the JSON, %d ns from the export", c.Fingerprint, c.OldEstimatedSaving, c.NewEstimatedSaving)
		}
	}
	var out bytes.Buffer
	if err := d.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	var back Diff
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back.Schema != DiffSchema || len(back.Changes) != len(d.Changes) {
		t.Errorf("diff JSON does not read back: %v", err)
	}

	if _, err := LoadSnapshot(ctx, filepath.Join(fixturesDir, "README.md"), Options{Analysis: noEstimate}); err == nil {
		t.Errorf("a Markdown file read as a report")
	}
}
