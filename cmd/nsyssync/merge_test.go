package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/triage"
)

// Shards write JSON Lines and databases; merge puts the night back
// together, in a file and in one run of a database.
func TestMergeCommand(t *testing.T) {
	dir, good, _ := night(t, true)
	out := t.TempDir()
	var lineFiles, dbFiles []string
	for i := range 2 {
		shard := fmt.Sprintf("%d/2", i)
		lf := filepath.Join(out, fmt.Sprintf("shard-%d.jsonl", i))
		df := filepath.Join(out, fmt.Sprintf("shard-%d.db", i))
		runCLI(t, "batch", "--shard", shard, "--format", "jsonl", "-o", lf, "--db", df, "--run", "night", dir)
		lineFiles = append(lineFiles, lf)
		dbFiles = append(dbFiles, df)
	}

	merged := filepath.Join(out, "night.jsonl")
	mergedDB := filepath.Join(out, "from-lines.db")
	code, _, errOut := runCLI(t, append([]string{"merge", "-o", merged, "--db", mergedDB, "--run", "night"}, lineFiles...)...)
	if code != exitOK || !strings.Contains(errOut, fmt.Sprintf("%d traces (1 failed)", len(good)+1)) {
		t.Fatalf("merge lines: exit %d: %s", code, errOut)
	}
	b, _ := os.ReadFile(merged)
	if lines := jsonLines(t, string(b)); len(lines) != len(good)+1 {
		t.Errorf("%d merged lines, want %d", len(lines), len(good)+1)
	}

	dst := filepath.Join(out, "triage.db")
	code, _, errOut = runCLI(t, append([]string{"merge", "--db", dst}, dbFiles...)...)
	if code != exitOK {
		t.Fatalf("merge databases: exit %d: %s", code, errOut)
	}
	for _, db := range []string{dst, mergedDB} {
		_, out, _ := runCLI(t, "history", "--db", db, "--runs", "--format", "json")
		var runs []triage.Run
		json.Unmarshal([]byte(out), &runs)
		if len(runs) != 1 || runs[0].Label != "night" || runs[0].Traces != len(good) || runs[0].Failed != 1 {
			t.Errorf("%s: want one run 'night' of %d traces and 1 failure: %+v", db, len(good), runs)
		}
	}
	// The run merged from databases and the run merged from lines agree.
	code, diff, errOut := runCLI(t, "diff", "--db", dst, "--fail-on-regression", "0", "night", "night")
	if code != exitOK || !strings.Contains(diff, "0 new, 0 grown, 0 shrunk, 0 gone") {
		t.Errorf("merged run against itself: exit %d\n%s%s", code, diff, errOut)
	}

	for _, args := range [][]string{
		{"merge", dbFiles[0]},                            // databases need --db
		{"merge", "--db", dst, dbFiles[0], lineFiles[0]}, // mixed
		{"merge", "--db", dst, dst},                      // input is the output
	} {
		if code, _, errOut := runCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "merge", filepath.Join(out, "absent.jsonl")); code != exitError || !strings.Contains(errOut, "absent.jsonl") {
		t.Errorf("merging a missing file: exit %d: %s", code, errOut)
	}
}
