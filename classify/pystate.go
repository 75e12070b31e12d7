package classify

// Tests whose arms only set state, in the methods a value was followed
// into (pymethods.go; docs/classifier.md "Values handed to the program's
// methods"): `if v < self.best: self.best = v; status = "new"`.
// Such a test decides nothing by itself: what it decides is what the state
// it sets does later. Where that is a test or a size, the value is control
// flow or a shape; where the state is only recorded, onlyRecords and
// recordsThenReturns (pyrecords.go) say so; anywhere else its use is not
// known — unknown, not a branch by default. A test whose arm calls,
// breaks, continues, raises or loops stays a branch.

import sitter "github.com/tree-sitter/go-tree-sitter"

// inMethod says whether n lies in a method of a class.
func inMethod(n *sitter.Node) bool {
	def := enclosingFunction(n)
	return def != nil && enclosingClass(def) != nil
}

// stateFlow says whether the arms a test decides (decidedParts) only set
// state: assignments from expressions that call nothing but conversions,
// returns of such expressions, log calls of such arguments, pass, and ifs
// of the same. When an arm returns from its function, the test must sit at
// the top of the function's body and the statements after it (which the
// return skips) must only set state too. The flow is that of what the arms
// set: a test or a size there is the test's value's; anything else is
// unknown.
func (a *pyAnalysis) stateFlow(test *sitter.Node, depth int) (flow, bool) {
	out, returns, ok := a.decidedArms(test, depth, armSetsState)
	if !ok {
		return flow{}, false
	}
	if returns {
		owner := test
		if owner.Kind() == "elif_clause" {
			owner = owner.Parent()
		}
		body, after, ok := functionTail(owner) // a return inside a loop or a nested block skips more
		if !ok {
			return flow{}, false
		}
		fl, _, ok := a.armStatements(body, after, depth, armSetsState)
		if !ok {
			return flow{}, false
		}
		out = merge(out, fl)
	}
	if out.use == UseBranch || out.use == UseShape || out.returned {
		return out, true // a returned value: the caller decides
	}
	if out.neutral {
		return out, true // all it sets loops back to what is being followed: that decides
	}
	return flow{}, true
}
