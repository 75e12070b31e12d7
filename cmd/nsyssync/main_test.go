package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/contract"
)

const fixture = "../../fixtures/syncs_backtrace.sqlite.gz"

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// unchanged records a file's bytes and modification time and checks them
// again when the test ends.
func unchanged(t *testing.T, path string) {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		return
	}
	st, _ := os.Stat(path)
	t.Cleanup(func() {
		after, _ := os.ReadFile(path)
		st2, _ := os.Stat(path)
		if !bytes.Equal(before, after) || !st.ModTime().Equal(st2.ModTime()) {
			t.Errorf("%s changed", path)
		}
	})
}

func TestAnalyzeText(t *testing.T) {
	unchanged(t, fixture)
	code, out, errOut := runCLI(t, "analyze", fixture)
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"NVIDIA H100 80GB HBM3", "host syncs", "SITES", "LONGEST SYNCS", "syncs.py:18 log_loss", "cudaMemcpyAsync+cudaStreamSynchronize"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
}

func TestAnalyzeJSON(t *testing.T) {
	unchanged(t, fixture)
	code, out, errOut := runCLI(t, "analyze", "--format", "json", "--nvtx", "measured", "--source-root", "../../fixtures/programs", fixture)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc contract.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	if doc.Schema != "nsyssync/v1" || doc.Trace.Region.Name != "measured" || doc.Trace.Region.DurationNs <= 0 {
		t.Errorf("header: %+v", doc.Trace)
	}
	if doc.Totals.Syncs != len(doc.Syncs) || doc.Totals.Syncs == 0 {
		t.Errorf("totals.syncs %d, syncs %d", doc.Totals.Syncs, len(doc.Syncs))
	}
	if doc.Totals.EstimatedSavingsNs <= 0 || doc.Totals.FalseDependencySavingsNs <= 0 || doc.Totals.EstimateSelfCheckError == nil {
		t.Errorf("totals lack the estimates: %+v", doc.Totals)
	}
	var counted int
	var blocked int64
	ids := map[string]bool{}
	for i, s := range doc.Sites {
		counted += s.Count
		blocked += s.BlockedNs
		ids[s.ID] = true
		// With backtraces and the program's source every site of this
		// fixture gets a verdict backed by evidence and a fix, but for
		// `return y.cpu()`, whose line does not say what the caller does
		// with the data (a copy to the host is not called false then).
		undecided := s.Dependency == "unknown" && s.Category != "device-to-host-copy"
		if undecided || s.Category == "unknown" || len(s.Evidence) == 0 || s.Fix == "" ||
			(s.Dependency != "unknown" && (s.Confidence <= 0 || s.Confidence > 1)) {
			t.Errorf("site %s: want a verdict with evidence and a fix: %+v", s.ID, s)
		}
		if i > 0 && s.EstimatedSavingsNs > doc.Sites[i-1].EstimatedSavingsNs {
			t.Errorf("sites not sorted by estimated savings")
		}
		// A rewrite may cost a little (a stream sync becomes wait_stream
		// calls), never more than the site blocked.
		if s.EstimatedSavingsNs < -s.BlockedNs || s.EstimatedSavingsFraction > 1 {
			t.Errorf("site %s: estimated saving %d ns (%g) out of range", s.ID, s.EstimatedSavingsNs, s.EstimatedSavingsFraction)
		}
		if s.Location.File == "" || s.Location.Line == 0 {
			t.Errorf("site %s has no Python location: %+v", s.ID, s.Location)
		}
	}
	if counted != len(doc.Syncs) || blocked != doc.Totals.BlockedNs {
		t.Errorf("sites count %d syncs and %d ns, totals %d and %d", counted, blocked, len(doc.Syncs), doc.Totals.BlockedNs)
	}
	for _, s := range doc.Syncs {
		if !ids[s.Site] {
			t.Errorf("sync %s names unknown site %q", s.ID, s.Site)
		}
		if s.StartNs < doc.Trace.Region.StartNs || s.StartNs >= doc.Trace.Region.EndNs {
			t.Errorf("sync %s outside the region", s.ID)
		}
		if len(s.NVTX) == 0 || s.NVTX[0] != "measured" {
			t.Errorf("sync %s: NVTX path %v does not start with the region", s.ID, s.NVTX)
		}
	}
}

func TestErrorsAndExitCodes(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		stderr   string
		stdoutOK bool
	}{
		{"no arguments", []string{"analyze"}, exitUsage, "requires at least 1 arg", false},
		{"bad format", []string{"analyze", "--format", "xml", fixture}, exitUsage, "unknown --format", false},
		{"text file", []string{"analyze", text}, exitError, "nsyssync: " + text + ": not an SQLite database", false},
		{"one bad among good", []string{"analyze", fixture, text}, exitError, "nsyssync: " + text + ": not an SQLite database", true},
		{"missing NVTX range", []string{"analyze", "--nvtx", "nope@nowhere", fixture}, exitError, `NVTX range "nope@nowhere" not found`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			unchanged(t, fixture)
			unchanged(t, text)
			code, out, errOut := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tc.stderr) {
				t.Errorf("stderr %q, want one line with %q", errOut, tc.stderr)
			}
			if tc.stdoutOK != strings.Contains(out, "host syncs") {
				t.Errorf("stdout report present = %v, want %v", !tc.stdoutOK, tc.stdoutOK)
			}
			if strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine") {
				t.Errorf("stack trace in stderr: %s", errOut)
			}
		})
	}
}
