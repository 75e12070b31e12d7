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

// stateFlow says whether the arms a test decides (decidedParts) only set
// state: assignments from expressions that call nothing but conversions,
// returns of such expressions, log calls of such arguments, pass, and ifs
// of the same. When an arm returns from its function, the test must sit at
// the top of the function's body and the statements after it (which the
// return skips) must only set state too. The flow is that of what the arms
// set: a test or a size there is the test's value's; anything else is
// unknown.
func (a *pyAnalysis) stateFlow(test *sitter.Node, depth int) (flow, bool) {
	parts := a.decidedParts(test)
	if len(parts) == 0 {
		return flow{}, false
	}
	out, returns := flow{use: UseLog, neutral: true}, false
	for i, p := range parts {
		if i > 0 && p.cond != nil && !a.callFree(p.cond) {
			return flow{}, false
		}
		fl, ret, ok := a.statementsSetState(p.block, 0, depth)
		if !ok {
			return flow{}, false
		}
		out, returns = merge(out, fl), returns || ret
	}
	if returns {
		owner := test
		if owner.Kind() == "elif_clause" {
			owner = owner.Parent()
		}
		def := enclosingFunction(owner)
		if def == nil {
			return flow{}, false
		}
		body := def.ChildByFieldName("body")
		if body == nil || !sameNode(owner.Parent(), body) {
			return flow{}, false // a return inside a loop or a nested block skips more than the function's tail
		}
		after := uint(0)
		for i := uint(0); i < body.NamedChildCount(); i++ {
			if sameNode(body.NamedChild(i), owner) {
				after = i + 1
			}
		}
		fl, _, ok := a.statementsSetState(body, after, depth)
		if !ok {
			return flow{}, false
		}
		out = merge(out, fl)
	}
	if returns {
		out = merge(out, flow{returned: true}) // which value is returned: the caller decides
	}
	if out.use == UseBranch || out.use == UseShape || out.returned {
		return out, true
	}
	return flow{}, true
}

// statementsSetState is stateFlow for the statements of block from the
// from-th on: the flow of what they set, whether one returns, and whether
// they only set state.
func (a *pyAnalysis) statementsSetState(block *sitter.Node, from uint, depth int) (out flow, returns, ok bool) {
	out = flow{use: UseLog, neutral: true}
	for i := from; i < block.NamedChildCount(); i++ {
		s := block.NamedChild(i)
		switch s.Kind() {
		case "comment", "pass_statement":
		case "return_statement":
			if s.NamedChildCount() > 1 || s.NamedChildCount() == 1 && !a.callFree(s.NamedChild(0)) {
				return flow{}, false, false
			}
			returns = true
		case "expression_statement":
			if s.NamedChildCount() != 1 {
				return flow{}, false, false
			}
			e := s.NamedChild(0)
			switch {
			case e.Kind() == "assignment" || e.Kind() == "augmented_assignment":
				right, left := e.ChildByFieldName("right"), e.ChildByFieldName("left")
				if right == nil || left == nil || !a.callFree(right) {
					return flow{}, false, false
				}
				out = merge(out, a.stored(e, left, false, depth, ""))
			case e.Kind() == "call" && a.callUse(e) == int(UseLog):
				if args := e.ChildByFieldName("arguments"); args != nil && !a.callFree(args) {
					return flow{}, false, false
				}
			default:
				return flow{}, false, false
			}
		case "if_statement":
			for _, p := range a.ifParts(s) {
				if p.cond != nil && !a.callFree(p.cond) {
					return flow{}, false, false
				}
				fl, ret, ok := a.statementsSetState(p.block, 0, depth)
				if !ok {
					return flow{}, false, false
				}
				out, returns = merge(out, fl), returns || ret
			}
		default:
			return flow{}, false, false
		}
	}
	return out, returns, true
}
