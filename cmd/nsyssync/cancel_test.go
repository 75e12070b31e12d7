package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nsyssync/nsyssync/internal/tracegen"
)

// countdownCtx cancels itself at the n-th look the code under test takes
// at it (a call of Done or Err): stepping n through a run cancels the
// command at each point where it checks, as Ctrl-C would through
// signal.NotifyContext. n = 0 is cancelled from the start.
type countdownCtx struct {
	context.Context
	cancel context.CancelFunc
	left   atomic.Int64
	looks  atomic.Int64
}

func newCountdown(n int64) *countdownCtx {
	ctx, cancel := context.WithCancel(context.Background())
	c := &countdownCtx{Context: ctx, cancel: cancel}
	c.left.Store(n)
	if n == 0 {
		cancel()
	}
	return c
}

func (c *countdownCtx) look() {
	c.looks.Add(1)
	if c.left.Add(-1) == 0 {
		c.cancel()
	}
}

func (c *countdownCtx) Done() <-chan struct{} { c.look(); return c.Context.Done() }
func (c *countdownCtx) Err() error            { c.look(); return c.Context.Err() }

// cancelled reports, without counting a look, whether the run was
// cancelled.
func (c *countdownCtx) cancelled() bool { return c.Context.Err() != nil }

// cancelPoints spreads the looks at which to cancel over a run of total
// looks: the first two, n evenly between, and the last two.
func cancelPoints(total int64, n int) []int64 {
	pts := []int64{0, 1}
	for i := 1; i <= n; i++ {
		pts = append(pts, total*int64(i)/int64(n+1))
	}
	pts = append(pts, total-1, total)
	slices.Sort(pts)
	return slices.Compact(pts)
}

// settledGoroutines waits until at most want goroutines are left, and
// returns how many there are.
func settledGoroutines(want int) int {
	deadline := time.Now().Add(3 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCancelMidRun cancels each command that reads exports at points
// spread over its run and checks that it stops cleanly: exit 1 with the
// one line "nsyssync: interrupted …" (or, cancelled after its work was
// done, exit 0), no stack trace, no half-written output file, and no
// goroutine left behind.
func TestCancelMidRun(t *testing.T) {
	dir := t.TempDir()
	a := copyInto(t, dir, fixture, "backtrace.sqlite")
	copyInto(t, dir, "../../fixtures/syncs_lean.sqlite.gz", "lean.sqlite")
	copyInto(t, dir, "../../fixtures/multiproc_lean.sqlite.gz", "multiproc.sqlite")
	out := t.TempDir()
	report := filepath.Join(out, "report")
	tests := []struct {
		name string
		args []string
		// output is a file the command writes with -o: absent after an
		// interrupted run, present after a finished one.
		output string
	}{
		{"analyze json", []string{"analyze", "--format", "json", "-o", report, a}, report},
		{"analyze html", []string{"analyze", "--format", "html", "-o", report, a}, report},
		{"analyze text", []string{"analyze", "--no-estimate", a, dir + "/lean.sqlite"}, ""},
		{"doctor", []string{"doctor", a}, ""},
		{"batch", []string{"batch", "--jobs", "2", "--format", "jsonl", "-o", report, dir}, report},
		{"batch with db", []string{"batch", "--no-estimate", "--db", filepath.Join(out, "t.db"), dir}, ""},
		{"diff", []string{"diff", "--jobs", "2", a, dir}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			full := newCountdown(1 << 62)
			var stdout, stderr bytes.Buffer
			if code := run(full, tc.args, &stdout, &stderr); code != exitOK {
				t.Fatalf("uncancelled: exit %d: %s", code, stderr.String())
			}
			total := full.looks.Load()
			for _, k := range cancelPoints(total, 3) {
				t.Run(fmt.Sprintf("look %d of %d", k, total), func(t *testing.T) {
					checkCancelled(t, tc.args, tc.output, k)
				})
			}
		})
	}
}

// checkCancelled runs a command with a context cancelled at look k.
func checkCancelled(t *testing.T, args []string, output string, k int64) {
	if output != "" {
		os.Remove(output)
	}
	base := runtime.NumGoroutine()
	ctx := newCountdown(k)
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	errOut := stderr.String()
	if strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine ") {
		t.Fatalf("stack trace in stderr: %s", errOut)
	}
	switch {
	case !ctx.cancelled() && code != exitOK:
		t.Errorf("not cancelled, yet exit %d: %s", code, errOut)
	case code == exitError:
		if !ctx.cancelled() || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "nsyssync: interrupted") {
			t.Errorf("cancelled: stderr %q, want the one line \"nsyssync: interrupted …\"", errOut)
		}
		if output != "" {
			if _, err := os.Stat(output); err == nil {
				t.Errorf("an interrupted run left %s", output)
			}
		}
	case code == exitOK:
		if output != "" {
			if _, err := os.Stat(output); err != nil {
				t.Errorf("exit 0 without the output: %v", err)
			}
		}
	default:
		t.Errorf("exit %d, want %d or %d: %s", code, exitError, exitOK, errOut)
	}
	if output != "" {
		if tmp, _ := filepath.Glob(filepath.Join(filepath.Dir(output), ".*.tmp")); len(tmp) > 0 {
			t.Errorf("temporary files left: %v", tmp)
		}
	}
	if n := settledGoroutines(base); n > base {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines before the run, %d after:\n%s", base, n, buf[:runtime.Stack(buf, true)])
	}
}

