package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/contract"
	"github.com/nsyssync/nsyssync/report"
	"github.com/nsyssync/nsyssync/triage"
)

// siteFacts is what every command reports of a site: by fingerprint, its
// syncs, blocked time, estimated savings and verdict.
type siteFacts struct {
	Count      int
	BlockedNs  int64
	SavingsNs  int64
	Dependency string
	Category   string
}

// factsOfDocument folds a document's sites by fingerprint, as a snapshot
// does.
func factsOfDocument(d *contract.Document) map[string]siteFacts {
	out := map[string]siteFacts{}
	for _, s := range d.Sites {
		f := out[s.Fingerprint]
		f.Count += s.Count
		f.BlockedNs += s.BlockedNs
		f.SavingsNs += s.EstimatedSavingsNs
		f.Dependency, f.Category = s.Dependency, s.Category
		out[s.Fingerprint] = f
	}
	return out
}

// decode reads a command's JSON output into v.
func decode(t *testing.T, what, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, out)
	}
}

// mustRun runs a command line that must exit 0.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// TestCommandsAgree: analyze, batch (JSON Lines and its JSON summary),
// history (from the findings database batch --db wrote) and diff (of the
// export against analyze's JSON and against the recorded run) give the
// same sites, verdicts and estimated savings for the same export, and
// doctor the same numbers of syncs and sites, since all of them analyse
// it through package analysis.
func TestCommandsAgree(t *testing.T) {
	src := []string{"--source-root", "../../fixtures/programs"}
	for _, tc := range []struct {
		fixture   string
		estimated bool // the fixture has savings to compare
	}{
		{"syncs_backtrace.sqlite.gz", true},
		{"patterns_lean.sqlite.gz", true},
		{"multiproc_lean.sqlite.gz", true},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			dir := t.TempDir()
			export := copyInto(t, dir, filepath.Join("../../fixtures", tc.fixture), strings.TrimSuffix(tc.fixture, ".gz"))
			with := func(args ...string) []string { return append(append(args, src...), export) }

			var doc contract.Document
			analyzed := mustRun(t, with("analyze", "--format", "json")...)
			decode(t, "analyze", analyzed, &doc)
			want := factsOfDocument(&doc)
			if len(want) == 0 || (doc.Totals.EstimatedSavingsNs > 0) != tc.estimated {
				t.Fatalf("analyze: %d sites, estimated savings %d ns", len(want), doc.Totals.EstimatedSavingsNs)
			}
			check := func(who string, got map[string]siteFacts) {
				t.Helper()
				if len(got) != len(want) {
					t.Errorf("%s: %d sites, analyze %d", who, len(got), len(want))
				}
				for fp, w := range want {
					if g, ok := got[fp]; !ok || g != w {
						t.Errorf("%s: site %s is %+v, analyze says %+v", who, fp, g, w)
					}
				}
			}

			// doctor: the same syncs and sites (it reads no sources and
			// does not estimate, which changes neither).
			var diag report.Diagnosis
			decode(t, "doctor", mustRun(t, "doctor", "--format", "json", export), &diag)
			if diag.Syncs != doc.Totals.Syncs || diag.Sites != len(doc.Sites) {
				t.Errorf("doctor: %d syncs, %d sites; analyze %d, %d", diag.Syncs, diag.Sites, doc.Totals.Syncs, len(doc.Sites))
			}

			// batch --format jsonl: the same document, site by site.
			var line triage.Line
			decode(t, "batch jsonl", mustRun(t, with("batch", "--format", "jsonl")...), &line)
			check("batch jsonl", factsOfDocument(&line.Document))
			lineTotals, _ := json.Marshal(line.Totals)
			docTotals, _ := json.Marshal(doc.Totals)
			if string(lineTotals) != string(docTotals) || len(line.Sites) != len(doc.Sites) {
				t.Errorf("batch jsonl totals %s, analyze %s", lineTotals, docTotals)
			}
			for i := range min(len(line.Sites), len(doc.Sites)) {
				if a, b := line.Sites[i], doc.Sites[i]; a.ID != b.ID || a.Fingerprint != b.Fingerprint || a.EstimatedSavingsNs != b.EstimatedSavingsNs {
					t.Errorf("batch jsonl site %d is %s %s (%d ns), analyze's %s %s (%d ns)", i, a.ID, a.Fingerprint, a.EstimatedSavingsNs, b.ID, b.Fingerprint, b.EstimatedSavingsNs)
				}
			}

			// batch --format json: the summary's sites and totals.
			var sum triage.SummaryReport
			decode(t, "batch json", mustRun(t, with("batch", "--format", "json", "--top", "0")...), &sum)
			got := map[string]siteFacts{}
			for _, s := range sum.TopSites {
				got[s.Fingerprint] = siteFacts{s.Count, s.BlockedNs, s.EstimatedSavingsNs, s.Dependency, s.Category}
			}
			check("batch json", got)
			if sum.EstimatedSavingsNs != doc.Totals.EstimatedSavingsNs || sum.BlockedNs != doc.Totals.BlockedNs || sum.Syncs != doc.Totals.Syncs {
				t.Errorf("batch json totals: %d syncs, %d ns blocked, %d ns saved; analyze %+v", sum.Syncs, sum.BlockedNs, sum.EstimatedSavingsNs, doc.Totals)
			}

			// history, from the run batch --db recorded.
			db := filepath.Join(t.TempDir(), "triage.db")
			mustRun(t, with("batch", "--db", db, "--run", "night")...)
			var hist []triage.SiteHistory
			decode(t, "history", mustRun(t, "history", "--db", db, "--top", "0", "--format", "json"), &hist)
			got = map[string]siteFacts{}
			for _, h := range hist {
				if len(h.Points) != 1 {
					t.Fatalf("history of %s: %d runs, want 1", h.Fingerprint, len(h.Points))
				}
				p := h.Points[0]
				got[h.Fingerprint] = siteFacts{p.Count, p.BlockedNs, p.EstimatedSavingsNs, p.Dependency, p.Category}
			}
			check("history", got)

			// diff: the export against analyze's report and against the
			// recorded run, nothing changed, savings included.
			report := filepath.Join(t.TempDir(), "report.json")
			writeFile(t, report, analyzed)
			for _, sides := range [][]string{{report, export}, {"--db", db, "night", export}} {
				var d triage.Diff
				args := append(append([]string{"diff", "--format", "json"}, src...), sides...)
				decode(t, "diff", mustRun(t, args...), &d)
				got = map[string]siteFacts{}
				for _, c := range d.Changes {
					if c.Status != triage.StatusSame || c.OldEstimatedSaving != c.NewEstimatedSaving || c.OldBlockedNs != c.NewBlockedNs {
						t.Errorf("diff %s: site %s changed: %+v", strings.Join(sides, " "), c.Fingerprint, c)
					}
					got[c.Fingerprint] = siteFacts{c.NewCount, c.NewBlockedNs, c.NewEstimatedSaving, c.Dependency, c.Category}
				}
				check("diff "+strings.Join(sides, " "), got)
				if d.New.EstimatedSavingsNs != doc.Totals.EstimatedSavingsNs || d.Old.EstimatedSavingsNs != d.New.EstimatedSavingsNs {
					t.Errorf("diff %s: estimated savings %d → %d ns, analyze %d", strings.Join(sides, " "), d.Old.EstimatedSavingsNs, d.New.EstimatedSavingsNs, doc.Totals.EstimatedSavingsNs)
				}
			}
		})
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
