package classify

// A value handed to a function of the program's own file, followed into it
// (docs/classifier.md "Into the program's functions"): what the function
// does with its parameter is the value's use there, and what it returns
// carries the value on at the call. And a test that only picks between two
// texts is not the program's control flow: the text picked is followed.

import (
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// intoCallee follows a value v, an argument of call, into the parameter of
// the file's function that call names (calleeParam): the flow of every use
// of the parameter there. When the function returns it (or a value
// computed from it), the flow says returned and the caller goes on from the
// call's result. ok is false when the call is not to a function of the
// file, the argument does not match a parameter the function keeps, or the
// calls nest deeper than maxCalleeDepth.
func (a *pyAnalysis) intoCallee(call, v *sitter.Node, depth int) (fl flow, ok bool) {
	if a.calleeDepth >= maxCalleeDepth || depth >= maxFlowDepth {
		return flow{}, false
	}
	def, name, ok := a.calleeParam(call, v)
	if !ok {
		return flow{}, false
	}
	body := def.ChildByFieldName("body")
	if body == nil {
		return flow{}, false
	}
	a.calleeDepth++
	defer func() { a.calleeDepth-- }()
	fl = a.taint(body, name, false, depth, "")
	if fl.neutral && fl.use == UseLog {
		return flow{}, true // the parameter only cycles back: nothing seen
	}
	if !fl.returned && fl.use == UseNone && len(fl.lines) == 0 && !a.reads(def, name) {
		return flow{}, true // never read: the call does nothing with it
	}
	return fl, true
}

// reads says whether the function's body reads name at all.
func (a *pyAnalysis) reads(def *sitter.Node, name string) bool {
	found := false
	if body := def.ChildByFieldName("body"); body != nil {
		a.uses(body, name, func(*sitter.Node) { found = true })
	}
	return found
}

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

// isText says whether an expression is a string literal, or an f-string
// whose interpolations only name variables or their attributes: evaluating
// it calls nothing.
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
			if e == nil || !plainName(e) {
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

// plainName says whether an expression is a variable or an attribute chain
// of one (`x`, `self.name`).
func plainName(n *sitter.Node) bool {
	switch n.Kind() {
	case "identifier":
		return true
	case "attribute":
		o := n.ChildByFieldName("object")
		return o != nil && plainName(o)
	}
	return false
}
