package classify

// An attribute outlives the file that stores it: `self.last = x.item()` in
// a module's class may be tested by the script through the object
// (`if meter.last > 3: break`). Whether the attribute's value may be
// needed is therefore read from every file of the program, not only the
// one that stores it: the script of the captured command line and the
// local modules it imports (leanprogram.go). Where those files are not
// known (no command line, a program that imports code this analysis does
// not read), an attribute's value may be needed anywhere.

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// otherFiles is what a query knows of the program's other files.
type otherFiles struct {
	// known: files holds every other file of the program; otherwise any
	// of the program's code may read an attribute.
	known bool
	files []*parsedFile
	// prog and self: the program and the file analysed, when it is one of
	// the program's (nil otherwise), for the program's classes and their
	// methods (pymethods.go).
	prog *programTrees
	self *parsedFile
}

// attributeReadElsewhere says whether a read of an attribute named name in
// one of the program's other files may need its value (needsContents, in
// that file), or whether those files are not known.
func (a *pyAnalysis) attributeReadElsewhere(name string) bool {
	if !a.others.known {
		return true
	}
	for _, pf := range a.others.files {
		if pf.attributeNeeded(name, a.budget) {
			return true
		}
	}
	return false
}

// attributeNeeded says whether a read of an attribute named name in pf may
// need its value, once per file and name: the program's files stay parsed
// for the whole analysis (leanReads.close).
func (pf *parsedFile) attributeNeeded(name string, budget *int) bool {
	if needed, ok := pf.attrNeeded[name]; ok {
		return needed
	}
	if pf.attrNeeded == nil {
		pf.attrNeeded = map[string]bool{}
	}
	pf.attrNeeded[name] = true // while it is worked out: a query that cycles back may need it
	needed := false
	if mentionsAttribute(pf.src, name) {
		// read with the program's other files known, on the query's
		// budget
		b := &pyAnalysis{src: pf.src, root: pf.root, row: ^uint(0), tainted: map[string]bool{}, methods: pf.methods,
			others: pf.prog.others(pf.path), budget: budget}
		needed = b.attributeReadIn(name)
		if budget != nil && *budget < 0 {
			delete(pf.attrNeeded, name) // cut short: not this file's answer to keep
			return true
		}
	}
	pf.attrNeeded[name] = needed
	return needed
}

