package classify

// The use of a value read back, on the parse tree of the program's file.
//
// The parser is tree-sitter's Python grammar (github.com/tree-sitter/tree-sitter-python)
// through tree-sitter's official Go bindings (github.com/tree-sitter/go-tree-sitter):
// both are maintained by the tree-sitter organisation, on the module proxy,
// and parse current Python (f-strings, `:=`, `match`, `type` aliases). Pure-Go
// parsers were looked at and rejected: go-python/gpython's parser is Python
// 3.4's grammar and fails on f-strings, `:=` and `match`;
// github.com/smacker/go-tree-sitter bundles an older grammar and is a
// third-party copy of the same C code. The bindings use cgo (the C runtime
// and the grammar's generated parser are compiled with the package).

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
	python "github.com/tree-sitter/tree-sitter-python/bindings/go"
)

var pyLanguage = sitter.NewLanguage(python.Language())

// readKind is how the program's line reads the value back.
type readKind int

const (
	readItem    readKind = iota // t.item()
	readInt                     // int(t)
	readFloat                   // float(t)
	readTolist                  // t.tolist()
	readTruth                   // bool(t), or t tested where it stands (if t:, min(a, b))
	readFormat                  // f"{t:.3f}", format(t, ...) (Tensor.__format__)
	readCall                    // a call of the function fn, which returned the value
	readCopy                    // t.cpu(), t.to("cpu"), t.numpy(), CuPy's x.get(), cupy.asnumpy(x): a copy to the host
	readPercent                 // "%.3f" % t (Tensor.__format__, through str's % operator)
)

// pyRead names the read to look for on a line.
type pyRead struct {
	kind  readKind
	fn    string // readCall's function
	entry string // readCall's: the dict entry its result holds the value in ("": the result itself)
}

// pyOutcome is what the tree says the line and its function do with the value.
type pyOutcome struct {
	use      Use
	returned bool   // only returned: the caller decides
	entry    string // returned in this entry of a dict (`return {"loss": v}`)
	// open: returned, and used another way that is not known: only a
	// caller's test or size decides (flow.open)
	open  bool
	lines []int // 1-based lines that show the use, the read's own line excluded
}

// pyUse parses a program file and works out the use of the value read by
// rd at line (1-based). parsed is false when the file does not parse.
func pyUse(src []byte, line int, rd pyRead, others otherFiles) (out pyOutcome, parsed bool) {
	p := sitter.NewParser()
	defer p.Close()
	if err := p.SetLanguage(pyLanguage); err != nil {
		return out, false
	}
	tree := p.Parse(src, nil)
	if tree == nil {
		return out, false
	}
	defer tree.Close()
	root := tree.RootNode()
	if root.HasError() {
		return out, false
	}
	return pyUseOn(src, root, line, rd, others), true
}

// pyUseOn is pyUse on a file already parsed (root: its module, without
// errors).
func pyUseOn(src []byte, root *sitter.Node, line int, rd pyRead, others otherFiles) (out pyOutcome) {
	budget := maxQuerySteps
	a := &pyAnalysis{src: src, root: root, row: uint(line - 1), tainted: map[string]bool{}, others: others, budget: &budget}
	switch {
	case others.prog != nil:
		a.methods = others.prog.methods
	case others.known && len(others.files) == 0: // a program of this one file
		a.methods = map[string]bool{}
		walkAll(root, func(n *sitter.Node) {
			if nm := n.ChildByFieldName("name"); nm != nil && n.Kind() == "function_definition" && enclosingClass(n) != nil {
				a.methods[a.text(nm)] = true
			}
		})
	}
	reads := a.findReads(root, rd)
	if len(reads) == 0 {
		if rd.kind == readTruth && a.testsOnRow(root) {
			return pyOutcome{use: UseBranch}
		}
		return out
	}
	for i, r := range reads {
		fl := a.followFrom(r, 0, rd.entry)
		o := pyOutcome{use: fl.use, returned: (fl.returned || fl.open) && fl.use == UseNone, open: fl.open, lines: fl.lines}
		if o.returned {
			o.entry = fl.entry
		}
		if fl.neutral && fl.use == UseLog {
			o.use = UseNone // only cycles back: nothing seen
		}
		if i > 0 && (o.use != out.use || o.returned != out.returned || o.entry != out.entry || o.open != out.open) {
			return pyOutcome{} // reads on the line disagree: which one synced is not known
		}
		out.use, out.returned, out.entry, out.open = o.use, o.returned, o.entry, o.open
		out.lines = appendLines(out.lines, o.lines, line)
	}
	return out
}

