package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/triage"
)

// recordNights records two nights in a findings database: the same
// program profiled lean, then with autograd NVTX (a night in which a
// 136 ms device synchronize appears).
func recordNights(t *testing.T) (db string, nights [2]string) {
	t.Helper()
	db = filepath.Join(t.TempDir(), "triage.db")
	for i, f := range []string{"syncs_lean.sqlite.gz", "syncs_autograd.sqlite.gz"} {
		dir := t.TempDir()
		nights[i] = copyInto(t, dir, filepath.Join("../../fixtures", f), "nightly.sqlite")
		if code, _, errOut := runCLI(t, "batch", "--db", db, "--run", []string{"monday", "tuesday"}[i], dir); code != exitOK {
			t.Fatalf("recording night %d: exit %d: %s", i, code, errOut)
		}
	}
	return db, nights
}

func TestDiffCommand(t *testing.T) {
	db, nights := recordNights(t)

	code, out, errOut := runCLI(t, "diff", "--db", db, "--format", "json", "previous", "latest")
	var d triage.Diff
	if code != exitOK || json.Unmarshal([]byte(out), &d) != nil {
		t.Fatalf("diff of runs: exit %d, %s", code, errOut)
	}
	if d.Old.Label != "run 1 (monday)" || d.Count(triage.StatusNew) == 0 || d.Count(triage.StatusGone) == 0 || d.TotalChangePct < 100 {
		t.Errorf("diff of runs: %+v", d)
	}

	// The same two nights as exports and as JSON reports give the same diff.
	code, out2, _ := runCLI(t, "diff", "--format", "json", nights[0], nights[1])
	var fromExports triage.Diff
	json.Unmarshal([]byte(out2), &fromExports)
	jsonDir := t.TempDir()
	var reports [2]string
	for i, n := range nights {
		_, js, _ := runCLI(t, "analyze", "--format", "json", n)
		reports[i] = filepath.Join(jsonDir, []string{"old.json", "new.json"}[i])
		os.WriteFile(reports[i], []byte(js), 0o644)
	}
	_, out3, _ := runCLI(t, "diff", "--format", "json", reports[0], reports[1])
	var fromJSON triage.Diff
	json.Unmarshal([]byte(out3), &fromJSON)
	if code != exitOK || len(fromExports.Changes) != len(d.Changes) || len(fromJSON.Changes) != len(d.Changes) ||
		fromJSON.TotalChangePct != d.TotalChangePct || fromExports.New.BlockedNs != d.New.BlockedNs {
		t.Errorf("diffs of runs, exports and JSON reports disagree: %d, %d, %d changes", len(d.Changes), len(fromExports.Changes), len(fromJSON.Changes))
	}

	// The CI gate: the second night regressed, the first against itself did not.
	code, out, errOut = runCLI(t, "diff", "--db", db, "--fail-on-regression", "5", "monday", "tuesday")
	if code != exitRegression || !strings.Contains(errOut, "regression: total host-blocked time grew") || !strings.Contains(out, "new") {
		t.Errorf("regression gate: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut = runCLI(t, "diff", "--fail-on-regression", "0", reports[0], nights[0]); code != exitOK {
		t.Errorf("a night against itself: exit %d: %s", code, errOut)
	}
	if code, _, errOut = runCLI(t, "diff", "--db", db, "1", "sunday"); code != exitError || !strings.Contains(errOut, "no such run") {
		t.Errorf("unknown run: exit %d: %s", code, errOut)
	}
	if code, _, errOut = runCLI(t, "diff", "latest", nights[0]); code != exitError || !strings.Contains(errOut, "give --db") {
		t.Errorf("run id without --db: exit %d: %s", code, errOut)
	}
}

// TestDiffReportAgainstItsExport: the JSON report analyze writes of an
// export and the export itself compare as unchanged, estimated savings
// included (diff estimates an export as analyze does), with and without
// an NVTX range and --no-estimate on both sides.
func TestDiffReportAgainstItsExport(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, fixture string
		flags         []string // given to analyze and diff alike
		estimated     bool
		gzipped       bool // diff reads the gzipped export as it is
	}{
		{"backtraces", "syncs_backtrace.sqlite.gz", nil, true, false},
		{"backtraces, the export gzipped", "syncs_backtrace.sqlite.gz", nil, true, true},
		{"backtraces, nvtx measured", "syncs_backtrace.sqlite.gz", []string{"--nvtx", "measured"}, true, false},
		{"autograd", "syncs_autograd.sqlite.gz", nil, true, false},
		{"no estimate", "syncs_backtrace.sqlite.gz", []string{"--no-estimate"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A plain copy, or the gzipped export itself: diff tells either
			// from a JSON report by its first bytes.
			name := strings.TrimSuffix(tc.fixture, ".gz")
			if tc.gzipped {
				name = tc.fixture
			}
			export := copyInto(t, t.TempDir(), filepath.Join("../../fixtures", tc.fixture), name)
			unchanged(t, export)
			code, js, errOut := runCLI(t, append(append([]string{"analyze", "--format", "json"}, tc.flags...), export)...)
			if code != exitOK {
				t.Fatalf("analyze: exit %d: %s", code, errOut)
			}
			report := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			if err := os.WriteFile(report, []byte(js), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runCLI(t, append(append([]string{"diff", "--format", "json", "--fail-on-regression", "0"}, tc.flags...), report, export)...)
			var d triage.Diff
			if code != exitOK || errOut != "" || json.Unmarshal([]byte(out), &d) != nil {
				t.Fatalf("diff: exit %d: %s\n%s", code, errOut, out)
			}
			if d.Old.EstimatedSavingsNs != d.New.EstimatedSavingsNs || (d.Old.EstimatedSavingsNs > 0) != tc.estimated {
				t.Errorf("estimated savings: report %d ns, export %d ns (estimated: want %v)", d.Old.EstimatedSavingsNs, d.New.EstimatedSavingsNs, tc.estimated)
			}
			if d.Old.Syncs != d.New.Syncs || d.Old.BlockedNs != d.New.BlockedNs || d.TotalChangePct != 0 || len(d.Changes) == 0 {
				t.Errorf("sides: report %+v, export %+v, total %+.2f%%", d.Old, d.New, d.TotalChangePct)
			}
			for _, c := range d.Changes {
				if c.Status != triage.StatusSame || c.DeltaNs != 0 || c.OldCount != c.NewCount || c.OldEstimatedSaving != c.NewEstimatedSaving {
					t.Errorf("site %s changed: %+v", c.Fingerprint, c)
				}
			}
			// The text says so too.
			code, text, _ := runCLI(t, append(append([]string{"diff"}, tc.flags...), report, export)...)
			if code != exitOK || !strings.Contains(text, "total  +0.0%") || !strings.Contains(text, "0 new, 0 grown, 0 shrunk, 0 gone") {
				t.Errorf("diff text:\n%s", text)
			}
		})
	}
}
