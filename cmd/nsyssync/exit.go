package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nsyssync/nsyssync/internal/textsafe"
)

// Exit codes. exitCode is the one place that maps an error to its code
// and prints its line; the README's table says the same.
const (
	exitOK    = 0
	exitError = 1 // the run failed: an input, the output, the GPU, an interruption
	exitUsage = 2 // bad flags or arguments (usageError)
	// exitGate: analyze's CI gate failed (the removable savings exceed
	// --fail-on-savings).
	exitGate = 3
	// exitRegression: diff's regression gate failed.
	exitRegression = 3
)

// usageError is a command line that cannot run: an unknown flag, a flag
// value out of range, missing or extra arguments, an invalid allow-list.
// It exits 2; every other error exits 1.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }

func (e *usageError) Unwrap() error { return e.err }

// usage marks err as a usage error (nil stays nil).
func usage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err: err}
}

// usagef is usage(fmt.Errorf(format, args...)).
func usagef(format string, args ...any) error { return usage(fmt.Errorf(format, args...)) }

// interruptedError says what the run was doing when it was cancelled
// (Ctrl-C or SIGTERM cancel the context through signal.NotifyContext).
type interruptedError struct{ doing string }

func (e *interruptedError) Error() string { return "interrupted " + e.doing }

// whileDoing returns err, or, when the context was cancelled, the
// interruption of what the run was doing in its place: the error the
// cancellation caused says less.
func whileDoing(ctx context.Context, err error, format string, args ...any) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	return interrupted(format, args...)
}

// interrupted is the interruption of what the run was doing.
func interrupted(format string, args ...any) error {
	return &interruptedError{doing: fmt.Sprintf(format, args...)}
}

// exitErr ends a run whose lines were printed already (each failed input
// as it failed, the gate's reasons) with its code.
type exitErr struct{ code int }

func (e *exitErr) Error() string { return fmt.Sprintf("exit %d", e.code) }

// printError writes the one line an error gets on stderr.
func printError(stderr io.Writer, err error) {
	fmt.Fprintf(stderr, "nsyssync: %s\n", textsafe.Message(err.Error()))
}

// exitCode prints the line err needs, if any, and returns the exit code:
// 0 without an error, exitErr's code, 2 for a usage error, 1 for the rest
// (an interruption included: one line "nsyssync: interrupted …").
func exitCode(ctx context.Context, stderr io.Writer, err error) int {
	var (
		done        *exitErr
		bad         *usageError
		interrupted *interruptedError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &done):
		return done.code
	case errors.As(err, &bad):
		printError(stderr, bad)
		return exitUsage
	case errors.As(err, &interrupted):
		printError(stderr, interrupted)
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "nsyssync: interrupted")
	default:
		printError(stderr, err)
	}
	return exitError
}

// markStarted records, in *started, that the command line was parsed and
// the command began to run: an error before that (an unknown command or
// flag, a wrong number of arguments) is cobra's verdict on the command
// line, a usage error.
func markStarted(root *cobra.Command, started *bool) {
	pre := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		*started = true
		if pre == nil {
			return nil
		}
		return pre(cmd, args)
	}
}
