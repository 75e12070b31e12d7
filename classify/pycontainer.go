package classify

import sitter "github.com/tree-sitter/go-tree-sitter"

// A value stored into a container (`sizes.append(c.item())`,
// `d["n"] = c.item()`) is taken as kept for logging — unless the container
// is one that the program later tests, iterates, returns or passes as a
// size (`torch.split(x, sizes)`): then the value may decide control flow
// or a shape, and its use is not known (UseNone). A variable is looked for
// in the scope that binds it; an attribute (`self.history`) anywhere in
// the file, by its name.

// containerOf returns the container a store or an append writes to: the
// object of `obj.append(…)` or the value of `obj[k] = …`.
func containerOf(n *sitter.Node) *sitter.Node {
	switch n.Kind() {
	case "subscript":
		return n.ChildByFieldName("value")
	case "call":
		if fn := n.ChildByFieldName("function"); fn != nil && fn.Kind() == "attribute" {
			return fn.ChildByFieldName("object")
		}
	}
	return nil
}

// containerRead is what the program does with a container's contents.
type containerRead int

const (
	containerShown  containerRead = iota // only shown or stored: never needed
	containerLater                       // needed, but only once the loop that fills it is over
	containerNow                         // may be needed while it is filled
	containerTested                      // tested while it is filled: control flow needs it
)

// containerUse says whether the container that fill stores into may be
// needed, not only shown: a variable read inside a test, a loop header, a
// return, an assignment or a call that is not a display call, anywhere in
// the scope that defines it (a closure's list is followed into the
// function around it) — containerLater when every such read comes once the
// filling is over (pyfill.go) — or an attribute (`self.hist`) read so
// anywhere in the file.
func (a *pyAnalysis) containerUse(container, fill *sitter.Node) containerRead {
	if container == nil {
		return containerShown
	}
	// A store into a nested container (`rec["counts"]["pos"] = v`,
	// `grid[i][j] = v`) is a store into its root: the root's reads are the
	// value's (held-out round 12 sized a tensor from such an entry).
	for container.Kind() == "subscript" || a.entryCall(container) {
		if container.Kind() == "call" {
			container = containerOf(container) // `d.setdefault(k, []).append(v)`: an entry of d
		} else {
			container = container.ChildByFieldName("value")
		}
		if container == nil {
			return containerNow
		}
	}
	switch container.Kind() {
	case "identifier":
		name := a.text(container)
		scope := a.definingScope(container, name)
		if a.loopsOverLibrary(scope, name) {
			return containerNow // `for g in opt.param_groups: g["lr"] = v`: the library's entry
		}
		window, bounded := a.fillWindow(fill, scope, name)
		out := containerShown
		a.uses(scope, name, func(n *sitter.Node) {
			if out == containerTested || !a.needsContents(n, 0) {
				return
			}
			switch {
			case bounded && !within(n, window):
				if out == containerShown {
					out = containerLater // read once the filling is over
				}
			case bounded && a.testsContents(n, 0):
				out = containerTested // tested while it is filled
			default:
				out = containerNow
			}
		})
		return out
	case "attribute":
		if !a.programObject(container.ChildByFieldName("object")) || a.attributeNeeded(container) {
			return containerNow // a library's object (`opt.param_groups`) is read by the library
		}
		return containerShown
	}
	return containerNow // a call's result, a literal: not followed
}

// entryCall says whether a call returns an entry of the dict it is called
// on: `d.setdefault(k, default)`, `d.get(k, default)`.
func (a *pyAnalysis) entryCall(call *sitter.Node) bool {
	if call.Kind() != "call" {
		return false
	}
	name, method := a.callName(call.ChildByFieldName("function"))
	args := call.ChildByFieldName("arguments")
	return method && (name == "setdefault" || name == "get") && args != nil && args.NamedChildCount() == 2
}

// callNameIs says whether call calls a function or method named name.
func (a *pyAnalysis) callNameIs(call *sitter.Node, name string) bool {
	n, _ := a.callName(call.ChildByFieldName("function"))
	return n == name
}

// isStoreTarget says whether n is the left side of an assignment, or one
// of the targets it unpacks into (`d["a"], d["b"] = x, y`).
func isStoreTarget(n *sitter.Node) bool {
	p := n.Parent()
	for p != nil && (p.Kind() == "pattern_list" || p.Kind() == "tuple_pattern" || p.Kind() == "list_pattern") {
		n, p = p, p.Parent()
	}
	if p == nil || (p.Kind() != "assignment" && p.Kind() != "augmented_assignment") {
		return false
	}
	return sameNode(p.ChildByFieldName("left"), n)
}

// definingScope is the innermost function around n (or the module) that
// binds name: assigns it, takes it as a parameter, or imports it; the
// module when none does (a global).
func (a *pyAnalysis) definingScope(n *sitter.Node, name string) *sitter.Node {
	scope := enclosingScope(n)
	for scope.Kind() == "function_definition" && !a.binds(scope, name) {
		up := enclosingScope(scope)
		if sameNode(up, scope) {
			break
		}
		scope = up
	}
	return scope
}

