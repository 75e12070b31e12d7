package classify

// A test whose arms only record — print or log, count, keep for after the
// loop — is the recording's use, not control flow (docs/classifier.md
// "After round 13").

import (
	sitter "github.com/tree-sitter/go-tree-sitter"
)

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
	out, _, ok := a.decidedArms(test, depth, armRecords)
	if !ok || !keepsOnly(out.use) || out.neutral {
		return flow{}, false // nothing recorded: a test of nothing is left a test
	}
	out.lines = append([]int{int(test.StartPosition().Row) + 1}, out.lines...)
	return out, true
}

// decidedArms walks the arms a test decides (decidedParts) under rule:
// their flow together and whether one returns; ok is false when there is
// none, a later test (an elif's) calls anything but conversions, or an
// arm breaks the rule.
func (a *pyAnalysis) decidedArms(test *sitter.Node, depth int, rule armRule) (out flow, returns, ok bool) {
	parts := a.decidedParts(test)
	if len(parts) == 0 {
		return flow{}, false, false
	}
	out = flow{use: UseLog, neutral: true}
	for i, p := range parts {
		if i > 0 && p.cond != nil && !a.callFree(p.cond) {
			return flow{}, false, false
		}
		fl, ret, ok := a.armStatements(p.block, 0, depth, rule)
		if !ok {
			return flow{}, false, false
		}
		out, returns = merge(out, fl), returns || ret
	}
	return out, returns, true
}

// decidedParts are the arms a test decides: those of an if from its
// consequence on, of an elif from its own on.
func (a *pyAnalysis) decidedParts(test *sitter.Node) []ifPart {
	if test.Kind() != "elif_clause" {
		return a.ifParts(test)
	}
	owner := test.Parent()
	if owner == nil {
		return nil
	}
	all := a.ifParts(owner)
	for i, p := range all {
		if sameNode(p.cond, test.ChildByFieldName("condition")) {
			return all[i:]
		}
	}
	return nil
}

// armRule is what the statements of a test's arm may do (armStatements).
type armRule int

const (
	armRecords           armRule = iota // only record: what a store sets is itself only shown or kept
	armRecordsOrConstant                // record, or return a constant (isConstant)
	armSetsState                        // set state whatever is done with it, log, or return a value free of calls
	armRecordsOrLeaves                  // record, or return nothing (a bare return)
	armRecordsDropped                   // record, or return a value free of calls that the caller drops
)

// armStatements walks the statements of block from the from-th on under
// rule: the flow of what they record or set (returned too where one
// returns), whether one returns, and whether every one keeps to the rule.
// Stores and log calls must call nothing but conversions; an if's tests
// too, its arms under the same rule, and so the body of a loop that only
// reads what it iterates or of a with that only opens files (armCompound);
// anything else (another call or loop, break, continue, raise) breaks it.
func (a *pyAnalysis) armStatements(block *sitter.Node, from uint, depth int, rule armRule) (out flow, returns, ok bool) {
	out = flow{use: UseLog, neutral: true}
	for i := from; i < block.NamedChildCount(); i++ {
		s := block.NamedChild(i)
		var fl flow
		switch s.Kind() {
		case "comment", "pass_statement":
			continue
		case "return_statement":
			switch n := s.NamedChildCount(); {
			case rule == armRecordsOrConstant && n == 1 && a.isConstant(s.NamedChild(0)):
			case rule == armSetsState && (n == 0 || n == 1 && a.callFree(s.NamedChild(0))):
			case rule == armRecordsOrLeaves && n == 0:
			case rule == armRecordsDropped && (n == 0 || n == 1 && a.callFree(s.NamedChild(0))):
			default:
				return flow{}, false, false
			}
			if rule != armRecordsOrLeaves && rule != armRecordsDropped { // what is returned there goes nowhere
				out = merge(out, flow{returned: true})
			}
			returns = true
			continue
		case "expression_statement":
			if s.NamedChildCount() != 1 {
				return flow{}, false, false
			}
			e := s.NamedChild(0)
			switch {
			case e.Kind() == "string":
				continue // a docstring
			case e.Kind() == "assignment" || e.Kind() == "augmented_assignment":
				right, left := e.ChildByFieldName("right"), e.ChildByFieldName("left")
				if right == nil || left == nil || !a.callFree(right) {
					return flow{}, false, false
				}
				// strict, even for `n += 1`: the lenience of an accumulated
				// read value (taint) does not hold for what a branch changes
				fl = a.stored(e, left, false, depth, "")
			case e.Kind() == "call" && a.callUse(e) == int(UseLog):
				if args := e.ChildByFieldName("arguments"); args != nil && !a.callFree(args) {
					return flow{}, false, false
				}
				fl = flow{use: UseLog}
				if a.storesInto(e) {
					c := containerOf(e)
					switch {
					case c != nil && c.Kind() == "identifier" && !a.lengthRead(c):
					case c != nil && c.Kind() == "attribute" && a.programObject(c.ChildByFieldName("object")) &&
						!a.attributeLengthRead(attrName(a, c)): // `self.history.append(…)`
					case c != nil && c.Kind() == "subscript":
						// `stats["alerts"].append(…)`: that entry's reads, its length's too, decide
						if _, ok := a.storedByKey(c, false, depth); !ok {
							return flow{}, false, false
						}
					default:
						return flow{}, false, false // a list filled under a test: its length carries the test
					}
					fl = a.kept(c, e, depth)
				}
			case e.Kind() == "call":
				rec, ok := a.recordingCall(e, depth)
				if !ok {
					return flow{}, false, false
				}
				fl = rec
			default:
				return flow{}, false, false
			}
		case "if_statement":
			for _, p := range a.ifParts(s) {
				if p.cond != nil && !a.callFree(p.cond) {
					return flow{}, false, false
				}
				inner, ret, ok := a.armStatements(p.block, 0, depth, rule)
				if !ok {
					return flow{}, false, false
				}
				out, returns = merge(out, inner), returns || ret
			}
			continue
		case "with_statement", "for_statement":
			inner, ret, ok := a.armCompound(s, depth, rule)
			if !ok {
				return flow{}, false, false
			}
			out, returns = merge(out, inner), returns || ret
			continue
		default:
			return flow{}, false, false
		}
		if rule != armSetsState && !keepsOnly(fl.use) {
			return flow{}, false, false
		}
		out = merge(out, fl)
	}
	return out, returns, true
}

