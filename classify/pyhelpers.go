package classify

// Into the program's own small functions (docs/classifier.md "Round 14"):
// a number handed to a function of the file is followed into its
// parameter, and what the function returns carries it on at the call; a
// test whose branches only record (print, log, count, keep for later) is
// the recording's use, not control flow; a test inside a function that
// only maps values to texts picks the text returned; a number stored under
// a constant key of a dict is followed through the reads of that key.

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
	if a.labelFunction(def) {
		return flow{returned: true}, true // the label it returns carries the value on
	}
	a.calleeDepth++
	defer func() { a.calleeDepth-- }()
	fl = a.taintIn(def, name, false, depth, "")
	if fl.neutral && fl.use == UseLog {
		return flow{}, true // the parameter only cycles back: nothing seen
	}
	return fl, true
}

// storedByKey follows a value stored under a constant key of a dict held
// in a variable (`state["best"] = v`, `stats["n"] += v`) through the reads
// of that key in the scope that binds the variable: a read of another
// constant key is not a use of it, any use of the whole dict is. ok is
// false for any other store, or when those reads decide nothing (the
// container analysis then answers as before).
func (a *pyAnalysis) storedByKey(target *sitter.Node, aug bool, depth int) (flow, bool) {
	if target.Kind() != "subscript" {
		return flow{}, false
	}
	dict, key := target.ChildByFieldName("value"), a.constantString(target.ChildByFieldName("subscript"))
	if dict == nil || dict.Kind() != "identifier" || key == "" {
		return flow{}, false
	}
	name := a.text(dict)
	fl := a.taintIn(a.definingScope(dict, name), name, aug, depth, key)
	if fl.use == UseNone && !fl.returned {
		return flow{}, false
	}
	return fl, true
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
	body := def.ChildByFieldName("body")
	if body == nil {
		return false
	}
	returns := 0
	var ok func(block *sitter.Node) bool
	ok = func(block *sitter.Node) bool {
		for i := uint(0); i < block.NamedChildCount(); i++ {
			s := block.NamedChild(i)
			switch s.Kind() {
			case "comment", "pass_statement":
			case "expression_statement":
				if s.NamedChildCount() != 1 {
					return false
				}
				switch e := s.NamedChild(0); e.Kind() {
				case "string": // a docstring
				case "assignment":
					// a local computed on the way (`change = (v - prev) / prev`)
					left, right := e.ChildByFieldName("left"), e.ChildByFieldName("right")
					if left == nil || right == nil || left.Kind() != "identifier" || !a.callFree(right) {
						return false
					}
				default:
					return false
				}
			case "return_statement":
				if s.NamedChildCount() != 1 || !a.isLabel(s.NamedChild(0), params) {
					return false
				}
				returns++
			case "if_statement":
				for _, part := range a.ifParts(s) {
					if part.cond != nil && !a.callFree(part.cond) || !ok(part.block) {
						return false
					}
				}
			default:
				return false
			}
		}
		return true
	}
	return ok(body) && returns > 0
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
	case "true", "false", "none":
		return true
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
	}
	return a.isText(n) || a.isNumber(n)
}

// ifPart is one arm of an if statement: its test (nil for else) and block.
type ifPart struct{ cond, block *sitter.Node }

// ifParts lists an if statement's arms in order: the if, each elif, the else.
func (a *pyAnalysis) ifParts(s *sitter.Node) []ifPart {
	parts := []ifPart{{s.ChildByFieldName("condition"), s.ChildByFieldName("consequence")}}
	for i := uint(0); i < s.NamedChildCount(); i++ {
		c := s.NamedChild(i)
		switch c.Kind() {
		case "elif_clause":
			parts = append(parts, ifPart{c.ChildByFieldName("condition"), c.ChildByFieldName("consequence")})
		case "else_clause":
			parts = append(parts, ifPart{nil, c.ChildByFieldName("body")})
		}
	}
	out := parts[:0]
	for _, p := range parts {
		if p.block != nil {
			out = append(out, p)
		}
	}
	return out
}

