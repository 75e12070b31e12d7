package classify

// Which names next to the value hold Python numbers, so that arithmetic
// with them keeps the value on the host (`v / REF`, `r * rate ** p`).

import (
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// isNumberName says whether the identifier id, an operand next to the
// value, holds a Python number: a module constant bound once to a number;
// a parameter of a top-level function of the file whose default is a
// number and that every call of the function leaves out or passes a
// number for; a local every binding of which is a number or a loop over
// range().
func (a *pyAnalysis) isNumberName(id *sitter.Node) bool {
	if a.numberDepth >= maxCalleeDepth {
		return false
	}
	a.numberDepth++
	defer func() { a.numberDepth-- }()
	name := a.text(id)
	scope := a.definingScope(id, name)
	if scope.Kind() != "function_definition" {
		return a.moduleNumber(name)
	}
	params := scope.ChildByFieldName("parameters")
	nm := scope.ChildByFieldName("name")
	if params == nil || !a.declares(params, name) {
		return a.localNumber(scope, name)
	}
	if nm == nil || a.moduleFunction(a.text(nm)) == nil || a.bindsOther(scope, name) {
		return false
	}
	place, def := -1, (*sitter.Node)(nil)
	a.eachParamNode(params, func(i int, p string, dflt *sitter.Node) {
		if p == name {
			place, def = i, dflt
		}
	})
	return a.everyCallPassesNumber(a.text(nm), place, name, def != nil && a.isNumber(def))
}

// everyCallPassesNumber says whether each use of the function fn in the
// file is a call that passes a number for the parameter at place (by
// position or by name), or passes nothing when its default is a number
// (numberDefault).
func (a *pyAnalysis) everyCallPassesNumber(fn string, place int, name string, numberDefault bool) bool {
	ok, calls := true, 0
	a.uses(a.root, fn, func(n *sitter.Node) {
		call := n.Parent()
		if call == nil || call.Kind() != "call" || !sameNode(call.ChildByFieldName("function"), n) {
			ok = false // passed or stored: called from anywhere
			return
		}
		calls++
		args := call.ChildByFieldName("arguments")
		if args == nil {
			ok = false
			return
		}
		pos, passed := 0, false
		for i := uint(0); i < args.NamedChildCount(); i++ {
			c := args.NamedChild(i)
			switch c.Kind() {
			case "list_splat", "dictionary_splat":
				ok = false
			case "keyword_argument":
				if k := c.ChildByFieldName("name"); k != nil && a.text(k) == name {
					passed = true
					ok = ok && a.isNumber(c.ChildByFieldName("value"))
				}
			default:
				if pos == place {
					passed = true
					ok = ok && a.isNumber(c)
				}
				pos++
			}
		}
		ok = ok && (passed || numberDefault)
	})
	return ok && (calls > 0 || numberDefault)
}

// isNumber says whether an expression is a number: a literal, a module
// constant bound once to one, or arithmetic of those.
func (a *pyAnalysis) isNumber(n *sitter.Node) bool {
	if n == nil {
		return false
	}
	switch n.Kind() {
	case "integer", "float":
		return true
	case "parenthesized_expression", "unary_operator":
		return n.NamedChildCount() == 1 && a.isNumber(n.NamedChild(0))
	case "binary_operator":
		return a.isNumber(n.ChildByFieldName("left")) && a.isNumber(n.ChildByFieldName("right"))
	case "identifier":
		return a.isNumberName(n)
	}
	return false
}

// localNumber says whether every binding of name in the function's own
// body gives it a number: an assignment or augmented assignment of one, or
// a `for name in range(…)` loop.
func (a *pyAnalysis) localNumber(fn *sitter.Node, name string) bool {
	bound, ok := false, true
	a.ownStatements(fn, func(n *sitter.Node) {
		if !ok || n.Kind() != "identifier" || a.text(n) != name || isLoad(n) {
			return
		}
		bound = true
		p := n.Parent()
		switch {
		case p == nil:
			ok = false
		case (p.Kind() == "assignment" || p.Kind() == "augmented_assignment") && sameNode(p.ChildByFieldName("left"), n):
			ok = a.isNumber(p.ChildByFieldName("right"))
		case p.Kind() == "for_statement" && sameNode(p.ChildByFieldName("left"), n):
			r := p.ChildByFieldName("right")
			fnName, method := "", false
			if r != nil && r.Kind() == "call" {
				fnName, method = a.callName(r.ChildByFieldName("function"))
			}
			ok = !method && fnName == "range"
		default:
			ok = false
		}
	})
	return bound && ok
}

// moduleNumber says whether the module binds name exactly once, at its top
// level, to a number, and nothing else in the file rebinds it.
func (a *pyAnalysis) moduleNumber(name string) bool {
	if a.root == nil {
		return false
	}
	binds := 0
	var value *sitter.Node
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		if n.Kind() == "identifier" && a.text(n) == name && !isLoad(n) {
			binds++
			if p := n.Parent(); p != nil && p.Kind() == "assignment" && sameNode(p.ChildByFieldName("left"), n) &&
				p.Parent() != nil && p.Parent().Parent() != nil && sameNode(p.Parent().Parent(), a.root) {
				value = p.ChildByFieldName("right")
			}
		}
		for i := uint(0); i < n.NamedChildCount(); i++ {
			walk(n.NamedChild(i))
		}
	}
	walk(a.root)
	if binds != 1 || value == nil || value.Kind() == "identifier" {
		return false
	}
	return a.isNumber(value)
}
