package classify

import (
	"fmt"
	"regexp"
	"strings"
)

// Use is what a program's line does with a value it read from the GPU.
type Use int

// Uses of a value read back.
const (
	UseNone   Use = iota // not known, or not asked
	UseBranch            // decides an if/elif/while/assert or a conditional expression
	UseLog               // printed, logged, formatted, appended or accumulated
	UseShape             // sizes a tensor or a loop (torch.empty(n), range(n), x[:n], split(x, sizes))
	UseLater             // kept in a container the program reads only once the loop that fills it is over
)

// maxCallerFrames bounds how far a returned value is followed up the stack.
const maxCallerFrames = 3

// maxLookahead bounds how many lines after an assignment are searched for
// the variable's first use.
const maxLookahead = 25

// logCalls are the marks of a line that logs or keeps a value for later.
var logCalls = []string{"print(", "log(", ".log(", "logger.", "logging.", ".info(", ".debug(", ".warning(", ".warn(",
	"add_scalar", "add_scalars", "wandb.", ".write(", "set_postfix", "set_description", ".append(", ".extend(",
	"format(", "str(", "repr(", "f\"", "f'", "tqdm"}

var (
	assignRe  = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]+)?=[^=]`)
	augmentRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.\[\]]*\s*(\+|-|\*|/)=`)
)

// useResult is what was found, with the lines that show it.
type useResult struct {
	use      Use
	evidence []string
}

// useOfValue works out, from the program's source, what happens to the
// value the sync read: the line of the innermost program frame, then —
// when that line returns it — the caller's line, and — when it assigns it
// — the variable's first later use. Nil when no source is available.
func (f *facts) useOfValue() *useResult {
	if f.useSet {
		return f.use
	}
	f.useSet = true
	if f.src == nil || len(f.own) == 0 {
		return nil
	}
	if u, ok := f.useFromTree(); ok {
		f.use = u
		return u
	}
	if !f.readsItem() && f.nativeFrame("THPVariable_is_nonzero") < 0 && f.nativeFrame("THPVariable_bool") < 0 {
		return nil // the lines' regexes know .item() and truth tests only
	}
	marker := ""
	if f.readsItem() {
		marker = ".item()"
	}
	var ev []string
	for depth, fr := range f.own {
		if depth > maxCallerFrames {
			break
		}
		st, ok := f.src.statement(fr.File, fr.Line)
		if !ok {
			return nil
		}
		ev = append(ev, lineEvidence(&st))
		use, name := classifyStatement(st.text, marker)
		switch {
		case use == UseBranch || use == UseLog:
			f.use = &useResult{use: use, evidence: ev}
			return f.use
		case name == "return":
			if len(fr.Function) > maxNameBytes {
				return nil // no source line calls it
			}
			marker = fr.Function + "(" // the caller calls this function
			continue
		case name != "":
			if u, e, ok := firstUse(&st, name); ok {
				f.use = &useResult{use: u, evidence: append(ev, e)}
				return f.use
			}
		}
		return nil
	}
	return nil
}

// useFromTree works the use out on the parse tree of the program's files
// (pyUse): the innermost program frame's line, then, while the value is
// returned, its caller's (when it was also used another way not known,
// only the caller's test or size decides). ok is false when the first file does not parse,
// for the line's regexes to try.
func (f *facts) useFromTree() (u *useResult, ok bool) {
	rd := f.pyRead()
	var ev []string
	open := false // returned on the way while used another way not known
	for depth, fr := range f.own {
		if depth > maxCallerFrames {
			break
		}
		sf := f.src.file(fr.File, fr.Line)
		if sf == nil {
			return nil, depth > 0
		}
		o, parsed := f.src.program.useAt(sf, int(fr.Line), rd)
		if !parsed {
			return nil, depth > 0
		}
		if st, ok := f.src.statement(fr.File, fr.Line); ok {
			ev = append(ev, lineEvidence(&st))
		}
		for i, l := range o.lines {
			if i == 2 || l < 1 || l > len(sf.lines) {
				break
			}
			ev = append(ev, fmt.Sprintf("then Python line `%s` (%s:%d)", clip(strings.TrimSpace(stripComment(sf.lines[l-1]))), displayFile(fr.File), l))
		}
		switch {
		case o.use != UseNone && open && o.use != UseBranch && o.use != UseShape:
			return nil, true // its other use on the way is not known: only a test or a size decides
		case o.use != UseNone:
			return &useResult{use: o.use, evidence: ev}, true
		case o.returned && len(fr.Function) <= maxNameBytes && fr.Function != "<module>":
			open = open || o.open
			rd = pyRead{kind: readCall, fn: fr.Function, entry: o.entry} // the caller calls this function
			continue
		}
		return nil, true
	}
	return nil, true
}