// binds says whether the function assigns name in its own body (not in a
// nested function) or has it as a parameter; a `nonlocal`/`global`
// declaration does not bind.
func (a *pyAnalysis) binds(fn *sitter.Node, name string) bool {
	if params := fn.ChildByFieldName("parameters"); params != nil && a.declares(params, name) {
		return true
	}
	body := fn.ChildByFieldName("body")
	found := false
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		if found || n.Kind() == "function_definition" || n.Kind() == "class_definition" ||
			n.Kind() == "global_statement" || n.Kind() == "nonlocal_statement" {
			return
		}
		if n.Kind() == "identifier" && a.text(n) == name && !isLoad(n) {
			if p := n.Parent(); p != nil && p.Kind() != "attribute" && p.Kind() != "keyword_argument" {
				found = true
				return
			}
		}
		for i := uint(0); i < n.NamedChildCount(); i++ {
			walk(n.NamedChild(i))
		}
	}
	if body != nil {
		walk(body)
	}
	return found
}

// declares says whether a parameter list names name.
func (a *pyAnalysis) declares(params *sitter.Node, name string) bool {
	return declaresParam(a.text, params, name)
}

// declaresParam says whether a parameter list declares name: a plain,
// typed, defaulted or splat parameter of that name (not a name its
// default value or its annotation mentions).
func declaresParam(text func(*sitter.Node) string, params *sitter.Node, name string) bool {
	for i := uint(0); params != nil && i < params.NamedChildCount(); i++ {
		p := params.NamedChild(i)
		if p.Kind() == "default_parameter" || p.Kind() == "typed_default_parameter" {
			p = p.ChildByFieldName("name")
		}
		// `x: T`, `*args`, `**kw`, `*args: T`: the name is the first child
		for p != nil && (p.Kind() == "typed_parameter" || p.Kind() == "list_splat_pattern" || p.Kind() == "dictionary_splat_pattern") {
			if p.NamedChildCount() == 0 {
				p = nil
				break
			}
			p = p.NamedChild(0)
		}
		if p != nil && p.Kind() == "identifier" && text(p) == name {
			return true
		}
	}
	return false
}

// defaulted says whether an assignment only gives name an empty default
// when it holds none (`logs = logs or {}`): its value stays the caller's
// whenever the caller passed one that is not empty.
func (a *pyAnalysis) defaulted(as *sitter.Node, name string) bool {
	left, right := as.ChildByFieldName("left"), as.ChildByFieldName("right")
	if as.Kind() != "assignment" || left == nil || left.Kind() != "identifier" || right == nil || right.Kind() != "boolean_operator" {
		return false
	}
	x, y := right.ChildByFieldName("left"), right.ChildByFieldName("right")
	op := right.ChildByFieldName("operator")
	return op != nil && a.text(op) == "or" && x != nil && x.Kind() == "identifier" && a.text(x) == name &&
		y != nil && (y.Kind() == "dictionary" || y.Kind() == "list" || y.Kind() == "tuple") && y.NamedChildCount() == 0
}

// needsContents climbs from a read of a container to the statement it is
// in and says whether that statement may need its contents: a test, a
// loop header, a return or yield, an assignment (the contents go on under
// another name, not followed), or a call that is not a display call — a
// function of the same file is followed into its parameter (depth deep);
// any other function may test them (`check(history)`). Its length
// (`len(hist)`) is known on the host and needs nothing.
func (a *pyAnalysis) needsContents(n *sitter.Node, depth int) bool {
	for v, p := n, n.Parent(); p != nil; v, p = p, p.Parent() {
		switch p.Kind() {
		case "comparison_operator":
			if sameNode(v, n) && presenceTest(p) {
				return false // `x is None`: whether it was ever set, not what it holds
			}
		case "if_statement", "elif_clause", "while_statement":
			return sameNode(p.ChildByFieldName("condition"), v)
		case "assert_statement", "conditional_expression", "boolean_operator", "not_operator", "return_statement",
			"yield", "named_expression":
			return true
		case "assignment", "augmented_assignment":
			left := p.ChildByFieldName("left")
			if left != nil && left.Kind() == "identifier" && !sameNode(left, v) {
				if a.following(p, a.text(left)) {
					return false // into a variable whose uses are being followed: they decide
				}
				if a.onwardDepth < maxOnwardDepth {
					// into a variable (`improved = v < best["val"]`): its uses decide
					a.onwardDepth++
					fl := a.taint(p, a.text(left), false, 0, "")
					a.onwardDepth--
					return !keepsOnly(fl.use)
				}
			}
			if n.Kind() == "identifier" && left != nil && left.Kind() == "subscript" {
				if root := containerOf(left); root != nil && root.Kind() == "identifier" && a.text(root) == a.text(n) {
					return false // `c[k] = c.get(k, 0) + 1`: it only feeds itself
				}
			}
			return !sameNode(left, v)
		case "for_statement", "for_in_clause":
			return sameNode(p.ChildByFieldName("right"), v)
		case "argument_list":
			call := p.Parent()
			if call == nil || call.Kind() != "call" {
				return true
			}
			if name, method := a.callName(call.ChildByFieldName("function")); !method && name == "len" && sameNode(v, n) {
				return false
			}
			switch u := a.callUse(call); {
			case u == useThrough:
			case u == int(UseLog) && !a.storesInto(call):
				return false // shown: printed or logged
			case u == int(UseLog) && a.onwardDepth < maxOnwardDepth:
				// stored into another container (`history.append({"best": best["val"]})`): its reads decide
				a.onwardDepth++
				read := a.containerUse(containerOf(call), call)
				a.onwardDepth--
				return read == containerNow || read == containerTested
			case u == int(UseNone) && sameNode(v, n):
				return a.calleeNeeds(call, v, depth, a.needsContents)
			default:
				return true // a size, a store into another container
			}
		case "expression_statement", "block", "module", "function_definition":
			return false
		}
	}
	return false
}

