package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets a test run the command itself in a child process
// (NSYSSYNC_TEST_MAIN=1), to send it real signals.
func TestMain(m *testing.M) {
	if os.Getenv("NSYSSYNC_TEST_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// oneLine fails unless errOut is one line holding want.
func oneLine(t *testing.T, errOut, want string) {
	t.Helper()
	if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, want) {
		t.Errorf("stderr %q, want one line with %q", errOut, want)
	}
	if strings.Contains(errOut, "goroutine ") || strings.Contains(errOut, ".tmp") {
		t.Errorf("stderr %q shows a stack or a temporary file", errOut)
	}
}

// runBounded is runCLI that fails the test instead of hanging.
func runBounded(t *testing.T, limit time.Duration, args ...string) (int, string, string) {
	t.Helper()
	type res struct {
		code     int
		out, err string
	}
	done := make(chan res, 1)
	go func() {
		var out, errb bytes.Buffer
		code := run(t.Context(), args, &out, &errb)
		done <- res{code, out.String(), errb.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(limit):
		t.Fatalf("%v: still running after %v", args, limit)
		return 0, "", ""
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
}

// TestOutputNeverAnInput: -o naming an input of the run (the export, the
// findings database, a JSON Lines file merged, through a link too) is
// refused with exit 1 and one line, and the input keeps its bytes.
func TestOutputNeverAnInput(t *testing.T) {
	e := newHarmEnv(t)
	link := filepath.Join(e.out, "link.sqlite")
	if err := os.Symlink(e.a, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
	}{
		{"analyze into its export", []string{"analyze", "-o", e.a, e.a}},
		{"analyze json into the second export", []string{"analyze", "--format", "json", "-o", e.b, e.a, e.b}},
		{"analyze through a link", []string{"analyze", "-o", link, e.a}},
		{"analyze into the calibration", []string{"analyze", "--calibration", e.jsonReport, "-o", e.jsonReport, e.a}},
		{"batch into an export of its directory", []string{"batch", "-o", e.b, e.exports}},
		{"batch into its database", []string{"batch", "--no-estimate", "--db", e.db, "-o", e.db, e.a}},
		{"merge into its input", []string{"merge", "-o", e.jsonl, e.jsonl}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := []string{e.a, e.b, e.db, e.jsonl, e.jsonReport}
			before := make([]fileState, len(files))
			for i, f := range files {
				before[i] = stateOf(t, f)
			}
			code, _, errOut := runCLI(t, tc.args...)
			if code != exitError {
				t.Errorf("exit %d, want 1", code)
			}
			oneLine(t, errOut, "refusing to write")
			for i, f := range files {
				if after := stateOf(t, f); !bytes.Equal(before[i].data, after.data) || !before[i].mtime.Equal(after.mtime) {
					t.Errorf("%s changed", f)
				}
			}
			if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link was replaced")
			}
		})
	}
}

// TestOutputSpecialFiles: -o keeps what it writes to: a FIFO stays a FIFO
// and gets the report, /dev/null stays a device, a 0600 file keeps its
// mode, a symbolic link keeps pointing at the file it names.
func TestOutputSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(dir, "report.fifo")
		mkfifo(t, fifo)
		got := make(chan []byte, 1)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- nil
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			got <- b
		}()
		code, _, errOut := runBounded(t, time.Minute, "analyze", "--no-estimate", "--format", "json", "-o", fifo, fixture)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if b := <-got; !bytes.Contains(b, []byte(`"schema"`)) {
			t.Errorf("the reader got %d bytes, not the JSON report", len(b))
		}
		if st, _ := os.Lstat(fifo); st.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("the FIFO became %v", st.Mode())
		}
	})
	t.Run("dev null", func(t *testing.T) {
		if code, _, errOut := runCLI(t, "analyze", "--no-estimate", "-o", os.DevNull, fixture); code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("%s is now %v", os.DevNull, st.Mode())
		}
	})
	t.Run("private file keeps its mode", func(t *testing.T) {
		p := filepath.Join(dir, "private.txt")
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := runCLI(t, "analyze", "--no-estimate", "-o", p, fixture); code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 || st.Size() == 0 {
			t.Errorf("mode %v, %d bytes; want 0600 and the report", st.Mode().Perm(), st.Size())
		}
	})
	t.Run("symlink is followed", func(t *testing.T) {
		target := filepath.Join(dir, "target.md")
		link := filepath.Join(dir, "latest.md")
		if err := os.Symlink("target.md", link); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := runCLI(t, "analyze", "--no-estimate", "--format", "markdown", "-o", link, fixture); code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
			t.Error("the link was replaced by a file")
		}
		if b, err := os.ReadFile(target); err != nil || !bytes.Contains(b, []byte("host syncs")) {
			t.Errorf("target: %v", err)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		out := filepath.Join(dir, "missing", "x.txt")
		for _, cmd := range []string{"analyze", "batch"} {
			code, _, errOut := runCLI(t, cmd, "--no-estimate", "-o", out, fixture)
			if code != exitError {
				t.Errorf("%s: exit %d, want 1", cmd, code)
			}
			oneLine(t, errOut, out)
		}
	})
}

