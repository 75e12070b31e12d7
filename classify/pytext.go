package classify

// A test that only picks between two texts is not the program's control
// flow: the text picked is followed (docs/classifier.md "Round 13"), and
// where its use is not known, the test is a branch again.

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

// pickedBy follows a text or label that a test of the value picked (a
// conditional expression between texts, a call of a label function): its
// use is the value's when known; when not, the test is what decides, a
// branch at test.
func (a *pyAnalysis) pickedBy(picked, test *sitter.Node, depth int) flow {
	fl := a.follow(picked, depth)
	if fl.use == UseNone && !fl.returned {
		return a.at(UseBranch, test)
	}
	return fl
}
