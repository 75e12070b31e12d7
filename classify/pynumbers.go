package classify

// Which names next to the value hold Python numbers, so that arithmetic
// with them keeps the value on the host (`v / REF`, `r * rate ** p`).

import (
	"bytes"

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
	if nm == nil || a.bindsOther(scope, name) {
		return false
	}
	place, def := -1, (*sitter.Node)(nil)
	a.eachParamNode(params, func(i int, p string, dflt *sitter.Node) {
		if p == name {
			place, def = i, dflt
		}
	})
	numberDefault := def != nil && a.isNumber(def)
	switch {
	case a.moduleFunction(a.text(nm)) != nil:
		return a.everyCallPassesNumber(a.text(nm), place, name, numberDefault)
	case enclosingClass(scope) != nil && place != 0:
		// a method's: every call of it anywhere in the program
		return a.everyMethodCallPassesNumber(a.text(nm), max(place-1, -1), name, numberDefault)
	}
	return false
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
		ok = ok && a.passesNumber(call.ChildByFieldName("arguments"), place, name, numberDefault)
	})
	return ok && (calls > 0 || numberDefault)
}

// everyMethodCallPassesNumber is everyCallPassesNumber for a method: every
// call of a method of that name (`obj.update(v, n=4)`), in every file of
// the program, passes a number for the parameter at place (self not
// counted) or by its name, or leaves it out when its default is a
// number. False when the program's files are not all known, or the name
// is used other than as a method called.
func (a *pyAnalysis) everyMethodCallPassesNumber(method string, place int, name string, numberDefault bool) bool {
	if !a.others.known {
		return false
	}
	ok, calls := true, 0
	check := func(b *pyAnalysis) {
		walkAll(b.root, func(n *sitter.Node) {
			if !ok || n.Kind() != "attribute" {
				return
			}
			if f := n.ChildByFieldName("attribute"); f == nil || b.text(f) != method {
				return
			}
			call := n.Parent()
			if call == nil || call.Kind() != "call" || !sameNode(call.ChildByFieldName("function"), n) {
				ok = false // handed on or stored: called from anywhere
				return
			}
			calls++
			ok = b.passesNumber(call.ChildByFieldName("arguments"), place, name, numberDefault)
		})
	}
	check(a)
	for _, f := range a.others.files {
		if ok && bytes.Contains(f.src, []byte(method)) {
			check(a.analysisOf(f))
		}
	}
	return ok && (calls > 0 || numberDefault)
}

// passesNumber says whether a call's arguments pass a number for the
// parameter at place (by position) or named name, or pass nothing for it
// when its default is a number (numberDefault).
func (a *pyAnalysis) passesNumber(args *sitter.Node, place int, name string, numberDefault bool) bool {
	if args == nil {
		return false
	}
	ok, pos, passed := true, 0, false
	for i := uint(0); i < args.NamedChildCount(); i++ {
		c := args.NamedChild(i)
		switch c.Kind() {
		case "list_splat", "dictionary_splat":
			return false
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
	return ok && (passed || numberDefault)
}

// isNumber says whether an expression is a number: a literal, a module
// constant bound once to one, a size (isSize), or arithmetic of those.
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
	case "conditional_expression":
		return n.NamedChildCount() == 3 && a.isNumber(n.NamedChild(0)) && a.isNumber(n.NamedChild(2))
	case "identifier":
		return a.isNumberName(n)
	case "call":
		return a.isSize(n) || a.givesNumber(n)
	case "subscript":
		return a.isSize(n)
	case "attribute":
		return a.isSize(n) || a.numberAttribute(n)
	}
	return false
}

// givesNumber says whether a call always returns a Python number: a
// tensor's `.item()`, `float(…)`, `int(…)`, `round(…)`, or a function of
// the math or statistics module (math.sqrt(v), statistics.fmean(vs)).
func (a *pyAnalysis) givesNumber(call *sitter.Node) bool {
	fn := call.ChildByFieldName("function")
	name, method := a.callName(fn)
	switch {
	case method && name == "item":
		return true
	case method:
		obj := fn.ChildByFieldName("object")
		return obj != nil && obj.Kind() == "identifier" && (a.text(obj) == "math" || a.text(obj) == "statistics") && mathFunctions[name]
	}
	return name == "float" || name == "int" || name == "round"
}

