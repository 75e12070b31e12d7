package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodes runs every command through its failure modes and checks
// the exit code of the README's table: 2 for a command line that cannot
// run (a usage error), 1 for a run that failed, 3 for a gate; and that a
// failure says so in one line on stderr naming the file, path or flag at
// fault (never a temporary file).
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.sqlite")
	notes := filepath.Join(dir, "notes.txt")
	badYAML := filepath.Join(dir, "allow.yaml")
	writeFile(t, notes, "not a database\n")
	writeFile(t, badYAML, "sites:\n  - nope: [\n")
	// Plain copies of the gzipped fixtures: diff and merge tell an export
	// or a database from a JSON report by SQLite's header.
	lean := copyInto(t, dir, "../../fixtures/syncs_lean.sqlite.gz", "syncs_lean.sqlite")
	autograd := copyInto(t, dir, "../../fixtures/syncs_autograd.sqlite.gz", "syncs_autograd.sqlite")
	// -o into a directory that does not exist, relative as a user types it.
	const noDir = "missing/dir/x.txt"

	tests := []struct {
		name string
		args []string
		code int
		want string // in the first line of stderr
	}{
		{"unknown command", []string{"nosuch"}, exitUsage, `unknown command "nosuch"`},

		{"analyze: no arguments", []string{"analyze"}, exitUsage, "requires at least 1 arg"},
		{"analyze: unknown flag", []string{"analyze", "--nope", lean}, exitUsage, "--nope"},
		{"analyze: bad --format", []string{"analyze", "--format", "xml", lean}, exitUsage, `--format "xml"`},
		{"analyze: --source-root not a directory", []string{"analyze", "--source-root", notes, lean}, exitUsage, notes},
		{"analyze: invalid allow-list", []string{"analyze", "--allow-list", badYAML, lean}, exitUsage, badYAML},
		{"analyze: missing file", []string{"analyze", missing}, exitError, missing},
		{"analyze: not SQLite", []string{"analyze", notes}, exitError, notes},
		{"analyze: -o into a missing directory", []string{"analyze", "-o", noDir, lean}, exitError, noDir},
		{"analyze: bad calibration", []string{"analyze", "--calibration", notes, lean}, exitError, notes},
		{"analyze: NVTX range not there", []string{"analyze", "--nvtx", "nope@nowhere", lean}, exitError, lean},
		{"analyze: gate", []string{"analyze", "--fail-on-savings", "0", fixture}, exitGate, fixture},

		{"batch: unknown flag", []string{"batch", "--nope", lean}, exitUsage, "--nope"},
		{"batch: bad --shard", []string{"batch", "--shard", "3/2", lean}, exitUsage, "--shard"},
		{"batch: --run without --db", []string{"batch", "--run", "x", lean}, exitUsage, "--db"},
		{"batch: missing file", []string{"batch", "--no-estimate", missing}, exitError, missing},
		{"batch: not SQLite", []string{"batch", "--no-estimate", notes}, exitError, notes},
		{"batch: -o into a missing directory", []string{"batch", "-o", noDir, lean}, exitError, noDir},
		{"batch: --db not a database", []string{"batch", "--db", notes, lean}, exitError, notes},

		{"diff: one argument", []string{"diff", lean}, exitUsage, "accepts 2 arg(s)"},
		{"diff: bad --format", []string{"diff", "--format", "xml", lean, lean}, exitUsage, `--format "xml"`},
		{"diff: missing file", []string{"diff", missing, lean}, exitError, missing},
		{"diff: not a report", []string{"diff", notes, lean}, exitError, notes},
		{"diff: --db missing", []string{"diff", "--db", missing, "latest", lean}, exitError, missing},
		{"diff: regression gate", []string{"diff", "--no-estimate", "--fail-on-regression", "5", lean, autograd}, exitRegression, "regression"},

		{"history: unknown flag", []string{"history", "--nope"}, exitUsage, "--nope"},
		{"history: SITE and --runs", []string{"history", "--db", notes, "--runs", "x"}, exitUsage, "give one of"},
		{"history: missing database", []string{"history", "--db", missing}, exitError, missing},
		{"history: not a database", []string{"history", "--db", notes}, exitError, notes},

		{"merge: no arguments", []string{"merge"}, exitUsage, "requires at least 1 arg"},
		{"merge: databases without --db", []string{"merge", lean}, exitUsage, "--db"},
		{"merge: missing file", []string{"merge", missing}, exitError, missing},
		{"merge: not JSON Lines", []string{"merge", notes}, exitError, notes},
		{"merge: -o into a missing directory", []string{"merge", "-o", noDir, notes}, exitError, noDir},

		{"doctor: no arguments", []string{"doctor"}, exitUsage, "requires at least 1 arg"},
		{"doctor: bad --format", []string{"doctor", "--format", "xml", lean}, exitUsage, `--format "xml"`},
		{"doctor: missing file", []string{"doctor", missing}, exitError, missing},
		{"doctor: not SQLite", []string{"doctor", notes}, exitError, notes},

		{"replay: two files", []string{"replay", lean, lean}, exitUsage, "accepts 1 arg(s)"},
		{"replay: bad --repeat", []string{"replay", "--repeat", "0", lean}, exitUsage, "--repeat 0"},
		{"replay: missing file", []string{"replay", missing}, exitError, missing},
		{"replay: not SQLite", []string{"replay", notes}, exitError, notes},
		{"replay: no such site", []string{"replay", "--site", "s99", lean}, exitError, "no site s99"},
		{"replay: --calibration missing", []string{"replay", "--calibration", missing, lean}, exitError, missing},
		{"replay: --calibration not a profile", []string{"replay", "--calibration", notes, lean}, exitError, "not a calibration profile"},

		{"calibrate: an argument", []string{"calibrate", "x"}, exitUsage, `"x"`},
		{"calibrate: bad --samples", []string{"calibrate", "--samples", "0"}, exitUsage, "--samples 0"},
		{"calibrate: -o into a missing directory", []string{"calibrate", "-o", noDir}, exitError, noDir},
		{"calibrate: bad --calls", []string{"calibrate", "--profiler-overhead", "--calls", "0"}, exitUsage, "--calls 0"},
		{"calibrate: no nsys", []string{"calibrate", "--profiler-overhead", "--nsys", missing}, exitError, "--nsys"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			if !strings.HasPrefix(lines[0], "nsyssync: ") || !strings.Contains(lines[0], tc.want) {
				t.Errorf("stderr %q: want a first line \"nsyssync: …\" naming %q", errOut, tc.want)
			}
			if tc.code != exitGate && tc.code != exitRegression {
				oneLine(t, errOut, tc.want)
			}
			if _, err := os.Stat("missing"); err == nil {
				t.Errorf("-o created the directory missing")
			}
		})
	}
}

