// Package safefile opens the files nsyssync reads and writes so that no
// input can hang it and no output can destroy what the user keeps.
//
// Inputs are opened without blocking and must be regular files: a FIFO, a
// device or a directory named as an export gets one clear error instead of
// a read that waits for ever (or reads /dev/zero without end). Outputs are
// written beside their final name and renamed into place, keeping the mode
// of the file they replace and the symbolic link that points to it; an
// output that is one of the run's inputs is refused; a FIFO or a device
// (/dev/null, /dev/stdout) is written to directly, never renamed over.
// docs/hardening.md records each promise and its test.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is the sentinel of a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError says what a path is when a regular file was wanted.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: is %s, not a regular file", e.Path, Kind(e.Mode))
}

// Is makes errors.Is(err, ErrNotRegular) true.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// Kind names the type of a file in words ("a FIFO (named pipe)").
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// OpenRegular opens path for reading without blocking (opening a FIFO
// with no writer returns at once) and returns an error that names the
// path unless it is a regular file. Links are followed.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	return f, nil
}

// CheckRegular returns the error OpenRegular would for path, without
// keeping it open: for readers (SQLite) that open the file themselves.
func CheckRegular(path string) error {
	f, err := OpenRegular(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// ReadFile reads a regular file whole, refusing one larger than limit
// bytes (limit <= 0: no limit).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := io.Reader(f)
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if limit > 0 && int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return b, nil
}

// Problem returns what went wrong in a file-system error without the path
// and operation it repeats ("no such file or directory", "is a FIFO (named
// pipe), not a regular file"), or err itself.
func Problem(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	var nr *NotRegularError
	if errors.As(err, &nr) {
		return fmt.Errorf("is %s, not a regular file", Kind(nr.Mode))
	}
	return err
}
