package trace

import (
	"errors"
	"fmt"
)

// InputError reports a problem with an export file: it names the file and
// says, in one line, what is wrong with it.
type InputError struct {
	Path    string
	Problem string
	Err     error
}

func (e *InputError) Error() string {
	return fmt.Sprintf("%s: %s", e.Path, e.Problem)
}

func (e *InputError) Unwrap() error { return e.Err }

// Sentinel problems, usable with errors.Is.
var (
	ErrNotSQLite     = errors.New("not an SQLite database")
	ErrTruncated     = errors.New("truncated SQLite file")
	ErrCorrupt       = errors.New("corrupt SQLite file")
	ErrNotNsys       = errors.New("not an nsys export")
	ErrNoCUDATrace   = errors.New("no CUDA trace")
	ErrUnsupported   = errors.New("unsupported export schema")
	ErrNVTXNotFound  = errors.New("NVTX range not found")
	ErrUnreadableRow = errors.New("unreadable row")
)

func inputErr(path string, sentinel error, format string, args ...any) *InputError {
	return &InputError{Path: path, Problem: fmt.Sprintf(format, args...), Err: sentinel}
}
