package classify

import sitter "github.com/tree-sitter/go-tree-sitter"

// A value stored into a container (`sizes.append(c.item())`,
// `d["n"] = c.item()`) is taken as kept for logging — unless the container
// is a local variable that the function later tests, iterates, returns or
// passes as a size (`torch.split(x, sizes)`): then the value may decide
// control flow or a shape, and its use is not known (UseNone). A container
// held by an attribute (`self.history`) is not followed.

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

// containerNeeded reports whether the container is a local variable whose
// contents the function may need, not only show: any read of it inside a
// test, a loop header, a return or a size argument.
func (a *pyAnalysis) containerNeeded(container *sitter.Node) bool {
	if container == nil || container.Kind() != "identifier" {
		return false
	}
	needed := false
	a.uses(enclosingScope(container), a.text(container), func(n *sitter.Node) {
		needed = needed || a.needsContents(n)
	})
	return needed
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
