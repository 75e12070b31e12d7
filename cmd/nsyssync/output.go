package main

import (
	"context"
	"io"
	"os"
	"strconv"

	"github.com/charmbracelet/x/term"

	"github.com/nsyssync/nsyssync/internal/safefile"
)

// output is where a report goes: stdout, or a file (internal/safefile:
// written beside its final name and renamed into place once complete, so
// that a failed run never leaves half a report behind; never one of the
// run's inputs; a FIFO or a device written to directly).
type output struct {
	w    io.Writer
	file *safefile.Output // nil for stdout
}

// openOutput opens the output named by -o ("" or "-": stdout). inputs are
// the files the run reads, which the output may not be. An output that
// cannot be opened is a failure of the run (exit 1), not of its flags.
func openOutput(ctx context.Context, path string, stdout io.Writer, inputs []string) (*output, error) {
	if path == "" || path == "-" {
		return &output{w: stdout}, nil
	}
	f, err := safefile.Create(ctx, path, inputs)
	if err != nil {
		return nil, err
	}
	return &output{w: f, file: f}, nil
}

func (o *output) Write(p []byte) (int, error) { return o.w.Write(p) }

// toFile reports whether the report goes to a file.
func (o *output) toFile() bool { return o.file != nil }

// commit moves the finished file into place.
func (o *output) commit() error {
	if o.file == nil {
		return nil
	}
	return o.file.Commit()
}

// abort drops the unfinished file.
func (o *output) abort() {
	if o.file != nil {
		o.file.Abort()
	}
}

// terminal is what the text report needs to know about where it goes.
type terminal struct {
	color bool
	width int
}

// terminalView decides colour and width for stdout: colour only on a
// terminal and without NO_COLOR (unless --color always), width from
// COLUMNS or the terminal's size (0, no limit, when stdout is not a
// terminal).
func terminalView(stdout io.Writer, toFile bool, colorMode string) terminal {
	fd, tty := terminalFd(stdout)
	size := func() int {
		if w, _, err := term.GetSize(fd); err == nil {
			return w
		}
		return 0
	}
	return decideView(tty && !toFile, toFile, colorMode, os.Getenv, size)
}

// decideView is terminalView's decision, given what it found.
func decideView(tty, toFile bool, colorMode string, getenv func(string) string, size func() int) terminal {
	var v terminal
	switch colorMode {
	case "always":
		v.color = true
	case "auto":
		v.color = tty && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
	}
	if toFile {
		return v
	}
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		v.width = n
	} else if tty {
		v.width = max(size(), 0)
	}
	return v
}

// terminalFd returns the descriptor of w when it is a terminal.
func terminalFd(w io.Writer) (uintptr, bool) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	return f.Fd(), term.IsTerminal(f.Fd())
}