// numberAttribute says whether an attribute (`self.mean`) holds a Python
// number: every store into an attribute of its name, in every file of the
// program, is None or a number (isNumber), the attribute itself met again
// counting as one (`self.mean = 0.9 * self.mean + 0.1 * v`). Not known
// when the program's other files are not.
func (a *pyAnalysis) numberAttribute(attr *sitter.Node) bool {
	name := attrName(a, attr)
	if name == "" || !a.others.known || a.numberDepth >= maxCalleeDepth {
		return false
	}
	if a.numberAttrs == nil {
		a.numberAttrs = map[string]bool{}
	}
	if a.numberAttrs[name] {
		return true // met again while its stores are read: they decide
	}
	a.numberAttrs[name] = true
	defer delete(a.numberAttrs, name)
	a.numberDepth++
	defer func() { a.numberDepth-- }()
	ok, stores := true, 0
	check := func(b *pyAnalysis) {
		walkAll(b.root, func(n *sitter.Node) {
			if !ok || n.Kind() != "attribute" || attrName(b, n) != name {
				return
			}
			right, stored := storedValue(n)
			if !stored {
				return
			}
			stores++
			ok = right != nil && (right.Kind() == "none" || b.isNumber(right)) || right == nil && b.unpacksNumbers(n)
		})
	}
	check(a)
	for _, f := range a.others.files {
		if ok && mentionsAttribute(f.src, name) {
			b := a.analysisOf(f)
			b.numberAttrs = a.numberAttrs
			check(b)
		}
	}
	return ok && stores > 0
}

// unpacksNumbers says whether target, one of an assignment's unpacked
// targets, gets an element of a tensor's `.tolist()` (`self.a, self.b =
// pair.tolist()`): a Python number for a 1-d tensor.
func (a *pyAnalysis) unpacksNumbers(target *sitter.Node) bool {
	pat := target.Parent()
	if pat == nil || pat.Parent() == nil {
		return false
	}
	right := pat.Parent().ChildByFieldName("right")
	if right == nil || right.Kind() != "call" {
		return false
	}
	name, method := a.callName(right.ChildByFieldName("function"))
	args := right.ChildByFieldName("arguments")
	return method && name == "tolist" && args != nil && args.NamedChildCount() == 0
}

// storedValue says whether target is stored into by an assignment, and
// the value it gets: the right side, or its element at target's place
// when both sides are tuples of one length (`self.a, self.b = a, b`);
// nil when the value is not known (`self.a, self.b = pair`).
func storedValue(target *sitter.Node) (value *sitter.Node, stored bool) {
	if isStoreTarget(target) {
		return target.Parent().ChildByFieldName("right"), true
	}
	pat := target.Parent()
	if pat == nil || pat.Kind() != "pattern_list" && pat.Kind() != "tuple_pattern" || !isStoreTarget(pat) {
		return nil, false
	}
	right := pat.Parent().ChildByFieldName("right")
	if right == nil || right.Kind() != "expression_list" && right.Kind() != "tuple" || right.NamedChildCount() != pat.NamedChildCount() {
		return nil, true
	}
	for i := uint(0); i < pat.NamedChildCount(); i++ {
		if sameNode(pat.NamedChild(i), target) {
			return right.NamedChild(i), true
		}
	}
	return nil, true
}

// isSize says whether an expression is a size the host knows, an int:
// `len(x)`, `x.size(0)`, `x.shape[0]`, `x.size()[0]`, `x.numel()`,
// `x.dim()`, `x.ndim`.
func (a *pyAnalysis) isSize(n *sitter.Node) bool {
	switch n.Kind() {
	case "call":
		name, method := a.callName(n.ChildByFieldName("function"))
		args := n.ChildByFieldName("arguments")
		if args == nil || args.Kind() != "argument_list" {
			return false
		}
		switch {
		case !method && name == "len":
			return args.NamedChildCount() == 1
		case method && (name == "numel" || name == "dim" || name == "nelement"):
			return args.NamedChildCount() == 0
		case method && name == "size":
			return args.NamedChildCount() == 1 && a.isNumber(args.NamedChild(0))
		}
	case "subscript":
		v, k := n.ChildByFieldName("value"), n.ChildByFieldName("subscript")
		if v == nil || k == nil || !a.isNumber(k) {
			return false
		}
		if v.Kind() == "attribute" {
			f := v.ChildByFieldName("attribute")
			return f != nil && a.text(f) == "shape"
		}
		if v.Kind() == "call" {
			name, method := a.callName(v.ChildByFieldName("function"))
			args := v.ChildByFieldName("arguments")
			return method && name == "size" && args != nil && args.NamedChildCount() == 0
		}
	case "attribute":
		f := n.ChildByFieldName("attribute")
		return f != nil && a.text(f) == "ndim"
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
