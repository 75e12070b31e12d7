package safefile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// ErrIsInput is the sentinel of an output that names one of the inputs.
var ErrIsInput = errors.New("the output is an input of the run")

// maxLinks bounds the symbolic links followed to an output's target, as
// the kernel's ELOOP does.
const maxLinks = 40

// Output is a file being written. A regular file (or a new one) is
// written to a temporary file beside its target and renamed into place by
// Commit, so a failed or interrupted run leaves the old file as it was; a
// FIFO or a device is written to directly.
type Output struct {
	path  string      // as the caller named it
	final string      // the file it lands in: path with its links followed
	f     *os.File    // the temporary file, or the special file itself
	tmp   string      // the temporary file's name; "" when written directly
	keep  fs.FileInfo // the regular file replaced, whose mode and owner stay; nil for a new one
	done  bool
}

// Create prepares the output at path. It refuses a path that is one of
// inputs (same file, through links and hard links too) or a directory. A
// FIFO without a reader is waited for until ctx ends.
func Create(ctx context.Context, path string, inputs []string) (*Output, error) {
	final, err := resolveLinks(path)
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, Problem(err))
	}
	o := &Output{path: path, final: final}
	st, err := os.Stat(final)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return o, o.createTemp(0o666)
	case err != nil:
		return nil, fmt.Errorf("cannot write %s: %w", path, Problem(err))
	}
	for _, in := range inputs {
		if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
			return nil, fmt.Errorf("refusing to write %s: it is the input %s (%w)", path, in, ErrIsInput)
		}
	}
	switch {
	case st.IsDir():
		return nil, fmt.Errorf("cannot write %s: is a directory", path)
	case st.Mode().IsRegular():
		o.keep = st
		return o, o.createTemp(st.Mode().Perm())
	}
	f, err := openSpecial(ctx, final)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("cannot write %s (%s): %w", path, Kind(st.Mode()), Problem(err))
	}
	o.f = f
	return o, nil
}

// resolveLinks follows path's symbolic links to the file they name, which
// need not exist yet (a dangling link is written through, as the shell's >
// does).
func resolveLinks(path string) (string, error) {
	for range maxLinks {
		st, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
}

// createTemp makes the temporary file beside the target, with perm (the
// umask applies, as to any new file; Commit restores a replaced file's
// exact mode).
func (o *Output) createTemp(perm fs.FileMode) error {
	dir, base := filepath.Dir(o.final), filepath.Base(o.final)
	if st, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot write %s: directory %s does not exist", o.path, dir)
		}
		return fmt.Errorf("cannot write %s: %w", o.path, Problem(err))
	} else if !st.IsDir() {
		return fmt.Errorf("cannot write %s: %s is not a directory", o.path, dir)
	}
	for range 100 {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(uint64(rand.Uint32()), 10)+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("cannot write %s: %w", o.path, Problem(err))
		}
		o.f, o.tmp = f, name
		return nil
	}
	return fmt.Errorf("cannot write %s: no free temporary name in %s", o.path, dir)
}

// openSpecial opens a FIFO or a device for writing. A FIFO with no reader
// refuses a non-blocking open (ENXIO): it is tried again until a reader
// comes or ctx ends, so that waiting for one is interruptible.
func openSpecial(ctx context.Context, path string) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			f.Fd() // back to blocking writes: a slow reader is waited for
			return f, nil
		}
		if !errors.Is(err, syscall.ENXIO) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Write writes to the file.
func (o *Output) Write(p []byte) (int, error) { return o.f.Write(p) }

// Path is the output's name as given.
func (o *Output) Path() string { return o.path }

// Commit finishes the file: a temporary file is flushed to disk, given the
// replaced file's mode and owner and renamed onto the target.
func (o *Output) Commit() error {
	if o.done {
		return nil
	}
	o.done = true
	if o.tmp == "" {
		if err := o.f.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", o.path, Problem(err))
		}
		return nil
	}
	err := o.f.Sync()
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil && o.keep != nil {
		err = keepModeAndOwner(o.tmp, o.keep)
	}
	if err == nil {
		err = os.Rename(o.tmp, o.final)
	}
	if err != nil {
		os.Remove(o.tmp)
		return fmt.Errorf("writing %s: %w", o.path, Problem(err))
	}
	return nil
}

// Abort drops an unfinished temporary file; a special file is only
// closed. It is a no-op after Commit.
func (o *Output) Abort() {
	if o.done {
		return
	}
	o.done = true
	o.f.Close()
	if o.tmp != "" {
		os.Remove(o.tmp)
	}
}

// keepModeAndOwner gives the new file the mode (permission, setuid,
// setgid and sticky bits) of the one it replaces, and its owner where the
// process may (as root; elsewhere the owner is the writer, as before).
func keepModeAndOwner(tmp string, old fs.FileInfo) error {
	mode := old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	if uid, gid, ok := owner(old); ok {
		if err := os.Chown(tmp, uid, gid); err != nil && !errors.Is(err, fs.ErrPermission) {
			return err
		}
	}
	return os.Chmod(tmp, mode)
}