// maxQuerySteps bounds the work of one query: the parse-tree nodes its
// walks and climbs visit, in every file. A program whose classes read and
// store each other's attributes in every method can make the following
// of a value fan out; past the bound the answer is the cautious one (not
// known, or needed). The most any program under fixtures/ takes is about
// 445,000 (ps24_alarm_printed, every line and read kind asked).
const maxQuerySteps = 2_000_000

// spend takes n steps from the query's budget and says whether any were
// left.
func (a *pyAnalysis) spend(n int) bool {
	if a.budget == nil {
		return true
	}
	*a.budget -= n
	return *a.budget >= 0
}

// pyAnalysis holds one query's state.
type pyAnalysis struct {
	src         []byte
	root        *sitter.Node // the module
	row         uint
	tainted     map[string]bool   // variables being followed (assignments that loop back)
	calleeDepth int               // functions of the file the value was followed into (pyhelpers.go)
	numberDepth int               // names followed to tell whether they hold numbers (pynumbers.go)
	numberAttrs map[string]bool   // attributes being asked whether they hold numbers (pynumbers.go)
	others      otherFiles        // the program's other files (pyelsewhere.go)
	onwardDepth int               // attributes a read was followed on into (pyelsewhere.go)
	methodDepth int               // methods of the program's classes the value was followed into (pymethods.go, pystate.go)
	methods     map[string]bool   // the methods the program's classes define; nil when the program is not known
	pureDepth   int               // methods followed to tell whether they only compute (pypure.go)
	budget      *int              // steps left to the query, shared with the analyses of other files (spend)
	uncalled    map[uint]bool     // methods no code calls, by their def's first byte (pydead.go)
	unusedTop   map[uint]bool     // a module's top-level definitions no code names, likewise
	builtin     map[string]bool   // whether a name is Python's builtin in this file (typeTestOf)
	deciding    map[string]bool   // attributes and methods whose reads are being asked whether they decide (pyelsewhere.go)
	tests       *testMemo         // tests being followed and answered (testFlow), shared by a program's analyses
	dropped     map[nodeSpan]bool // functions whose result the call being walked drops (recordingCall), shared likewise
}

func (a *pyAnalysis) text(n *sitter.Node) string { return n.Utf8Text(a.src) }

// spansRow says whether n covers the analysed row.
func (a *pyAnalysis) spansRow(n *sitter.Node) bool {
	return n.StartPosition().Row <= a.row && a.row <= n.EndPosition().Row
}

// walkRow calls fn on every node that covers the row, outer first.
func (a *pyAnalysis) walkRow(n *sitter.Node, fn func(n *sitter.Node)) {
	if !a.spansRow(n) {
		return
	}
	fn(n)
	for i := uint(0); i < n.NamedChildCount(); i++ {
		a.walkRow(n.NamedChild(i), fn)
	}
}

// findReads returns the expressions on the row that read the value: those
// starting on the row, or failing that those covering it.
func (a *pyAnalysis) findReads(root *sitter.Node, rd pyRead) []*sitter.Node {
	var on, over []*sitter.Node
	a.walkRow(root, func(n *sitter.Node) {
		if a.isRead(n, rd) {
			if n.StartPosition().Row == a.row || n.EndPosition().Row == a.row {
				on = append(on, n)
			} else {
				over = append(over, n)
			}
		}
	})
	if len(on) > 0 {
		return on
	}
	return over
}

