package classify

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nsyssync/nsyssync/internal/safefile"
)

// Where the classifier finds a program's Python files. A frame names a
// file of the profiled machine; the file is looked for, in order:
//
//  1. under Options.SourceRoot, by the path's suffixes, longest first;
//  2. at the recorded path itself (when absolute);
//  3. under the current directory, by suffix (/home/u/proj/train/loop.py →
//     ./home/u/proj/train/loop.py, …, ./train/loop.py, ./loop.py);
//  4. under the export's directory, by suffix.
//
// Places 2–4 only with Options.FindSources. A candidate is taken when it is
// a regular file named *.py (a symbolic link only when its target is one
// too), at most maxSourceBytes long, and long enough to hold the frame's
// line: a file of the same name with fewer lines is not the program's file,
// and the search goes on.

// maxSourceBytes bounds the size of a source file the classifier reads.
const maxSourceBytes = 8 << 20

// maxSuffixParts bounds how many of a path's suffixes are tried in each
// place: the last elements of the path, however deep it is.
const maxSuffixParts = 32

// maxSourceProbes bounds the candidate paths one classification looks at,
// so that an export naming thousands of files costs a bounded number of
// system calls.
const maxSourceProbes = 4096

// place is one place where program files are looked for.
type place struct {
	dir      string // searched by path suffix; "." is the current directory
	recorded bool   // the frame's own path, not a directory
}

// sourcePlaces lists where o looks for the program's files of the export
// at exportPath, in search order.
func (o Options) sourcePlaces(exportPath string) []place {
	var out []place
	if o.SourceRoot != "" {
		out = append(out, place{dir: o.SourceRoot})
	}
	if !o.FindSources {
		return out
	}
	out = append(out, place{recorded: true}, place{dir: "."})
	if exportPath != "" && len(exportPath) <= maxNameBytes {
		if d := filepath.Dir(exportPath); d != "." {
			out = append(out, place{dir: d})
		}
	}
	return out
}

// candidates lists the paths where a frame's file may be, in search
// order. A name that is not a .py file, longer than PATH_MAX
// (maxNameBytes), or with a ".." element has none.
func candidates(places []place, file string) []string {
	if len(file) > maxNameBytes || !strings.HasSuffix(file, ".py") {
		return nil
	}
	parts := strings.FieldsFunc(strings.ReplaceAll(file, `\`, "/"), func(r rune) bool { return r == '/' })
	for _, p := range parts {
		if p == ".." {
			return nil
		}
	}
	first := max(0, len(parts)-maxSuffixParts)
	var out []string
	for _, pl := range places {
		if pl.recorded {
			if filepath.IsAbs(file) {
				out = append(out, filepath.Clean(file))
			}
			continue
		}
		for i := first; i < len(parts); i++ {
			if strings.HasSuffix(parts[i], ":") { // a Windows drive letter
				continue
			}
			rel := filepath.Join(parts[i:]...)
			if pl.dir == "." {
				out = append(out, "."+string(filepath.Separator)+rel)
			} else {
				out = append(out, filepath.Join(pl.dir, rel))
			}
		}
	}
	return out
}

// Resolve finds a frame's file (a path from the profiled machine) under
// root by trying the path's suffixes, longest first:
// /home/u/proj/train.py → ROOT/home/u/proj/train.py, ROOT/u/proj/train.py,
// ROOT/proj/train.py, ROOT/train.py. It returns "" when none is a regular
// .py file. Suffixes never climb out of root.
func Resolve(root, file string) string {
	for _, c := range candidates([]place{{dir: root}}, file) {
		if target, err := pythonFile(c); err == nil && target != "" {
			return c
		}
	}
	return ""
}

// pythonFile says which file reading path would open: path itself, or
// the target of a link; "" (and no error) when nothing is there. It is an
// error when that is no regular *.py file.
func pythonFile(path string) (string, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return "", nil // nothing there: the usual case
	}
	target := path
	if st.Mode()&fs.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		if !strings.HasSuffix(target, ".py") {
			return "", fmt.Errorf("%s: links to %s, not a .py file", path, target)
		}
		if st, err = os.Stat(target); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: is %s, not a regular file", path, safefile.Kind(st.Mode()))
	}
	return target, nil
}

// readSource reads the lines of a program file found at path: nil, nil
// when nothing is there; an error naming path when it is no regular *.py
// file, is larger than maxSourceBytes or cannot be read. It never blocks
// on a FIFO.
func readSource(path string) ([]string, error) {
	target, err := pythonFile(path)
	if err != nil || target == "" {
		return nil, err
	}
	fh, err := safefile.OpenRegular(target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, safefile.Problem(err))
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	} else if st.Size() > maxSourceBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxSourceBytes)
	}
	var out []string
	sc := bufio.NewScanner(io.LimitReader(fh, maxSourceBytes)) // a file that grows stops at the bound
	sc.Buffer(make([]byte, 0, 64<<10), maxSourceBytes)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if out == nil {
		out = []string{} // an empty file is a file, of no line
	}
	return out, nil
}
