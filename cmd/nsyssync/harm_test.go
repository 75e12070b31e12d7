package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// harmEnv is a directory of exports and of what earlier commands wrote
// from them (a findings database, JSON Lines, a JSON report), for the
// commands that read those.
type harmEnv struct {
	exports    string // directory holding only the exports
	a, b       string // two exports in it
	out        string // where commands write
	db, jsonl  string // written by batch
	shardDB    string // a second findings database, for merge
	jsonReport string // written by analyze --format json
}

// newHarmEnv copies two fixtures into a directory of their own and runs
// the commands whose outputs other commands read.
func newHarmEnv(t *testing.T) *harmEnv {
	t.Helper()
	e := &harmEnv{exports: t.TempDir(), out: t.TempDir()}
	e.a = copyInto(t, e.exports, fixture, "backtrace.sqlite")
	e.b = copyInto(t, e.exports, "../../fixtures/syncs_lean.sqlite.gz", "lean.sqlite")
	e.db = filepath.Join(e.out, "triage.db")
	e.shardDB = filepath.Join(e.out, "shard.db")
	e.jsonl = filepath.Join(e.out, "night.jsonl")
	e.jsonReport = filepath.Join(e.out, "a.json")
	for _, args := range [][]string{
		{"batch", "--no-estimate", "--db", e.db, "--run", "n1", e.exports},
		{"batch", "--no-estimate", "--db", e.shardDB, "--run", "n2", e.a},
		{"batch", "--no-estimate", "--format", "jsonl", "-o", e.jsonl, e.exports},
		{"analyze", "--no-estimate", "--format", "json", "-o", e.jsonReport, e.a},
	} {
		if code, _, errOut := runCLI(t, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	return e
}

// fileState is what a command must not change about a file it reads.
type fileState struct {
	data  []byte
	mtime time.Time
	mode  os.FileMode
}

func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{data: data, mtime: st.ModTime(), mode: st.Mode()}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestCommandsLeaveInputsUnchanged runs every command that reads an
// export, or what batch and analyze wrote from exports, and checks that
// its inputs keep their bytes, modification time and mode, and that
// nothing appears beside the exports (no -wal, -shm or -journal file, no
// temporary file).
func TestCommandsLeaveInputsUnchanged(t *testing.T) {
	e := newHarmEnv(t)
	o := func(name string) string { return filepath.Join(e.out, name) }
	tests := []struct {
		name   string
		args   []string
		inputs []string // files beside the exports that must not change
		code   int
	}{
		{"analyze text", []string{"analyze", e.a, e.b}, nil, exitOK},
		{"analyze markdown", []string{"analyze", "--format", "markdown", "--nvtx", "measured", e.a}, nil, exitOK},
		{"analyze json", []string{"analyze", "--format", "json", "--top", "2", e.a, e.b}, nil, exitOK},
		{"analyze html", []string{"analyze", "--format", "html", "-o", o("a.html"), e.a}, nil, exitOK},
		{"analyze perfetto", []string{"analyze", "--format", "perfetto", "-o", o("a.perfetto.json"), e.a}, nil, exitOK},
		{"analyze gate", []string{"analyze", "--no-estimate", "--fail-on-savings", "100", e.b}, nil, exitOK},
		{"analyze missing range", []string{"analyze", "--nvtx", "absent", e.a}, nil, exitError},
		{"doctor text", []string{"doctor", e.a, e.b}, nil, exitOK},
		{"doctor json", []string{"doctor", "--format", "json", e.a}, nil, exitOK},
		{"batch text", []string{"batch", "--jobs", "2", e.exports}, nil, exitOK},
		{"batch jsonl and db", []string{"batch", "--format", "jsonl", "--db", o("new.db"), "-o", o("b.jsonl"), e.a, e.b}, nil, exitOK},
		{"batch json shard", []string{"batch", "--format", "json", "--shard", "0/2", e.exports}, nil, exitOK},
		{"diff exports", []string{"diff", e.a, e.b}, nil, exitOK},
		{"diff directory and report", []string{"diff", "--format", "json", e.exports, e.jsonReport}, []string{e.jsonReport}, exitOK},
		{"diff jsonl", []string{"diff", e.jsonl, e.jsonl}, []string{e.jsonl}, exitOK},
		{"diff runs", []string{"diff", "--db", e.db, "n1", e.b}, []string{e.db}, exitOK},
		{"history top", []string{"history", "--db", e.db}, []string{e.db}, exitOK},
		{"history runs", []string{"history", "--db", e.db, "--runs", "--format", "json"}, []string{e.db}, exitOK},
		{"merge jsonl", []string{"merge", "-o", o("merged.jsonl"), e.jsonl}, []string{e.jsonl}, exitOK},
		{"merge databases", []string{"merge", "--db", o("merged.db"), e.db, e.shardDB}, []string{e.db, e.shardDB}, exitOK},
		{"replay", []string{"replay", "--repeat", "1", e.a}, nil, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := append([]string{e.a, e.b}, tc.inputs...)
			before := make([]fileState, len(files))
			for i, f := range files {
				before[i] = stateOf(t, f)
			}
			listing := listDir(t, e.exports)
			code, _, errOut := runCLI(t, tc.args...)
			if tc.code >= 0 && code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			if strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine ") {
				t.Errorf("stack trace in stderr: %s", errOut)
			}
			for i, f := range files {
				after := stateOf(t, f)
				if !bytes.Equal(before[i].data, after.data) || !before[i].mtime.Equal(after.mtime) || before[i].mode != after.mode {
					t.Errorf("%s changed", f)
				}
			}
			if got := listDir(t, e.exports); !slices.Equal(got, listing) {
				t.Errorf("files beside the exports: %v, before %v", got, listing)
			}
		})
	}
}