// presenceTest says whether a comparison is `x is None` or `x is not
// None`: it tells whether x was ever set (to a number read back, in the
// attributes it is asked of), whatever the number.
func presenceTest(c *sitter.Node) bool {
	if c.NamedChildCount() != 2 || c.NamedChild(0).Kind() != "none" && c.NamedChild(1).Kind() != "none" {
		return false
	}
	for i := uint(0); i < c.ChildCount(); i++ {
		if ch := c.Child(i); !ch.IsNamed() && ch.Kind() != "is" && ch.Kind() != "is not" {
			return false
		}
	}
	return true
}

// maxCalleeDepth bounds how many calls deep a container is followed.
const maxCalleeDepth = 6

// calleeNeeds follows a container handed to a function of the same file
// (a plain positional argument of a call by name) into the function's
// parameter: needed when any read of the parameter there may need it.
// Any other call, or a function it cannot match, may test it.
func (a *pyAnalysis) calleeNeeds(call, arg *sitter.Node, depth int, reads func(*sitter.Node, int) bool) bool {
	if depth >= maxCalleeDepth {
		return true
	}
	b, def, name, ok := a.calleeParam(call, arg)
	if !ok || b != a {
		return true // reads is this file's: a function of another file is not matched
	}
	needed := false
	a.uses(def, name, func(n *sitter.Node) {
		needed = needed || reads(n, depth+1)
	})
	return needed
}

// testsContents says whether a read of a container decides control flow:
// it lies in the condition of an if, elif or while, or in an assert,
// whatever is computed from it on the way (`torch.stack(w).mean() > 10`),
// but not through len() (the host knows a list's length); or it is handed
// to a function of the same file that tests its parameter so.
func (a *pyAnalysis) testsContents(n *sitter.Node, depth int) bool {
	for v, p := n, n.Parent(); p != nil; v, p = p, p.Parent() {
		switch p.Kind() {
		case "if_statement", "elif_clause", "while_statement":
			return sameNode(p.ChildByFieldName("condition"), v)
		case "assert_statement":
			return true
		case "argument_list":
			call := p.Parent()
			if call == nil || call.Kind() != "call" {
				return false
			}
			name, method := a.callName(call.ChildByFieldName("function"))
			if !method && name == "len" && sameNode(v, n) {
				return false
			}
			if sameNode(v, n) && a.moduleFunction(name) != nil && !method {
				return a.calleeNeeds(call, v, depth, a.testsContents)
			}
		case "expression_statement", "block", "module", "function_definition", "assignment", "augmented_assignment",
			"return_statement", "for_statement":
			return false
		}
	}
	return false
}

// moduleFunction returns the one top-level function of the file named
// name; nil when there is none or more than one.
func (a *pyAnalysis) moduleFunction(name string) *sitter.Node {
	return a.moduleDefinition("function_definition", name)
}

// moduleDefinition returns the file's one top-level definition of the kind
// (a function_definition or a class_definition) named name; nil when there
// is none or more than one.
func (a *pyAnalysis) moduleDefinition(kind, name string) *sitter.Node {
	var found *sitter.Node
	for i := uint(0); a.root != nil && i < a.root.NamedChildCount(); i++ {
		d := a.root.NamedChild(i)
		if d.Kind() == "decorated_definition" {
			d = d.ChildByFieldName("definition")
		}
		if d == nil || d.Kind() != kind {
			continue
		}
		if nm := d.ChildByFieldName("name"); nm != nil && a.text(nm) == name {
			if found != nil {
				return nil
			}
			found = d
		}
	}
	return found
}

// bindsOther says whether a function's body assigns name (the parameter
// then holds something else).
func (a *pyAnalysis) bindsOther(fn *sitter.Node, name string) bool {
	other := false
	a.ownStatements(fn, func(n *sitter.Node) {
		if n.Kind() == "assignment" || n.Kind() == "augmented_assignment" {
			if left := n.ChildByFieldName("left"); left != nil && a.mentions(left, name) && !a.defaulted(n, name) {
				other = true
			}
		}
	})
	return other
}
