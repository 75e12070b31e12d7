package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/triage"
)

// batchFixtures are real exports the batch tests copy into a night.
var batchFixtures = []string{"syncs_lean.sqlite.gz", "syncs_autograd.sqlite.gz", "syncs_backtrace.sqlite.gz", "multiproc_lean.sqlite.gz", "patterns_lean.sqlite.gz"}

// copyInto copies the export src into dir/name and returns its path; a
// gzipped src (NAME.sqlite.gz, as the fixtures are stored) is
// decompressed unless name ends in .gz too.
func copyInto(t *testing.T, dir, src, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(src, ".gz") && !strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
	}
	dst := filepath.Join(dir, name)
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// night makes a directory of real fixtures and, when corrupt is set, a
// truncated copy of one among them.
func night(t *testing.T, corrupt bool) (dir string, good []string, bad string) {
	t.Helper()
	dir = t.TempDir()
	for _, f := range batchFixtures {
		good = append(good, copyInto(t, dir, filepath.Join("../../fixtures", f), strings.TrimSuffix(f, ".gz")))
	}
	if corrupt {
		b, _ := os.ReadFile(good[0])
		bad = filepath.Join(dir, "cut_short.sqlite")
		os.WriteFile(bad, b[:len(b)/2], 0o644)
	}
	return dir, good, bad
}

func TestBatchCommand(t *testing.T) {
	dir, good, bad := night(t, true)

	code, out, errOut := runCLI(t, "batch", "--jobs", "3", dir)
	if code != exitError {
		t.Fatalf("a night with a corrupt export: exit %d, want %d (stderr %q)", code, exitError, errOut)
	}
	for _, g := range good {
		if !strings.Contains(out, g) {
			t.Errorf("summary lacks %s:\n%s", g, out)
		}
	}
	if !strings.Contains(errOut, bad+": truncated") || !strings.Contains(out, "FAILED") ||
		!strings.Contains(out, "6 inputs: 5 analysed, 1 failed") {
		t.Errorf("the corrupt export is not reported:\nstdout %s\nstderr %s", out, errOut)
	}

	code, out, _ = runCLI(t, "batch", "--format", "json", "--top", "3", filepath.Join(dir, "syncs_*.sqlite"))
	var sum triage.SummaryReport
	if code != exitOK || json.Unmarshal([]byte(out), &sum) != nil || sum.Analysed != 3 || len(sum.TopSites) != 3 || sum.Schema != triage.SummarySchema {
		t.Errorf("all good, JSON: exit %d, %+v", code, sum)
	}

	code, out, errOut = runCLI(t, "batch", "--format", "jsonl", dir)
	lines := jsonLines(t, out)
	if code != exitError || len(lines) != len(good)+1 || !strings.Contains(errOut, "6 inputs: 5 analysed, 1 failed") {
		t.Fatalf("jsonl: exit %d, %d lines, stderr %q", code, len(lines), errOut)
	}
	for _, l := range lines {
		if l.Trace.Path == bad {
			if l.Error == "" || len(l.Sites) != 0 {
				t.Errorf("failed line: %+v", l)
			}
		} else if l.Error != "" || l.Totals.Syncs != len(l.Syncs) || l.Totals.Syncs == 0 {
			t.Errorf("%s: %d syncs for totals %d, error %q", l.Trace.Path, len(l.Syncs), l.Totals.Syncs, l.Error)
		}
	}
}

func jsonLines(t *testing.T, s string) []triage.Line {
	t.Helper()
	var out []triage.Line
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var l triage.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line is not JSON: %v", err)
		}
		out = append(out, l)
	}
	return out
}

func TestBatchShards(t *testing.T) {
	dir, good, bad := night(t, true)
	var got []string
	for _, shard := range []string{"0/3", "1/3", "2/3"} {
		_, out, _ := runCLI(t, "batch", "--shard", shard, "--format", "jsonl", dir)
		for _, l := range jsonLines(t, out) {
			got = append(got, l.Trace.Path)
		}
	}
	want := append(slices.Clone(good), bad)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("shards together analysed %v, want each of %v once", got, want)
	}
}

func TestBatchFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"batch"},
		{"batch", "--format", "html", "x.sqlite"},
		{"batch", "--jobs", "0", "x.sqlite"},
		{"batch", "--shard", "4/4", "x.sqlite"},
		{"batch", "--shard", "one", "x.sqlite"},
		{"batch", "--run", "night", "x.sqlite"},
		{"diff", "a.json"},
		{"diff", "--format", "md", "a.json", "b.json"},
		{"history", "--runs", "abc"},
		{"history", "--runs", "--top", "3"},
		{"merge"},
	} {
		if code, _, errOut := runCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, errOut)
		}
	}
}