// topTest says whether test is an if statement at the top of its
// function's body (functionTail) in a function every return of which
// passes the check, and returns what functionTail does.
func (a *pyAnalysis) topTest(test *sitter.Node, check func(ret *sitter.Node) bool) (body *sitter.Node, after uint, ok bool) {
	if test.Kind() != "if_statement" {
		return nil, 0, false
	}
	body, after, ok = functionTail(test)
	if !ok {
		return nil, 0, false
	}
	a.ownStatements(enclosingFunction(test), func(n *sitter.Node) {
		if ok && n.Kind() == "return_statement" && !check(n) {
			ok = false
		}
	})
	return body, after, ok
}

// functionTail says whether test sits at the top of its function's body,
// and returns the body and the place of the statement after it: what an
// arm's return skips.
func functionTail(test *sitter.Node) (body *sitter.Node, after uint, ok bool) {
	def := enclosingFunction(test)
	if def == nil {
		return nil, 0, false
	}
	body = def.ChildByFieldName("body")
	if body == nil || !sameNode(test.Parent(), body) {
		return nil, 0, false
	}
	for i := uint(0); i < body.NamedChildCount(); i++ {
		if sameNode(body.NamedChild(i), test) {
			return body, i + 1, true
		}
	}
	return nil, 0, false
}

// recordsThenReturns says whether a test at the top of a function's body
// only records (as onlyRecords) and picks which constant the function
// returns (`if v < self.best: self.best = v; return True` … `return
// False`): every arm, and every statement of the body after the test
// (which an arm's return skips), only records or returns a constant
// (isConstant), every return of the function is such a return, one at
// least follows the test, and an arm records something. The flow is then
// the caller's (returned), with what the arms record. (An arm that only
// returns leaves the test a test: taken as returned, the test of a value
// also handed to a call not followed, `not math.isfinite(v) or v > lim`,
// lost the branch held-out round 14 labels true.)
func (a *pyAnalysis) recordsThenReturns(test *sitter.Node, depth int) (flow, bool) {
	body, after, ok := a.topTest(test, func(ret *sitter.Node) bool {
		return ret.NamedChildCount() == 1 && a.isConstant(ret.NamedChild(0))
	})
	if !ok {
		return flow{}, false
	}
	out, records := flow{use: UseLog, neutral: true}, false
	for i, p := range a.ifParts(test) {
		if i > 0 && p.cond != nil && !a.callFree(p.cond) {
			return flow{}, false
		}
		for j := uint(0); j < p.block.NamedChildCount(); j++ {
			switch p.block.NamedChild(j).Kind() {
			case "return_statement", "comment", "pass_statement":
			default:
				records = true
			}
		}
		fl, _, ok := a.armStatements(p.block, 0, depth, armRecordsOrConstant)
		if !ok {
			return flow{}, false
		}
		out = merge(out, fl)
	}
	fl, _, ok := a.armStatements(body, after, depth, armRecordsOrConstant)
	if !ok {
		return flow{}, false
	}
	if out = merge(out, fl); !out.returned || !records {
		// no constant returned: onlyRecords' case; nothing recorded: a
		// test that only picks what is returned stays a test, unless its
		// function only maps values to labels (picksReturnedText)
		return flow{}, false
	}
	return out, true
}

