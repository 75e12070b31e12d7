package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/nsyssync/nsyssync/contract"
	"github.com/nsyssync/nsyssync/report"
)

const corpusNoCUDA = "../../../shared/corpus/icon-graupel-no-cuda-trace_reexport2025.3.sqlite"

// TestFormats renders a real export in every format through the command.
func TestFormats(t *testing.T) {
	tests := []struct {
		format string
		check  func(t *testing.T, out string)
	}{
		{"text", func(t *testing.T, out string) {
			for _, want := range []string{"SITES", "TOP SITES", "LONGEST SYNCS", "syncs.py:34 control_flow"} {
				if !strings.Contains(out, want) {
					t.Errorf("lacks %q", want)
				}
			}
		}},
		{"markdown", func(t *testing.T, out string) {
			if !strings.HasPrefix(out, "## nsyssync: ") || !strings.Contains(out, "### Sites") || !strings.Contains(out, "<details>") {
				t.Errorf("not the Markdown report:\n%s", out)
			}
		}},
		{"md", func(t *testing.T, out string) {
			if !strings.Contains(out, "### Sites") {
				t.Errorf("alias md does not give Markdown")
			}
		}},
		{"json", func(t *testing.T, out string) {
			var doc contract.Document
			if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Schema != contract.SchemaVersion || len(doc.Sites) == 0 {
				t.Errorf("JSON: %v, %+v", err, doc.Trace)
			}
		}},
		{"html", func(t *testing.T, out string) {
			if !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.Contains(out, `<svg class="timeline"`) || strings.Contains(out, "http://") && !strings.Contains(out, "http://www.w3.org/2000/svg") {
				t.Errorf("not a self-contained page with timelines")
			}
		}},
		{"perfetto", func(t *testing.T, out string) {
			var doc struct {
				TraceEvents []json.RawMessage `json:"traceEvents"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.TraceEvents) == 0 {
				t.Errorf("Chrome trace: %v, %d events", err, len(doc.TraceEvents))
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			unchanged(t, fixture)
			code, out, errOut := runCLI(t, "analyze", "--format", tc.format, "--nvtx", "measured", fixture)
			if code != exitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			tc.check(t, out)
		})
	}
}

// TestOutputFile: -o writes the report into place and nothing else; a run
// with no usable export leaves no file behind.
func TestOutputFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report.html")
	code, stdout, errOut := runCLI(t, "analyze", "--format", "html", "-o", out, fixture)
	if code != exitOK || stdout != "" || errOut != "" {
		t.Fatalf("exit %d, stdout %d bytes, stderr %q", code, len(stdout), errOut)
	}
	data, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(data, []byte("<svg class=\"timeline\"")) {
		t.Fatalf("report.html: %v", err)
	}
	bad := filepath.Join(dir, "bad.sqlite")
	if err := os.WriteFile(bad, []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "never.md")
	if code, _, _ := runCLI(t, "analyze", "--format", "markdown", "-o", missing, bad); code != exitError {
		t.Errorf("bad input: exit %d", code)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files left: %v, want report.html and bad.sqlite", names)
	}
}

func TestFlagErrors(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "allow.fifo")
	mkfifo(t, fifo)
	badYAML := filepath.Join(dir, "allow.yaml")
	if err := os.WriteFile(badYAML, []byte("allow:\n  - python: a.py:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"html of two files", []string{"analyze", "--format", "html", fixture, fixture}, "one export at a time"},
		{"negative top", []string{"analyze", "--top", "-1", fixture}, "--top -1"},
		{"bad colour", []string{"analyze", "--color", "sometimes", fixture}, "unknown --color"},
		{"gate over 100", []string{"analyze", "--fail-on-savings", "101", fixture}, "percentage"},
		{"allow-list without reason", []string{"analyze", "--allow-list", badYAML, fixture}, "needs a reason"},
		{"missing allow-list", []string{"analyze", "--allow-list", filepath.Join(dir, "nope.yaml"), fixture}, "reading the allow-list"},
		{"allow-list is a FIFO", []string{"analyze", "--allow-list", fifo, fixture}, "is a FIFO (named pipe), not a regular file"},
		{"doctor format", []string{"doctor", "--format", "html", fixture}, "unknown --format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, tc.stderr) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stdout %d bytes, stderr %q; want exit 2 and one line with %q", code, len(out), errOut, tc.stderr)
			}
		})
	}
}

// TestGate runs the CI gate on a real export whose program has
// false-dependency syncs by design: it fails with exit 3, and passes once
// the allow-list names every false site (found in the current directory as
// .nsyssync.yaml) or when the threshold is above the removable share.
func TestGate(t *testing.T) {
	abs, err := filepath.Abs(fixture)
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "analyze", "--format", "json", abs)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var doc contract.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var yaml strings.Builder
	yaml.WriteString("allow:\n")
	var removable int64
	for _, s := range doc.Sites {
		if s.Dependency == "false" {
			removable += s.EstimatedSavingsNs // the gate sums the estimates of the false sites
			yaml.WriteString("  - fingerprint: " + s.Fingerprint + "\n    reason: accepted in this test\n")
		}
	}
	if removable == 0 {
		t.Fatalf("no false-dependency site in %s: the classifier should find the program's false syncs", fixture)
	}
	share := 100 * float64(removable) / float64(doc.Trace.Region.DurationNs)

	code, _, errOut := runCLI(t, "analyze", "--fail-on-savings", "0", abs)
	if code != exitGate || !strings.Contains(errOut, "savings gate FAILED") {
		t.Errorf("--fail-on-savings 0: exit %d, stderr %q; want 3", code, errOut)
	}
	code, _, errOut = runCLI(t, "analyze", "--fail-on-savings", ftoa(share*1.01), abs)
	if code != exitOK || !strings.Contains(errOut, "savings gate passed") {
		t.Errorf("threshold above the %.3f%% removable: exit %d, stderr %q", share, code, errOut)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".nsyssync.yaml"), []byte(yaml.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, out, errOut = runCLI(t, "analyze", "--format", "markdown", "--fail-on-savings", "0", abs)
	if code != exitOK || !strings.Contains(errOut, "savings gate passed") || !strings.Contains(out, "allowed: accepted in this test") {
		t.Errorf("every false site allowed: exit %d, stderr %q", code, errOut)
	}
}

func ftoa(f float64) string { return strings.TrimRight(strings.TrimRight(jsonNumber(f), "0"), ".") }

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// TestColorAndWidth: no colour into a pipe unless --color always; COLUMNS
// sets the width of the tables.
func TestColorAndWidth(t *testing.T) {
	_, plain, _ := runCLI(t, "analyze", fixture)
	_, colored, _ := runCLI(t, "analyze", "--color", "always", fixture)
	if strings.Contains(plain, "\x1b[") || !strings.Contains(colored, "\x1b[") {
		t.Errorf("colour: plain has codes %v, --color always has codes %v", strings.Contains(plain, "\x1b["), strings.Contains(colored, "\x1b["))
	}
	t.Setenv("COLUMNS", "90")
	_, narrow, _ := runCLI(t, "analyze", "--nvtx", "measured", fixture)
	for _, line := range strings.Split(narrow, "\n") {
		if w := ansi.StringWidth(line); w > 90 {
			t.Errorf("COLUMNS=90 but a line of %d cells: %q", w, line)
		}
	}
}

func TestDoctorCommand(t *testing.T) {
	unchanged(t, fixture)
	code, out, errOut := runCLI(t, "doctor", fixture)
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"EVIDENCE", "native backtraces", "NVTX RANGES AROUND SYNCS", "measured", "nsys profile", "nsys export --type sqlite --include-json=true"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, "doctor", "--format", "json", fixture)
	var d report.Diagnosis
	if err := json.Unmarshal([]byte(out), &d); err != nil || code != exitOK || !d.Analysable {
		t.Errorf("doctor JSON: exit %d, %v", code, err)
	}
	if _, err := os.Stat(corpusNoCUDA); err != nil {
		t.Skipf("no shared corpus: %v", err)
	}
	code, out, errOut = runCLI(t, "doctor", corpusNoCUDA)
	if code != exitError || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "no CUDA trace") || !strings.Contains(out, "nsys profile -t cuda") {
		t.Errorf("export without a CUDA trace: exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
}

func TestCompletion(t *testing.T) {
	code, out, _ := runCLI(t, "__complete", "analyze", "--format", "")
	for _, f := range []string{"text", "markdown", "json", "html", "perfetto"} {
		if !strings.Contains(out, f+"\n") {
			t.Errorf("format %s not offered: %q", f, out)
		}
	}
	code, out, _ = runCLI(t, "__complete", "analyze", fixture, "--nvtx", "")
	if code != exitOK || !strings.Contains(out, "measured\n") || !strings.Contains(out, "iter0\n") {
		t.Errorf("NVTX ranges not offered: %q", out)
	}
	code, out, _ = runCLI(t, "__complete", "doctor", "")
	if !strings.Contains(out, "sqlite") || !strings.Contains(out, ":8") {
		t.Errorf("exports not filtered by extension: %q", out)
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, _ = runCLI(t, "completion", shell)
		if code != exitOK || !strings.Contains(out, "nsyssync") {
			t.Errorf("completion %s: exit %d, %d bytes", shell, code, len(out))
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	code, out, _ := runCLI(t, "--version")
	if code != exitOK || !strings.HasPrefix(out, "nsyssync version ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "analyze", "--help")
	for _, want := range []string{"Examples:", "--fail-on-savings", "--format html -o report.html", "Exit codes", "3 the savings gate failed"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("analyze --help lacks %q", want)
		}
	}
}

// TestProgress: the progress line shows the step and the time, and is
// erased before the report.
func TestProgress(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, enabled: true, tick: 5 * time.Millisecond, delay: 0, width: 200}
	p.setPrefix("[2/3] ")
	p.set("reading x.sqlite")
	time.Sleep(40 * time.Millisecond)
	p.clear()
	got := b.String()
	if !strings.Contains(got, "[2/3] reading x.sqlite (") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("progress output %q", got)
	}
	var narrow bytes.Buffer
	n := &progress{w: &narrow, enabled: true, tick: 5 * time.Millisecond, width: 20}
	n.set("reading a/very/long/path/to/an/export.sqlite")
	time.Sleep(30 * time.Millisecond)
	n.clear()
	for _, line := range strings.Split(narrow.String(), "\r\x1b[K") {
		if w := ansi.StringWidth(line); w >= 20 {
			t.Errorf("progress line of %d cells on a 20-cell terminal: %q", w, line)
		}
	}
	quiet := newProgress(&b) // a buffer is not a terminal
	quiet.set("x")
	quiet.clear()
	if b.String() != got {
		t.Errorf("progress written to a non-terminal")
	}
}

func TestDecideView(t *testing.T) {
	tests := []struct {
		name   string
		tty    bool
		toFile bool
		mode   string
		env    map[string]string
		color  bool
		width  int
	}{
		{"terminal", true, false, "auto", nil, true, 120},
		{"terminal, NO_COLOR", true, false, "auto", map[string]string{"NO_COLOR": "1"}, false, 120},
		{"terminal, TERM=dumb", true, false, "auto", map[string]string{"TERM": "dumb"}, false, 120},
		{"terminal, --color never", true, false, "never", nil, false, 120},
		{"terminal, COLUMNS", true, false, "auto", map[string]string{"COLUMNS": "72"}, true, 72},
		{"terminal, bad COLUMNS", true, false, "auto", map[string]string{"COLUMNS": "wide"}, true, 120},
		{"pipe", false, false, "auto", nil, false, 0},
		{"pipe, COLUMNS", false, false, "auto", map[string]string{"COLUMNS": "72"}, false, 72},
		{"pipe, --color always", false, false, "always", map[string]string{"NO_COLOR": "1"}, true, 0},
		{"file", false, true, "auto", map[string]string{"COLUMNS": "72"}, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			v := decideView(tc.tty, tc.toFile, tc.mode, getenv, func() int { return 120 })
			if v.color != tc.color || v.width != tc.width {
				t.Errorf("got colour %v width %d, want %v %d", v.color, v.width, tc.color, tc.width)
			}
		})
	}
}