// TestExitCode: the one mapping from errors to exit codes and lines.
func TestExitCode(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	plain := errors.New("x.sqlite: not an SQLite database")
	tests := []struct {
		name   string
		ctx    context.Context
		err    error
		code   int
		stderr string
	}{
		{"no error", live, nil, exitOK, ""},
		{"an error no command marked", live, plain, exitError, "nsyssync: x.sqlite: not an SQLite database\n"},
		{"a usage error", live, usagef("--top %d: want 0 or more", -1), exitUsage, "nsyssync: --top -1: want 0 or more\n"},
		{"a wrapped usage error", live, fmt.Errorf("flags: %w", usagef("bad")), exitUsage, "nsyssync: bad\n"},
		{"lines already printed", live, &exitErr{code: exitGate}, exitGate, ""},
		{"interrupted while doing", cancelled, whileDoing(cancelled, plain, "while reading %s", "x.sqlite"), exitError, "nsyssync: interrupted while reading x.sqlite\n"},
		{"interrupted, no more said", cancelled, plain, exitError, "nsyssync: interrupted\n"},
		{"not interrupted", live, whileDoing(live, plain, "while reading %s", "x.sqlite"), exitError, "nsyssync: x.sqlite: not an SQLite database\n"},
		{"control characters", live, errors.New("a\x1b[31mb"), exitError, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := exitCode(tc.ctx, &stderr, tc.err); code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			got := stderr.String()
			if tc.name == "control characters" {
				if strings.Count(got, "\n") != 1 || strings.ContainsRune(got, 0x1b) {
					t.Errorf("stderr %q: want one line without escapes", got)
				}
				return
			}
			if got != tc.stderr {
				t.Errorf("stderr %q, want %q", got, tc.stderr)
			}
		})
	}
}
