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

// containerNeeded reports whether the container may be needed, not only
// shown: a variable read inside a test, a loop header, a return or a size
// argument anywhere in the scope that defines it (a closure's list is
// followed into the function around it), or an attribute (`self.hist`)
// read so anywhere in the file.
func (a *pyAnalysis) containerNeeded(container *sitter.Node) bool {
	if container == nil {
		return false
	}
	switch container.Kind() {
	case "identifier":
		name := a.text(container)
		needed := false
		a.uses(a.definingScope(container, name), name, func(n *sitter.Node) {
			needed = needed || a.needsContents(n)
		})
		return needed
	case "attribute":
		return a.attributeNeeded(container)
	}
	return false
}

// attributeNeeded reports whether an attribute's value may be needed: any
// read of an attribute of that name, on any object, in the file, inside a
// test, a loop header, a return or a size argument.
func (a *pyAnalysis) attributeNeeded(attr *sitter.Node) bool {
	field := attr.ChildByFieldName("attribute")
	if field == nil || a.root == nil {
		return true
	}
	name := a.text(field)
	needed := false
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		if needed {
			return
		}
		if n.Kind() == "attribute" {
			if f := n.ChildByFieldName("attribute"); f != nil && a.text(f) == name && !isStoreTarget(n) && a.needsContents(n) {
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

// isStoreTarget says whether n is the left side of an assignment.
func isStoreTarget(n *sitter.Node) bool {
	p := n.Parent()
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
	found := false
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		if found {
			return
		}
		if n.Kind() == "identifier" && a.text(n) == name {
			found = true
			return
		}
		if n.Kind() == "default_parameter" || n.Kind() == "typed_default_parameter" {
			if nm := n.ChildByFieldName("name"); nm != nil {
				walk(nm)
			}
			return
		}
		for i := uint(0); i < n.NamedChildCount(); i++ {
			walk(n.NamedChild(i))
		}
	}
	walk(params)
	return found
}

// needsContents climbs from a read of a container to the statement it is
// in and says whether that statement may need its contents.
func (a *pyAnalysis) needsContents(n *sitter.Node) bool {
	for v, p := n, n.Parent(); p != nil; v, p = p, p.Parent() {
		switch p.Kind() {
		case "if_statement", "elif_clause", "while_statement":
			return sameNode(p.ChildByFieldName("condition"), v)
		case "assert_statement", "conditional_expression", "boolean_operator", "not_operator", "return_statement":
			return true
		case "for_statement", "for_in_clause":
			return sameNode(p.ChildByFieldName("right"), v)
		case "argument_list":
			if call := p.Parent(); call != nil && call.Kind() == "call" && a.callUse(call) == int(UseShape) {
				return true
			}
		case "expression_statement", "block", "module", "function_definition":
			return false
		}
	}
	return false
}