// TestCancelLargeExport interrupts commands while they read a generated
// export of some size (the lean fixture 80 times over, 2.5 MB) after a
// while, as Ctrl-C does, and checks that they notice within a bound (they
// take a few milliseconds).
func TestCancelLargeExport(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.sqlite")
	lean := copyInto(t, t.TempDir(), "../../fixtures/syncs_lean.sqlite.gz", "lean.sqlite") // tracegen reads a plain SQLite file
	_, err := tracegen.Generate(context.Background(), tracegen.Options{Source: lean, Output: big, Copies: 400})
	if err != nil {
		t.Fatal(err)
	}
	// 400 copies of the lean fixture (12 MB): analyze takes about 0.4 s,
	// diff 0.7 s, doctor 0.05 s (it reads no GPU activity); several times
	// that under -race.
	const noticeWithin = 2 * time.Second
	for _, args := range [][]string{
		{"analyze", "--format", "json", big},
		{"doctor", big},
		{"batch", "--jobs", "2", dir},
		{"diff", big, big},
	} {
		for _, after := range []time.Duration{5 * time.Millisecond, 100 * time.Millisecond} {
			t.Run(fmt.Sprintf("%s after %v", args[0], after), func(t *testing.T) {
				base := runtime.NumGoroutine()
				ctx, cancel := context.WithCancel(context.Background())
				var cancelled atomic.Int64 // when cancel ran, in ns since the epoch
				timer := time.AfterFunc(after, func() { cancelled.Store(time.Now().UnixNano()); cancel() })
				var stdout, stderr bytes.Buffer
				code := run(ctx, args, &stdout, &stderr)
				returned := time.Now()
				timer.Stop()
				cancel()
				at := cancelled.Load()
				if at == 0 {
					t.Skipf("finished in less than %v", after)
				}
				if late := returned.Sub(time.Unix(0, at)); code == exitOK && late < time.Millisecond {
					// The command was already returning when the interruption came
					// (doctor reads the export in about the time waited).
					t.Skipf("finished as the interruption came (%v before it returned)", late)
				}
				if late := returned.Sub(time.Unix(0, at)); late > noticeWithin {
					t.Errorf("returned %v after the interruption, want within %v", late, noticeWithin)
				} else {
					t.Logf("returned %v after the interruption", late)
				}
				if errOut := stderr.String(); code != exitError || !strings.HasPrefix(errOut, "nsyssync: interrupted") || strings.Count(errOut, "\n") != 1 {
					t.Errorf("exit %d, stderr %q; want 1 and one line saying it was interrupted", code, errOut)
				}
				if n := settledGoroutines(base); n > base {
					t.Errorf("%d goroutines before the run, %d after", base, n)
				}
			})
		}
	}
}
