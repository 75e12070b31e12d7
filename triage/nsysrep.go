package triage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nsyssync/nsyssync/internal/safefile"
)

// ErrNoNsys says that a .nsys-rep input cannot be read because the nsys
// command line is not installed.
var ErrNoNsys = errors.New("nsys is not on PATH")

// Converter exports .nsys-rep reports to SQLite with `nsys export`, into a
// temporary directory: never beside the user's report.
type Converter struct {
	// Nsys is the nsys executable; empty when none was found.
	Nsys string
	// TempDir is where the temporary exports go; empty: os.TempDir().
	TempDir string
}

// NewConverter finds nsys on the PATH. A Converter without nsys still
// works: each .nsys-rep input then fails with ErrNoNsys.
func NewConverter() *Converter {
	path, err := exec.LookPath("nsys")
	if err != nil {
		return &Converter{}
	}
	return &Converter{Nsys: path}
}

// IsReport reports whether path names an nsys report rather than its
// SQLite export.
func IsReport(path string) bool { return strings.HasSuffix(path, NsysRepExt) }

// Export runs `nsys export --type sqlite --include-json=true` (Python
// frames are in the JSON payloads) on the report into a fresh temporary
// directory and returns the SQLite file and a function that removes the
// directory.
//
// nsys runs in the temporary directory, so the report and the output
// reach it as absolute paths: a relative path would name a file there,
// and an absolute one never begins with "-", so that a report named
// "--force-overwrite.nsys-rep" is a file to nsys, not an option (nsys
// documents no "--" that ends its options).
func (c *Converter) Export(ctx context.Context, report string) (string, func(), error) {
	if c == nil || c.Nsys == "" {
		return "", nil, fmt.Errorf("%s: %w: install Nsight Systems, or run 'nsys export --type sqlite' where it is and pass the .sqlite", report, ErrNoNsys)
	}
	if err := safefile.CheckRegular(report); err != nil { // nsys would wait on a FIFO
		return "", nil, fmt.Errorf("%s: cannot open: %w", report, fileProblem(err))
	}
	absReport, err := filepath.Abs(report)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", report, err)
	}
	dir, err := os.MkdirTemp(c.TempDir, "nsyssync-export-*")
	if err != nil {
		return "", nil, fmt.Errorf("%s: making a directory for its export: %w", report, err)
	}
	cleanup := func() { os.RemoveAll(dir) }
	if dir, err = filepath.Abs(dir); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("%s: making a directory for its export: %w", report, err)
	}
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(report), NsysRepExt)+SQLiteExt)
	cmd := exec.CommandContext(ctx, c.Nsys, "export", "-q", "true", "--include-json=true", "--type", "sqlite",
		"--force-overwrite", "true", "-o", out, absReport)
	cmd.Dir = dir // anything nsys writes beside itself lands in the temporary directory
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		cleanup()
		if ctx.Err() != nil {
			return "", nil, fmt.Errorf("%s: nsys export: %w", report, ctx.Err())
		}
		return "", nil, fmt.Errorf("%s: nsys export failed: %v%s", report, err, lastLine(stderr.String()))
	}
	if _, err := os.Stat(out); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("%s: nsys export wrote no %s%s", report, filepath.Base(out), lastLine(stderr.String()))
	}
	return out, cleanup, nil
}

// lastLine returns ": " and the last non-empty line of a command's output,
// or "" when there is none.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return ": " + l
	}
	return ""
}