// onlyRecords says whether the arms a test decides (those of an if from
// its consequence on, of an elif from its own on) only record: print or
// log, append to a list read only after its loop, count or store into
// names whose every use is itself only logged or read after the loop, or
// pass — no other call, no return, break, continue or raise. The flow is
// then theirs (logged, or kept for later): what the test decides is only
// what gets recorded. Later tests (elif conditions) must call nothing but
// conversions.
func (a *pyAnalysis) onlyRecords(test *sitter.Node, depth int) (flow, bool) {
	var parts []ifPart
	if test.Kind() == "elif_clause" {
		owner := test.Parent()
		if owner == nil {
			return flow{}, false
		}
		all := a.ifParts(owner)
		for i, p := range all {
			if sameNode(p.cond, test.ChildByFieldName("condition")) {
				parts = all[i:]
				break
			}
		}
	} else {
		parts = a.ifParts(test)
	}
	if len(parts) == 0 {
		return flow{}, false
	}
	out := flow{use: UseLog, neutral: true}
	for i, p := range parts {
		if i > 0 && p.cond != nil && !a.callFree(p.cond) {
			return flow{}, false
		}
		fl, ok := a.blockRecords(p.block, depth)
		if !ok {
			return flow{}, false
		}
		out = merge(out, fl)
	}
	if !keepsOnly(out.use) || out.neutral {
		return flow{}, false // nothing recorded: a test of nothing is left a test
	}
	out.lines = append([]int{int(test.StartPosition().Row) + 1}, out.lines...)
	return out, true
}

// blockRecords is onlyRecords for the statements of one block.
func (a *pyAnalysis) blockRecords(block *sitter.Node, depth int) (flow, bool) {
	out := flow{use: UseLog, neutral: true}
	for i := uint(0); i < block.NamedChildCount(); i++ {
		s := block.NamedChild(i)
		var fl flow
		switch s.Kind() {
		case "comment", "pass_statement":
			continue
		case "expression_statement":
			if s.NamedChildCount() != 1 {
				return flow{}, false
			}
			e := s.NamedChild(0)
			switch {
			case e.Kind() == "assignment" || e.Kind() == "augmented_assignment":
				right, left := e.ChildByFieldName("right"), e.ChildByFieldName("left")
				if right == nil || left == nil || !a.callFree(right) {
					return flow{}, false
				}
				// strict, even for `n += 1`: the lenience of an accumulated
				// read value (taint) does not hold for what a branch changes
				fl = a.stored(e, left, false, depth, "")
			case e.Kind() == "call" && a.callUse(e) == int(UseLog):
				if args := e.ChildByFieldName("arguments"); args != nil && !a.callFree(args) {
					return flow{}, false
				}
				fl = flow{use: UseLog}
				if a.storesInto(e) {
					c := containerOf(e)
					if c == nil || c.Kind() != "identifier" || a.lengthRead(c) {
						return flow{}, false // a list filled under a test: its length carries the test
					}
					fl = a.kept(c, e)
				}
			default:
				return flow{}, false
			}
		case "if_statement":
			for _, p := range a.ifParts(s) {
				if p.cond != nil && !a.callFree(p.cond) {
					return flow{}, false
				}
				inner, ok := a.blockRecords(p.block, depth)
				if !ok {
					return flow{}, false
				}
				out = merge(out, inner)
			}
			continue
		default:
			return flow{}, false
		}
		if !keepsOnly(fl.use) {
			return flow{}, false
		}
		out = merge(out, fl)
	}
	return out, true
}

// callFree says whether evaluating n calls nothing but conversions and
// picks (int, float, round, abs, min, max, str, format, ...) and string
// methods that only build text.
func (a *pyAnalysis) callFree(n *sitter.Node) bool {
	if n.Kind() == "call" {
		name, method := a.callName(n.ChildByFieldName("function"))
		if !(method && textMethods[name]) && a.callUse(n) != useThrough {
			return false
		}
	}
	for i := uint(0); i < n.NamedChildCount(); i++ {
		if !a.callFree(n.NamedChild(i)) {
			return false
		}
	}
	return true
}

// textMethods build text from text.
var textMethods = map[string]bool{"format": true, "join": true, "upper": true, "lower": true, "strip": true,
	"ljust": true, "rjust": true, "center": true}

// lengthRead says whether the scope that binds the variable c reads its
// length (`len(c)`) anywhere.
func (a *pyAnalysis) lengthRead(c *sitter.Node) bool {
	name := a.text(c)
	found := false
	a.uses(a.definingScope(c, name), name, func(n *sitter.Node) {
		args := n.Parent()
		if args == nil || args.Kind() != "argument_list" || args.Parent() == nil || args.Parent().Kind() != "call" {
			return
		}
		if fn, method := a.callName(args.Parent().ChildByFieldName("function")); !method && fn == "len" {
			found = true
		}
	})
	return found
}

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
