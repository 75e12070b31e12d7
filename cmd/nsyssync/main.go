// Command nsyssync finds where the CPU blocked on the GPU in Nsight Systems
// SQLite exports, and reports each sync with its evidence.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/nsyssync/nsyssync/internal/textsafe"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // an input could not be analysed
	exitUsage = 2 // bad flags or arguments
)

var version = "dev"

func main() {
	// A command holds the trace it loaded to its end, and with Go's
	// default the heap grows to twice that before a collection. The GC's
	// CPU grows with allocation over GOGC, not with what is held, and the
	// inventory allocates little beyond what it keeps: 30% headroom costs
	// no measurable time on the exports of docs/performance.md and keeps
	// the sync-heavy 1 GiB export near 0.9 GB instead of 1.05.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(30)
	}
	// SIGTERM (what CI sends to cancel a job) stops a run as Ctrl-C does:
	// the context ends, the command drops its unfinished output and says
	// so. A second signal, once the first was seen, kills at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		var ec *exitErr
		if errors.As(err, &ec) {
			return ec.code
		}
		var f *failure
		if errors.As(err, &f) {
			if ctx.Err() != nil {
				fmt.Fprintln(stderr, "nsyssync: interrupted")
			} else {
				fmt.Fprintf(stderr, "nsyssync: %s\n", textsafe.Message(f.err.Error()))
			}
			return exitError
		}
		fmt.Fprintf(stderr, "nsyssync: %s\n", textsafe.Message(err.Error()))
		return exitUsage
	}
	return exitOK
}

// interrupted prints the one line that says the run was interrupted (Ctrl-C
// cancels the context through signal.NotifyContext) and what it was doing,
// in place of the error the interruption caused, and returns exit 1.
func interrupted(stderr io.Writer, format string, args ...any) error {
	fmt.Fprintf(stderr, "nsyssync: interrupted %s\n", textsafe.Message(fmt.Sprintf(format, args...)))
	return &exitErr{code: exitError}
}

// failure is an error of the run rather than of its flags (an output that
// cannot be written): one line on stderr and exit 1.
type failure struct{ err error }

func (f *failure) Error() string { return f.err.Error() }

func (f *failure) Unwrap() error { return f.err }

// exitErr carries a non-zero exit code once the errors were printed.
type exitErr struct{ code int }

func (e *exitErr) Error() string { return fmt.Sprintf("exit %d", e.code) }
