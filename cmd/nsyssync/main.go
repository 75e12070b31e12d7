// Command nsyssync finds where the CPU blocked on the GPU in Nsight Systems
// SQLite exports, and reports each sync with its evidence.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
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
	started := false
	markStarted(root, &started)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && !started {
		err = usage(err)
	}
	return exitCode(ctx, stderr, err)
}
