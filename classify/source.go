package classify

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// maxSourceBytes bounds the size of a source file the classifier reads.
const maxSourceBytes = 8 << 20

// maxStatementLines bounds how far a statement is followed across lines.
const maxStatementLines = 20

// sourceReader finds a Python frame's file under a source root and reads
// its lines, once per file.
type sourceReader struct {
	root     string
	resolved map[string]string      // frame file → path under root ("" when absent)
	files    map[string]*sourceFile // path → its lines (nil when unreadable)
}

// sourceFile is one file's lines and, for each line, the first line of the
// statement it belongs to.
type sourceFile struct {
	lines  []string
	starts []int
}

func newSourceReader(root string) *sourceReader {
	if root == "" {
		return nil
	}
	return &sourceReader{root: root, resolved: map[string]string{}, files: map[string]*sourceFile{}}
}

// Resolve finds a frame's file (a path from the profiled machine) under
// root by trying the path's suffixes, longest first:
// /home/u/proj/train.py → ROOT/home/u/proj/train.py, ROOT/u/proj/train.py,
// ROOT/proj/train.py, ROOT/train.py. It returns "" when none is a regular
// file. Suffixes never climb out of root. A name longer than PATH_MAX
// (maxNameBytes) names no file and is not split.
func Resolve(root, file string) string {
	if len(file) > maxNameBytes {
		return ""
	}
	parts := strings.FieldsFunc(filepath.ToSlash(strings.ReplaceAll(file, `\`, "/")), func(r rune) bool { return r == '/' })
	for _, p := range parts {
		if p == ".." {
			return ""
		}
	}
	for i := range parts {
		if strings.HasSuffix(parts[i], ":") { // a Windows drive letter
			continue
		}
		candidate := filepath.Join(append([]string{root}, parts[i:]...)...)
		if st, err := os.Stat(candidate); err == nil && st.Mode().IsRegular() {
			return candidate
		}
	}
	return ""
}

// file returns a frame's file, nil when it is not found.
func (r *sourceReader) file(file string) *sourceFile {
	if len(file) > maxNameBytes {
		return nil // no such file; not worth hashing for the map either
	}
	p, ok := r.resolved[file]
	if !ok {
		p = Resolve(r.root, file)
		r.resolved[file] = p
	}
	if p == "" {
		return nil
	}
	if f, ok := r.files[p]; ok {
		return f
	}
	var f *sourceFile
	if lines := readLines(p); lines != nil {
		f = &sourceFile{lines: lines, starts: statementStarts(lines)}
	}
	r.files[p] = f
	return f
}

// statementStarts maps each line to the first line of its statement: a
// statement goes on while brackets are open or a line ends in a backslash.
func statementStarts(lines []string) []int {
	starts := make([]int, len(lines))
	depth, cont, cur := 0, false, 0
	for i, l := range lines {
		if depth <= 0 && !cont {
			cur, depth = i, 0
		}
		starts[i] = cur
		depth += depthOf(l)
		cont = strings.HasSuffix(strings.TrimRight(stripComment(l), " \t"), `\`)
	}
	return starts
}

func readLines(p string) []string {
	fh, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil || st.Size() > maxSourceBytes {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 0, 64<<10), maxSourceBytes)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if sc.Err() != nil {
		return nil
	}
	return out
}

// statement is the Python statement around one line of a file.
type statement struct {
	file   string   // the frame's file
	line   int64    // the frame's line (1-based)
	first  int      // index of the statement's first line
	last   int      // index of its last line
	text   string   // the statement on one line, comments dropped
	indent int      // indentation of its first line
	lines  []string // the whole file
}

// statement returns the whole statement that line belongs to, on one line.
func (r *sourceReader) statement(file string, line int64) (statement, bool) {
	f := r.file(file)
	if f == nil {
		return statement{}, false
	}
	lines := f.lines
	at := int(line) - 1
	if at < 0 || at >= len(lines) {
		return statement{}, false
	}
	first := f.starts[at]
	if at-first > maxStatementLines {
		first = at
	}
	last := at
	for last+1 < len(lines) && last-first < maxStatementLines && f.starts[last+1] == first {
		last++
	}
	var parts []string
	for _, l := range lines[first : last+1] {
		parts = append(parts, strings.TrimSuffix(strings.TrimSpace(stripComment(l)), `\`))
	}
	text := strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	return statement{file: file, line: line, first: first, last: last, text: text, indent: indentOf(lines[first]), lines: lines}, text != ""
}

// scanPython walks a line of Python outside string literals, calling fn
// with each character and whether it is code; it stops at a comment.
func scanPython(line string, fn func(i int, c byte, code bool)) {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			fn(i, c, false)
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '#':
			return
		case c == '\'' || c == '"':
			quote = c
			fn(i, c, false)
		default:
			fn(i, c, true)
		}
	}
}

// stripComment drops a trailing # comment.
func stripComment(line string) string {
	end := 0
	scanPython(line, func(i int, _ byte, _ bool) { end = i + 1 })
	return line[:end]
}

// depthOf counts bracket opens minus closes in a line, outside strings.
func depthOf(line string) int {
	d := 0
	scanPython(line, func(_ int, c byte, code bool) {
		if !code {
			return
		}
		switch c {
		case '(', '[', '{':
			d++
		case ')', ']', '}':
			d--
		}
	})
	return d
}

func indentOf(line string) int {
	return len(line) - len(strings.TrimLeft(line, " \t"))
}