// TestInputsThatAreNotFiles: a FIFO, a device or a directory named as an
// export gets one line and exit 1 at once, from every command; batch over
// a directory holding a FIFO named *.sqlite reports it and goes on.
func TestInputsThatAreNotFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.sqlite")
	mkfifo(t, fifo)
	good := copyInto(t, dir, fixture, "good.sqlite")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze", fifo}, fifo + ": is a FIFO (named pipe), not an nsys SQLite export"},
		{[]string{"doctor", fifo}, "is a FIFO (named pipe)"},
		{[]string{"analyze", "/dev/zero"}, "/dev/zero: is a character device, not an nsys SQLite export"},
		{[]string{"analyze", dir}, "is a directory"},
		{[]string{"analyze", "--calibration", fifo, good}, "is a FIFO (named pipe), not a regular file"},
		{[]string{"diff", fifo, good}, "is a FIFO (named pipe)"},
		{[]string{"merge", fifo}, "is a FIFO (named pipe)"},
		{[]string{"history", "--db", fifo}, "is a FIFO (named pipe)"},
		{[]string{"batch", "--no-estimate", "--db", fifo, good}, "is a FIFO (named pipe)"},
		{[]string{"merge", "--db", fifo, good}, "is a FIFO (named pipe)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := runBounded(t, time.Minute, tc.args...)
			if code != exitError {
				t.Errorf("exit %d, want 1", code)
			}
			oneLine(t, errOut, tc.want)
		})
	}
	t.Run("batch", func(t *testing.T) {
		code, out, errOut := runBounded(t, time.Minute, "batch", "--no-estimate", dir)
		if code != exitError || !strings.Contains(errOut, "is a FIFO (named pipe)") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
		if !strings.Contains(out, "good.sqlite") {
			t.Errorf("the good export is missing from the summary:\n%s", out)
		}
	})
}

// TestSIGTERM sends SIGTERM, as a CI system cancelling a job does, to a
// batch run in a child process: it stops with exit 1 and one line, and
// leaves neither its output nor a temporary file.
func TestSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	dir, out := t.TempDir(), t.TempDir()
	abs, err := filepath.Abs(copyInto(t, t.TempDir(), fixture, "backtrace.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 { // far more than runs before the signal
		if err := os.Symlink(abs, filepath.Join(dir, fmt.Sprintf("t%04d.sqlite", i))); err != nil {
			t.Fatal(err)
		}
	}
	report := filepath.Join(out, "night.txt")
	cmd := exec.Command(os.Args[0], "batch", "--jobs", "1", "-o", report, dir)
	cmd.Env = append(os.Environ(), "NSYSSYNC_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Signal once the output's temporary file exists: the run is under way.
	for deadline := time.Now().Add(30 * time.Second); len(listDir(t, out)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no output file after 30 s")
		}
	}
	time.Sleep(100 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("still running 30 s after SIGTERM")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitError {
		t.Errorf("exit %d, want 1; stderr %q", code, stderr.String())
	}
	oneLine(t, stderr.String(), "nsyssync: interrupted")
	if names := listDir(t, out); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
}
