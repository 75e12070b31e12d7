package classify

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// maxStatementLines bounds how far a statement is followed across lines.
const maxStatementLines = 20

// sourceReader finds the program files that Python frames name (see
// candidates for where it looks) and reads their lines, once per file.
type sourceReader struct {
	// program: the captured program's files (nil: not known), which say
	// whether an attribute a file stores is read elsewhere.
	program *leanReads
	places  []place
	found   map[string][]*sourceFile // frame file → the readable candidates, in search order
	probes  int                      // candidate paths looked at so far (maxSourceProbes)
}

// sourceFile is one file's lines and, for each line, the first line of the
// statement it belongs to.
type sourceFile struct {
	path   string // where it was read, as the search built it (./train/loop.py)
	lines  []string
	starts []int
	py     map[pyKey]pyCached // pyUse's answers, by line and read
}

type pyKey struct {
	line int
	read pyRead
}

type pyCached struct {
	out    pyOutcome
	parsed bool
}

// pyUse is pyUse on this file, once per line and read.
func (f *sourceFile) pyUse(line int, rd pyRead, others otherFiles) (pyOutcome, bool) {
	k := pyKey{line, rd}
	if c, ok := f.py[k]; ok {
		return c.out, c.parsed
	}
	out, parsed := pyUse([]byte(strings.Join(f.lines, "\n")), line, rd, others)
	if f.py == nil {
		f.py = map[pyKey]pyCached{}
	}
	f.py[k] = pyCached{out, parsed}
	return out, parsed
}

// pyUseOn is pyUse on this file already parsed (root, from src: its lines
// joined), sharing pyUse's answers.
func (f *sourceFile) pyUseOn(src []byte, root *sitter.Node, line int, rd pyRead, others otherFiles) pyOutcome {
	k := pyKey{line, rd}
	if c, ok := f.py[k]; ok {
		return c.out
	}
	out := pyUseOn(src, root, line, rd, others)
	if f.py == nil {
		f.py = map[pyKey]pyCached{}
	}
	f.py[k] = pyCached{out, true}
	return out
}

// newSourceReader returns a reader of the places o names for the export
// at exportPath; nil when there is none.
func newSourceReader(o Options, exportPath string) *sourceReader {
	places := o.sourcePlaces(exportPath)
	if len(places) == 0 {
		return nil
	}
	return &sourceReader{places: places, found: map[string][]*sourceFile{}}
}

// file returns the first readable candidate of a frame's file that holds
// its line, nil when none does.
func (r *sourceReader) file(file string, line int64) *sourceFile {
	if len(file) > maxNameBytes {
		return nil // no such file; not worth hashing for the map either
	}
	files, ok := r.found[file]
	if !ok {
		files = r.readCandidates(file)
		r.found[file] = files
	}
	for _, f := range files {
		if line <= int64(len(f.lines)) {
			return f
		}
	}
	return nil
}

// readCandidates reads every candidate of a frame's file that is a
// readable program file, in search order, within the probe budget.
func (r *sourceReader) readCandidates(file string) []*sourceFile {
	var out []*sourceFile
	for _, c := range candidates(r.places, file) {
		if r.probes >= maxSourceProbes {
			break
		}
		r.probes++
		if lines, err := readSource(c); err == nil && lines != nil {
			out = append(out, &sourceFile{path: c, lines: lines, starts: statementStarts(lines)})
		}
	}
	return out
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

// statement is the Python statement around one line of a file.
type statement struct {
	file   string   // the frame's file
	path   string   // the file read for it
	line   int64    // the frame's line (1-based)
	first  int      // index of the statement's first line
	last   int      // index of its last line
	text   string   // the statement on one line, comments dropped
	indent int      // indentation of its first line
	lines  []string // the whole file
}

// statement returns the whole statement that line belongs to, on one line.
func (r *sourceReader) statement(file string, line int64) (statement, bool) {
	f := r.file(file, line)
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
	return statement{file: file, path: f.path, line: line, first: first, last: last, text: text, indent: indentOf(lines[first]), lines: lines}, text != ""
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
