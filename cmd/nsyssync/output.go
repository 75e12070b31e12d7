package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/charmbracelet/x/term"
)

// output is where a report goes: stdout, or a file written beside its
// final name and renamed into place once complete, so that a failed run
// never leaves half a report behind.
type output struct {
	w    io.Writer
	file *os.File // the temporary file; nil for stdout
	path string
}

func openOutput(path string, stdout io.Writer) (*output, error) {
	if path == "" || path == "-" {
		return &output{w: stdout}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
	return &output{w: f, file: f, path: path}, nil
}

func (o *output) Write(p []byte) (int, error) { return o.w.Write(p) }

// toFile reports whether the report goes to a file.
func (o *output) toFile() bool { return o.file != nil }

// commit moves the finished file into place.
func (o *output) commit() error {
	if o.file == nil {
		return nil
	}
	tmp := o.file.Name()
	if err := o.file.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	if err := os.Rename(tmp, o.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	return nil
}

// abort drops the unfinished file.
func (o *output) abort() {
	if o.file != nil {
		o.file.Close()
		os.Remove(o.file.Name())
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