// mentionsAttribute says whether src has `.name` anywhere, a cheap test
// before a parse.
func mentionsAttribute(src []byte, name string) bool {
	for i := 0; i+1+len(name) <= len(src); i++ {
		if src[i] != '.' || string(src[i+1:i+1+len(name)]) != name {
			continue
		}
		if j := i + 1 + len(name); j == len(src) || !isIdentByte(src[j]) {
			return true
		}
	}
	return false
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// maxOnwardDepth bounds how many attributes deep a value is followed
// (`self.total += self.last`, then total's reads).
const maxOnwardDepth = 4

// onwardShown says whether a read of an attribute only goes on into
// something that is itself only shown: the right side of an assignment
// (through arithmetic) to another attribute that no file of the program
// reads so that it may be needed, or to a variable every use of which only
// shows or keeps it. A read that goes anywhere else is not (false).
func (a *pyAnalysis) onwardShown(n *sitter.Node) bool {
	stmt, left := a.assignedFrom(n)
	if left == nil || a.onwardDepth >= maxOnwardDepth {
		return false
	}
	a.onwardDepth++
	defer func() { a.onwardDepth-- }()
	switch left.Kind() {
	case "attribute":
		if attrName(a, left) == attrName(a, n) {
			return true // it only feeds itself (`self.ema = 0.9 * self.ema + …`): its other reads decide
		}
		return !a.attributeNeeded(left)
	case "identifier":
		fl := a.taint(stmt, a.text(left), stmt.Kind() == "augmented_assignment", 0, "")
		if fl.returned && fl.use == UseNone {
			return a.methodResultShown(enclosingFunction(stmt)) // a local the method returns
		}
		return fl.use == UseLog || fl.use == UseLater
	}
	return false
}

// methodResultShown says whether def is a method of a class whose every
// read, in every file of the program, only shows what it returns.
func (a *pyAnalysis) methodResultShown(def *sitter.Node) bool {
	if def == nil || enclosingClass(def) == nil || def.ChildByFieldName("name") == nil || a.onwardDepth >= maxOnwardDepth {
		return false
	}
	a.onwardDepth++
	defer func() { a.onwardDepth-- }()
	m := a.text(def.ChildByFieldName("name"))
	return !a.attributeReadIn(m) && !a.attributeReadElsewhere(m)
}

// onlyRecorded says whether a read of an attribute named name, or the call
// it is the function of (`if notes.consider(v):`), is tested by an if
// whose arms only record (onlyRecords), or by one that picks the constant
// its method returns (recordsThenReturns) when every read of that method,
// in every file of the program, is itself only shown. A read met again
// while its attribute's reads are being followed (a best-so-far test,
// `if v < self.best: self.best = v`, whose arm stores what it reads) only
// cycles back: it is taken as recorded, as a variable's is (taint).
func (a *pyAnalysis) onlyRecorded(n *sitter.Node, name string) bool {
	key := "attribute ." + name
	if a.tainted[key] {
		return true
	}
	v := n
	if p := n.Parent(); p != nil && p.Kind() == "call" && sameNode(p.ChildByFieldName("function"), n) {
		v = p
	}
	if !a.inTest(v) {
		return false
	}
	a.tainted[key] = true
	defer delete(a.tainted, key)
	if def := enclosingFunction(v); def != nil && enclosingClass(def) != nil {
		// the object's own state, tested by its own method: a test whose
		// arms only set state decides through what they set (pystate.go)
		a.methodDepth++
		defer func() { a.methodDepth-- }()
	}
	fl := a.follow(v, 0)
	switch {
	case keepsOnly(fl.use):
		return true
	case fl.returned && fl.use == UseNone:
		return a.methodResultShown(enclosingFunction(v))
	}
	return false
}

// inTest says whether n is part of the condition of an if or elif.
func (a *pyAnalysis) inTest(n *sitter.Node) bool {
	for v, p := n, n.Parent(); p != nil; v, p = p, p.Parent() {
		switch p.Kind() {
		case "if_statement", "elif_clause":
			return sameNode(p.ChildByFieldName("condition"), v)
		case "block", "expression_statement", "module", "function_definition", "class_definition":
			return false
		}
	}
	return false
}

// returnedShown says whether a read of an attribute is returned (through
// arithmetic or text) by a method or property of a class whose every read, in
// every file of the program, only shows what it returns: the method is
// read as an attribute of its name is (`obj.mean`, `obj.summary()`).
func (a *pyAnalysis) returnedShown(n *sitter.Node) bool {
	return a.methodResultShown(a.returnedBy(n))
}

// returnedBy is the method whose return statement n is part of through
// numbers or text only (carriesValue); nil when n goes elsewhere or the function
// is no class's.
func (a *pyAnalysis) returnedBy(n *sitter.Node) *sitter.Node {
	v := n
	for p := n.Parent(); p != nil; v, p = p, p.Parent() {
		if a.carriesValue(p, v) || p.Kind() == "call" && sameNode(p.ChildByFieldName("function"), v) {
			continue // `self.summary()`: what the method returns
		}
		if p.Kind() != "return_statement" {
			return nil
		}
		def := enclosingFunction(p)
		if def == nil || enclosingClass(def) == nil {
			return nil
		}
		return def
	}
	return nil
}

// assignedFrom returns the assignment whose right side n is part of
// through numbers or text only (carriesValue) or as the method called (`x =
// obj.summary()`), and its target; nil when n goes elsewhere.
func (a *pyAnalysis) assignedFrom(n *sitter.Node) (stmt, left *sitter.Node) {
	v := n
	for p := n.Parent(); p != nil; v, p = p, p.Parent() {
		switch {
		case a.carriesValue(p, v):
			continue
		case p.Kind() == "call" && sameNode(p.ChildByFieldName("function"), v):
			continue
		case (p.Kind() == "assignment" || p.Kind() == "augmented_assignment") && sameNode(p.ChildByFieldName("right"), v):
			return p, p.ChildByFieldName("left")
		}
		return nil, nil
	}
	return nil, nil
}

// numericBuiltins take numbers and give one of them or a number made from
// them, and nothing else.
var numericBuiltins = map[string]bool{"max": true, "min": true, "abs": true, "round": true, "float": true, "int": true}

// textBuiltins make text of what they are handed.
var textBuiltins = map[string]bool{"str": true, "repr": true, "format": true}

// viewMethods give a view of a dict's contents.
var viewMethods = map[string]bool{"items": true, "values": true, "keys": true}

// carriesValue says whether p, the parent of v, hands v's value on as a
// number or as text: arithmetic, parentheses, a sign, an arm of a
// conditional expression, a call of max, min, abs, round, float or int
// that v is an argument of (`self.largest = max(self.largest,
// self.last)`); an f-string's interpolation, a text made of it (str,
// repr, format, a string's join or format), a dict's view (`.items()`)
// and a comprehension over it whose body and clauses call nothing but
// conversions (`" ".join(f"{k}={v}" for k, v in self.counts.items())`).
func (a *pyAnalysis) carriesValue(p, v *sitter.Node) bool {
	switch p.Kind() {
	case "binary_operator", "parenthesized_expression", "unary_operator", "argument_list", "concatenated_string",
		"tuple", "expression_list", "list":
		return true // an argument list: its call decides; a tuple or list literal: where it goes does
	case "conditional_expression":
		// either arm's value goes on; the condition is a test, unless it
		// only picks a value (`"yes" if self.alarm else "no"`)
		return !sameNode(p.NamedChild(1), v) || a.picksText(p) || a.picksPlain(p)
	case "comparison_operator", "not_operator":
		return true // a bool made of it
	case "boolean_operator":
		return a.callFree(p) // `a or b`: a bool of both, unless it decides whether a call runs
	case "interpolation":
		return sameNode(p.ChildByFieldName("expression"), v)
	case "string":
		return v.Kind() == "interpolation"
	case "for_in_clause":
		return sameNode(p.ChildByFieldName("right"), v) // into the targets: the comprehension decides
	case "generator_expression", "list_comprehension":
		return a.plainComprehension(p)
	case "attribute":
		call := p.Parent()
		return sameNode(p.ChildByFieldName("object"), v) && viewMethods[attrName(a, p)] &&
			call != nil && call.Kind() == "call" && sameNode(call.ChildByFieldName("function"), p)
	case "call":
		name, method := a.callName(p.ChildByFieldName("function"))
		if sameNode(p.ChildByFieldName("function"), v) {
			return method && viewMethods[name]
		}
		if sameNode(p.ChildByFieldName("arguments"), v) {
			if method {
				obj := p.ChildByFieldName("function").ChildByFieldName("object")
				return (name == "join" || name == "format") && obj != nil && a.isText(obj) ||
					obj != nil && mathModules[strings.ToLower(a.text(obj))] && mathFunctions[name] ||
					obj != nil && textModules[a.text(obj)] && name == "dumps"
			}
			return numericBuiltins[name] || textBuiltins[name]
		}
	}
	return false
}

// plainComprehension says whether a comprehension only maps what it
// iterates: one for clause, a body free of calls but conversions, and no
// if clause — unless what it makes is joined into a text, where a filter
// only decides what the text shows (a filtered list's length would carry
// the filter).
func (a *pyAnalysis) plainComprehension(c *sitter.Node) bool {
	body := c.ChildByFieldName("body")
	if body == nil || !a.callFree(body) {
		return false
	}
	fors := 0
	for i := uint(0); i < c.NamedChildCount(); i++ {
		switch cl := c.NamedChild(i); cl.Kind() {
		case "for_in_clause":
			fors++
		case "if_clause":
			if !a.callFree(cl) || !a.joinedIntoText(c) {
				return false
			}
		}
	}
	return fors == 1
}

// joinedIntoText says whether n is the argument of a text's join
// (`" ".join(n)`).
func (a *pyAnalysis) joinedIntoText(n *sitter.Node) bool {
	call := n.Parent()
	if call != nil && call.Kind() == "argument_list" {
		if call.NamedChildCount() != 1 {
			return false
		}
		call = call.Parent()
	}
	if call == nil || call.Kind() != "call" {
		return false
	}
	fn := call.ChildByFieldName("function")
	name, method := a.callName(fn)
	obj := fn.ChildByFieldName("object")
	return method && name == "join" && obj != nil && a.isText(obj)
}

// attrName is the attribute's name of an attribute node ("" for none).
func attrName(a *pyAnalysis, n *sitter.Node) string {
	if f := n.ChildByFieldName("attribute"); f != nil {
		return a.text(f)
	}
	return ""
}

// attributeNeeded reports whether an attribute's value may be needed: any
// read of an attribute of that name, on any object, in any file of the
// program (pyelsewhere.go), inside a test, a loop header, a return or a
// size argument.
func (a *pyAnalysis) attributeNeeded(attr *sitter.Node) bool {
	field := attr.ChildByFieldName("attribute")
	if field == nil || a.root == nil {
		return true
	}
	name := a.text(field)
	return a.attributeReadIn(name) || a.attributeReadElsewhere(name)
}

// attributeReadIn says whether a read of an attribute named name in this
// file may need its value.
func (a *pyAnalysis) attributeReadIn(name string) bool {
	needed := false
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		if needed {
			return
		}
		if !a.spend(1) {
			needed = true // the query's budget is spent: it may be
			return
		}
		if n.Kind() == "attribute" {
			if f := n.ChildByFieldName("attribute"); f != nil && a.text(f) == name && !isStoreTarget(n) && !a.libraryMethodCall(n) &&
				!a.inUncalledMethod(n) && !a.readAfterFill(n) && a.needsContents(n, 0) &&
				!a.onwardShown(n) && !a.returnedShown(n) && !a.onlyRecorded(n, name) {
				needed = true
				return
			}
		}
		for i := uint(0); i < n.NamedChildCount(); i++ {
			walk(n.NamedChild(i))
		}
	}
	walk(a.root)
	return needed
}
