package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/triage"
)

func TestHistoryCommand(t *testing.T) {
	db, nights := recordNights(t)

	// A site both nights have: the lean night's cudaFree inside measured > iter#.
	_, out, _ := runCLI(t, "analyze", "--format", "json", nights[0])
	var doc struct {
		Sites []struct {
			Fingerprint string   `json:"fingerprint"`
			APIs        []string `json:"apis"`
			NVTX        []string `json:"nvtx"`
			BlockedNs   int64    `json:"blocked_ns"`
		} `json:"sites"`
	}
	json.Unmarshal([]byte(out), &doc)
	fp, blocked := "", int64(0)
	for _, s := range doc.Sites {
		if strings.Join(s.APIs, "+") == "cudaFree" && len(s.NVTX) == 2 {
			fp, blocked = s.Fingerprint, s.BlockedNs
		}
	}
	if fp == "" {
		t.Fatal("the lean fixture has no cudaFree site in measured > iter#")
	}

	code, out, errOut := runCLI(t, "history", "--db", db, "--format", "json", fp[:6])
	var h triage.SiteHistory
	if code != exitOK || json.Unmarshal([]byte(out), &h) != nil {
		t.Fatalf("history: exit %d: %s", code, errOut)
	}
	if h.Fingerprint != fp || len(h.Points) != 2 || h.Points[0].BlockedNs != blocked || h.Points[1].Traces != 1 || h.Points[0].Run.Label != "monday" {
		t.Errorf("history of %s: %+v", fp, h)
	}
	code, out, _ = runCLI(t, "history", "--db", db, fp)
	if code != exitOK || !strings.Contains(out, "monday") || !strings.Contains(out, "tuesday") || !strings.Contains(out, "cudaFree") {
		t.Errorf("history text: exit %d\n%s", code, out)
	}

	code, out, _ = runCLI(t, "history", "--db", db, "--top", "3")
	if code != exitOK || strings.Count(out, "→") != 3 {
		t.Errorf("top: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "history", "--db", db, "--runs")
	if code != exitOK || !strings.Contains(out, "monday") || !strings.Contains(out, "tuesday") {
		t.Errorf("runs: exit %d\n%s", code, out)
	}

	if code, _, errOut = runCLI(t, "history", "--db", db, "no_such_file.py:1"); code != exitError || !strings.Contains(errOut, "no site matches") {
		t.Errorf("unknown site: exit %d: %s", code, errOut)
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	if code, _, errOut = runCLI(t, "history", "--db", missing, "--runs"); code != exitError || !strings.Contains(errOut, "no findings database") {
		t.Errorf("missing database: exit %d: %s", code, errOut)
	}
}