// pyRead says how the program's line read the value, from the native and
// torch frames.
func (f *facts) pyRead() pyRead {
	for _, fr := range f.torch {
		if fr.Function == "__format__" {
			return pyRead{kind: readFormat}
		}
	}
	switch {
	case f.readsItem():
		return pyRead{kind: readItem}
	case f.nativeFrame("THPVariable_tolist") >= 0:
		return pyRead{kind: readTolist}
	case f.nativeFrame("THPVariable_integral_scalar") >= 0:
		return pyRead{kind: readInt}
	case f.nativeFrame("THPVariable_float_scalar") >= 0:
		return pyRead{kind: readFloat}
	case f.nativeFrame("THPVariable_cpu") >= 0, f.nativeFrame("THPVariable_numpy") >= 0, f.nativeFrame("THPVariable_to") >= 0:
		return pyRead{kind: readCopy}
	}
	return pyRead{kind: readTruth}
}

// readsItem reports whether the sync is a Python .item() call.
func (f *facts) readsItem() bool {
	return f.nativeFrame("THPVariable_item") >= 0
}

// classifyStatement says how a statement uses the value that marker
// (".item()", "f(") produces, or with an empty marker the statement's own
// truth test. name is "return" for a return statement and the variable's
// name for an assignment.
func classifyStatement(text, marker string) (use Use, name string) {
	t := strings.TrimSpace(text)
	for _, kw := range []string{"if ", "elif ", "while "} {
		if strings.HasPrefix(t, kw) {
			cond, body := splitTopColon(t[len(kw):])
			if marker == "" || strings.Contains(cond, marker) {
				return UseBranch, ""
			}
			if body != "" {
				return classifyStatement(body, marker)
			}
			return UseNone, ""
		}
	}
	if strings.HasPrefix(t, "assert ") {
		return UseBranch, ""
	}
	if i := strings.Index(t, " if "); i >= 0 && strings.Contains(t[i:], " else ") && (marker == "" || strings.Contains(t[i:], marker)) {
		return UseBranch, ""
	}
	if strings.HasPrefix(t, "return ") || t == "return" {
		for _, m := range logCalls {
			if strings.Contains(t, m) {
				return UseLog, ""
			}
		}
		return UseNone, "return"
	}
	if augmentRe.MatchString(t) {
		return UseLog, ""
	}
	for _, m := range logCalls {
		if strings.Contains(t, m) {
			return UseLog, ""
		}
	}
	if m := assignRe.FindStringSubmatch(t); m != nil {
		return UseNone, m[1]
	}
	return UseNone, ""
}

// splitTopColon splits "cond: body" at the first colon outside brackets
// and strings.
func splitTopColon(s string) (cond, body string) {
	depth := 0
	at := -1
	scanPython(s, func(i int, c byte, code bool) {
		if !code || at >= 0 {
			return
		}
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ':':
			if depth == 0 {
				at = i
			}
		}
	})
	if at < 0 {
		return s, ""
	}
	return s[:at], strings.TrimSpace(s[at+1:])
}

// firstUse finds the first later line of the block that reads the variable
// name and classifies it.
func firstUse(st *statement, name string) (Use, string, bool) {
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	for j := st.last + 1; j < len(st.lines) && j <= st.last+maxLookahead; j++ {
		l := st.lines[j]
		code := strings.TrimSpace(stripComment(l))
		if code == "" {
			continue
		}
		if ind := indentOf(l); ind < st.indent || (ind == 0 && st.indent > 0) {
			return UseNone, "", false // left the block
		}
		if !word.MatchString(code) {
			continue
		}
		if m := assignRe.FindStringSubmatch(code); m != nil && m[1] == name {
			return UseNone, "", false // overwritten first
		}
		use, _ := classifyStatement(code, name)
		if use == UseNone {
			return UseNone, "", false
		}
		return use, fmt.Sprintf("then Python line `%s` (%s:%d)", clip(code), displayFile(st.file), j+1), true
	}
	return UseNone, "", false
}

func lineEvidence(st *statement) string {
	return fmt.Sprintf("Python line `%s` (%s:%d)", clip(st.text), displayFile(st.file), st.line)
}

// sourcePrefix opens the evidence line that names the file read.
const sourcePrefix = "source read from "

// sourceEvidence names the file a statement was read from.
func sourceEvidence(st *statement) string {
	return fmt.Sprintf("%s%s:%d", sourcePrefix, shownFile(st.path), st.line)
}

// clip shortens a source statement for a report line.
func clip(s string) string {
	const max = 100
	if len(s) <= max {
		return s
	}
	return s[:max-1] + "…"
}
