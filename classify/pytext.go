package classify

// A test that only picks between two texts is not the program's control
// flow: the text picked is followed (docs/classifier.md "Round 13").

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