// isConstant says whether n is a constant: True, False, None, a number or
// a text (isNumber, isText).
func (a *pyAnalysis) isConstant(n *sitter.Node) bool {
	for n.Kind() == "parenthesized_expression" && n.NamedChildCount() == 1 {
		n = n.NamedChild(0)
	}
	switch n.Kind() {
	case "true", "false", "none":
		return true
	}
	return a.isText(n) || a.isFixedNumber(n)
}

// isFixedNumber says whether an expression is a number that no read value
// can change: a literal, a module constant bound once to one, or
// arithmetic of them — not a name that may hold the value followed.
func (a *pyAnalysis) isFixedNumber(n *sitter.Node) bool {
	switch n.Kind() {
	case "integer", "float":
		return true
	case "parenthesized_expression", "unary_operator":
		return n.NamedChildCount() == 1 && a.isFixedNumber(n.NamedChild(0))
	case "binary_operator":
		return a.isFixedNumber(n.ChildByFieldName("left")) && a.isFixedNumber(n.ChildByFieldName("right"))
	case "identifier":
		name := a.text(n)
		return a.definingScope(n, name).Kind() != "function_definition" && a.moduleNumber(name)
	}
	return false
}

// callFree says whether evaluating n calls nothing but conversions and
// picks (int, float, round, abs, min, max, str, format, ...), string
// methods that only build text, a dict's views and lookups (items, values,
// keys, get) and the program's methods that only compute (pypure.go).
func (a *pyAnalysis) callFree(n *sitter.Node) bool {
	if n.Kind() == "call" {
		name, method := a.callName(n.ChildByFieldName("function"))
		if !(method && (textMethods[name] || viewMethods[name] || name == "get")) && !(!method && freeBuiltins[name]) &&
			a.callUse(n) != useThrough && !a.pureMethodCall(n) && !a.pureFunctionCall(n) {
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

// freeBuiltins are Python's builtins that only answer about a value: its
// type or its length.
var freeBuiltins = map[string]bool{"isinstance": true, "hasattr": true, "callable": true, "len": true}

// textMethods build text from text.
var textMethods = map[string]bool{"format": true, "join": true, "upper": true, "lower": true, "strip": true,
	"ljust": true, "rjust": true, "center": true}

// lengthRead says whether the scope that binds the variable c reads its
// length (`len(c)`) anywhere.
func (a *pyAnalysis) lengthRead(c *sitter.Node) bool {
	name := a.text(c)
	found := false
	a.uses(a.definingScope(c, name), name, func(n *sitter.Node) {
		found = found || a.lengthOf(n)
	})
	return found
}

// attributeLengthRead says whether any file of the program takes the
// length of an attribute named name (`len(self.history)`), or the
// program's other files are not known.
func (a *pyAnalysis) attributeLengthRead(name string) bool {
	if !a.others.known {
		return true
	}
	found := false
	check := func(b *pyAnalysis) {
		walkAll(b.root, func(n *sitter.Node) {
			found = found || n.Kind() == "attribute" && attrName(b, n) == name && b.lengthOf(n)
		})
	}
	check(a)
	for _, f := range a.others.files {
		if !found && mentionsAttribute(f.src, name) {
			check(a.analysisOf(f))
		}
	}
	return found
}

// lengthOf says whether n is the argument of len().
func (a *pyAnalysis) lengthOf(n *sitter.Node) bool {
	args := n.Parent()
	if args == nil || args.Kind() != "argument_list" || args.Parent() == nil || args.Parent().Kind() != "call" {
		return false
	}
	fn, method := a.callName(args.Parent().ChildByFieldName("function"))
	return !method && fn == "len"
}