// isRead says whether n is an expression that reads the value as rd does.
func (a *pyAnalysis) isRead(n *sitter.Node, rd pyRead) bool {
	switch n.Kind() {
	case "string":
		return rd.kind == readFormat && hasChildKind(n, "interpolation")
	case "binary_operator":
		left, op := n.ChildByFieldName("left"), n.ChildByFieldName("operator")
		return rd.kind == readPercent && left != nil && left.Kind() == "string" && op != nil && a.text(op) == "%"
	case "call":
	default:
		return false
	}
	fn, args := n.ChildByFieldName("function"), n.ChildByFieldName("arguments")
	if fn == nil || args == nil || args.Kind() != "argument_list" {
		return false
	}
	name, method := a.callName(fn)
	nargs := args.NamedChildCount()
	switch rd.kind {
	case readItem:
		return method && name == "item" && nargs == 0
	case readTolist:
		return method && name == "tolist" && nargs == 0
	case readInt:
		return !method && name == "int" && nargs == 1
	case readFloat:
		return !method && name == "float" && nargs == 1
	case readTruth:
		return !method && name == "bool" && nargs == 1
	case readFormat:
		return name == "format" && nargs >= 1
	case readCall:
		return name == rd.fn
	case readCopy:
		// torch: t.cpu(), t.numpy(), t.to("cpu"); CuPy: x.get() (no key:
		// not dict.get), cupy.asnumpy(x)
		return method && ((name == "cpu" || name == "numpy") && nargs == 0 || name == "to" && strings.Contains(a.text(args), "cpu") ||
			name == "get" && !hasPositional(args) || name == "asnumpy" && nargs >= 1)
	}
	return false
}

// callName returns a call's function name (the attribute for a method) and
// whether it is a method.
func (a *pyAnalysis) callName(fn *sitter.Node) (string, bool) { return callNameBy(fn, a.text) }

// callNameBy is callName with the source text read by text.
func callNameBy(fn *sitter.Node, text func(*sitter.Node) string) (string, bool) {
	if fn == nil {
		return "", false
	}
	switch fn.Kind() {
	case "identifier":
		return text(fn), false
	case "attribute":
		if at := fn.ChildByFieldName("attribute"); at != nil {
			return text(at), true
		}
	}
	return "", false
}

// testsOnRow says whether the row tests a truth value where it stands: the
// condition of an if/elif/while, an assert, a conditional expression,
// and/or/not, or min/max/sorted/any/all (which compare or test their items).
func (a *pyAnalysis) testsOnRow(root *sitter.Node) bool {
	found := false
	a.walkRow(root, func(n *sitter.Node) {
		switch n.Kind() {
		case "if_statement", "elif_clause", "while_statement":
			if c := n.ChildByFieldName("condition"); c != nil && a.spansRow(c) {
				found = true
			}
		case "assert_statement", "conditional_expression", "boolean_operator", "not_operator":
			found = true
		case "call":
			if fn := n.ChildByFieldName("function"); fn != nil {
				if name, method := a.callName(fn); !method && (name == "min" || name == "max" || name == "sorted" || name == "any" || name == "all") {
					found = true
				}
			}
		}
	})
	return found
}

func hasChildKind(n *sitter.Node, kind string) bool {
	for i := uint(0); i < n.NamedChildCount(); i++ {
		if n.NamedChild(i).Kind() == kind {
			return true
		}
	}
	return false
}

// appendLines adds the lines of more not yet in to, leaving out skip.
func appendLines(to, more []int, skip int) []int {
	for _, l := range more {
		dup := l == skip
		for _, m := range to {
			dup = dup || m == l
		}
		if !dup {
			to = append(to, l)
		}
	}
	return to
}
