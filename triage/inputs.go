package triage

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/internal/safefile"
)

// Extensions of the inputs a directory walk picks up.
const (
	SQLiteExt   = ".sqlite"
	SQLiteGzExt = ".sqlite.gz" // a gzipped export, which trace.Open unpacks
	NsysRepExt  = ".nsys-rep"
)

// Input is one export to analyse, or an argument that named none.
type Input struct {
	// Path as found: the argument itself, or a file under a walked
	// directory or matched by a pattern.
	Path string
	// Problem, when set, says why the argument names no export (a pattern
	// that matched nothing, an unreadable directory); Batch reports it as
	// the input's failure.
	Problem error
}

// Expand turns arguments into inputs. A directory is walked for *.sqlite,
// *.sqlite.gz and *.nsys-rep files (a .sqlite.gz or .nsys-rep beside a
// .sqlite of the same name, and a .nsys-rep beside a .sqlite.gz, are
// skipped: they are the same trace), a pattern with * ? or [ is expanded with
// filepath.Glob, and anything else is taken as a file, to be reported by
// Batch if it cannot be read. Inputs keep the order of the arguments, files
// of one directory or pattern sorted, each path once.
func Expand(args []string) []Input {
	var out []Input
	seen := map[string]bool{}
	add := func(in Input) {
		key := filepath.Clean(in.Path)
		if in.Problem == nil && seen[key] {
			return
		}
		seen[key] = true
		out = append(out, in)
	}
	for _, arg := range args {
		st, err := os.Stat(arg)
		switch {
		case err == nil && st.IsDir():
			files, problems := walkExports(arg)
			for _, p := range problems {
				add(Input{Path: arg, Problem: p})
			}
			if len(problems) == 0 && len(files) == 0 {
				add(Input{Path: arg, Problem: fmt.Errorf("%s: directory holds no *%s, *%s or *%s file", arg, SQLiteExt, SQLiteGzExt, NsysRepExt)})
			}
			for _, f := range files {
				add(Input{Path: f})
			}
		case err != nil && hasMeta(arg):
			matches, err := filepath.Glob(arg)
			if err != nil {
				add(Input{Path: arg, Problem: fmt.Errorf("%s: bad pattern: %w", arg, err)})
				continue
			}
			if len(matches) == 0 {
				add(Input{Path: arg, Problem: fmt.Errorf("%s: no file matches", arg)})
			}
			for _, m := range matches {
				add(Input{Path: m})
			}
		default:
			add(Input{Path: arg})
		}
	}
	return out
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// walkExports lists the exports under dir, sorted. A directory that
// cannot be read is a problem of its own; the walk goes on around it.
func walkExports(dir string) ([]string, []error) {
	var files []string
	var problems []error
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: cannot read: %w", path, fileProblem(err)))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if name := d.Name(); strings.HasSuffix(name, SQLiteExt) || strings.HasSuffix(name, SQLiteGzExt) || strings.HasSuffix(name, NsysRepExt) {
			files = append(files, path)
		}
		return nil
	})
	slices.Sort(files)
	// A report and its SQLite export, or an export and its gzipped copy:
	// analyse the export only.
	plain, gzipped := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, SQLiteExt):
			plain[strings.TrimSuffix(f, SQLiteExt)] = true
		case strings.HasSuffix(f, SQLiteGzExt):
			gzipped[strings.TrimSuffix(f, SQLiteGzExt)] = true
		}
	}
	return slices.DeleteFunc(files, func(f string) bool {
		switch {
		case strings.HasSuffix(f, SQLiteGzExt):
			return plain[strings.TrimSuffix(f, SQLiteGzExt)]
		case strings.HasSuffix(f, NsysRepExt):
			stem := strings.TrimSuffix(f, NsysRepExt)
			return plain[stem] || gzipped[stem]
		}
		return false
	}), problems
}

// Shard selects a deterministic share of the inputs: shard Index of Count
// keeps the inputs whose base name hashes to Index modulo Count. The base
// name alone decides, so every machine of an array job splits a night the
// same way whatever directory the traces sit in. The zero Shard keeps
// everything.
type Shard struct {
	Index, Count int
}

// ParseShard reads "i/n" with 0 <= i < n (a Kubernetes indexed Job's
// $JOB_COMPLETION_INDEX, or $SLURM_ARRAY_TASK_ID of an array 0-(n-1)).
func ParseShard(spec string) (Shard, error) {
	i, n, ok := strings.Cut(spec, "/")
	if !ok {
		return Shard{}, fmt.Errorf("--shard %q: want i/n, e.g. 0/4", spec)
	}
	index, err1 := strconv.Atoi(strings.TrimSpace(i))
	count, err2 := strconv.Atoi(strings.TrimSpace(n))
	if err := errors.Join(err1, err2); err != nil {
		return Shard{}, fmt.Errorf("--shard %q: want i/n with whole numbers", spec)
	}
	if count < 1 || index < 0 || index >= count {
		return Shard{}, fmt.Errorf("--shard %q: want 0 <= i < n", spec)
	}
	return Shard{Index: index, Count: count}, nil
}

// Keeps reports whether the shard takes the file at path.
func (s Shard) Keeps(path string) bool {
	if s.Count <= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(filepath.Base(path)))
	return h.Sum64()%uint64(s.Count) == uint64(s.Index)
}

// Select returns the inputs the shard takes. Arguments that named no
// export are kept by shard 0 only, so that they are reported once.
func (s Shard) Select(inputs []Input) []Input {
	var out []Input
	for _, in := range inputs {
		if in.Problem != nil {
			if s.Index == 0 {
				out = append(out, in)
			}
			continue
		}
		if s.Keeps(in.Path) {
			out = append(out, in)
		}
	}
	return out
}

// String writes the shard as ParseShard reads it.
func (s Shard) String() string {
	if s.Count <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// fileProblem returns what went wrong in a file-system error without the
// path it repeats ("no such file or directory"), or err itself.
func fileProblem(err error) error { return safefile.Problem(err) }
