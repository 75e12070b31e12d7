package classify

// A test that only picks between two texts is not the program's control
// flow: the text picked is followed (docs/classifier.md "Round 13"); nor
// is one inside a function that only maps values to labels: the label
// returned is.

import (
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// picksText says whether a conditional expression only chooses between two
// texts (`"up" if v > prev else "down"`, f-strings included): its test
// then decides which text goes on, not what the program does next, and the
// expression's value is what to follow.
func (a *pyAnalysis) picksText(cond *sitter.Node) bool {
	if cond.NamedChildCount() != 3 {
		return false
	}
	return a.isText(cond.NamedChild(0)) && a.isText(cond.NamedChild(2))
}

// picksPlain says whether a conditional expression only chooses between
// two values free of calls (`self.streak + 1 if word != "ok" else 0`):
// its test decides nothing but the value, which is what to follow.
func (a *pyAnalysis) picksPlain(cond *sitter.Node) bool {
	return cond.NamedChildCount() == 3 && a.callFree(cond.NamedChild(0)) && a.callFree(cond.NamedChild(2))
}

// isText says whether an expression is a string literal, or an f-string
// whose interpolations call nothing but conversions and picks.
func (a *pyAnalysis) isText(n *sitter.Node) bool {
	for n.Kind() == "parenthesized_expression" && n.NamedChildCount() == 1 {
		n = n.NamedChild(0)
	}
	switch n.Kind() {
	case "string":
		for i := uint(0); i < n.NamedChildCount(); i++ {
			c := n.NamedChild(i)
			if c.Kind() != "interpolation" {
				continue
			}
			e := c.ChildByFieldName("expression")
			if e == nil || !a.callFree(e) {
				return false
			}
		}
		return true
	case "concatenated_string":
		for i := uint(0); i < n.NamedChildCount(); i++ {
			if !a.isText(n.NamedChild(i)) {
				return false
			}
		}
		return true
	}
	return false
}

// picksReturnedText says whether a test (an if or elif) sits in a function
// that only maps values to labels (isLabel: texts, constants, tuples of
// them): every statement of its body an if, a return of a label, an
// assignment of a local from an expression that calls nothing but
// conversions, a docstring or pass, every test free of calls but
// conversions, and at least one return. The test then picks which label is
// returned: the caller's use of the label is the value's.
func (a *pyAnalysis) picksReturnedText(test *sitter.Node) bool {
	def := enclosingFunction(test)
	return def != nil && a.labelFunction(def)
}

// labelFunction says whether a function only maps its parameters to
// labels (picksReturnedText).
func (a *pyAnalysis) labelFunction(def *sitter.Node) bool {
	params := map[string]bool{}
	if ps := def.ChildByFieldName("parameters"); ps != nil {
		a.eachParam(ps, func(_ int, p string) { params[p] = true })
	}
	returns := 0
	ok := a.computesOnly(def.ChildByFieldName("body"), func(ret *sitter.Node) bool {
		returns++
		return ret.NamedChildCount() == 1 && a.isLabel(ret.NamedChild(0), params)
	})
	return ok && returns > 0
}

// isLabel says whether a returned expression is a label: a text, a
// number, True, False or None, a constant named through a module or class
// (`logging.WARNING`, `Status.OK`: an attribute of a name that is not one
// of the function's parameters), or a tuple of labels.
func (a *pyAnalysis) isLabel(n *sitter.Node, params map[string]bool) bool {
	for n.Kind() == "parenthesized_expression" && n.NamedChildCount() == 1 {
		n = n.NamedChild(0)
	}
	switch n.Kind() {
	case "attribute":
		root := n
		for root != nil && root.Kind() == "attribute" {
			root = root.ChildByFieldName("object")
		}
		return root != nil && root.Kind() == "identifier" && !params[a.text(root)] && a.text(root) != "self"
	case "tuple", "expression_list":
		for i := uint(0); i < n.NamedChildCount(); i++ {
			if !a.isLabel(n.NamedChild(i), params) {
				return false
			}
		}
		return n.NamedChildCount() > 0
	case "call":
		// a record of labels (`Verdict(Code.FAIL, "fail", sys.stderr)`),
		// as a tuple of them
		args := n.ChildByFieldName("arguments")
		if !a.recordCall(n) || args == nil {
			return false
		}
		for i := uint(0); i < args.NamedChildCount(); i++ {
			arg := args.NamedChild(i)
			if arg.Kind() == "keyword_argument" {
				arg = arg.ChildByFieldName("value")
			}
			if arg == nil || !a.isLabel(arg, params) {
				return false
			}
		}
		return true
	case "subscript":
		// a module's table looked up by a label (`NAMES[Code.FAIL]`)
		table, key := n.ChildByFieldName("value"), n.ChildByFieldName("subscript")
		return table != nil && key != nil && table.Kind() == "identifier" && !params[a.text(table)] &&
			a.definingScope(table, a.text(table)).Kind() == "module" && a.isLabel(key, params)
	}
	return a.isConstant(n)
}
