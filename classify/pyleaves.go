package classify

// Tests whose arms leave what they are in: an early return that skips
// only recording, and a search loop whose break only picks the names it
// sets (docs/classifier.md, "Early returns and search loops (stop 32)").

import sitter "github.com/tree-sitter/go-tree-sitter"

// recordsThenLeaves says whether a test at the top of a function's body
// only decides what is recorded, though an arm returns early (`if status
// == "alert": alerts.append(i); return` … `lines.append(msg)`): every
// return of the function is bare (it returns nothing, whatever the test
// says), every arm and every statement of the body after the test (which
// the early return skips) only records or returns, and one arm returns.
// The flow is then what they record.
func (a *pyAnalysis) recordsThenLeaves(test *sitter.Node, depth int) (flow, bool) {
	body, after, ok := a.topTest(test, func(ret *sitter.Node) bool { return ret.NamedChildCount() == 0 })
	if !ok {
		return flow{}, false
	}
	out, leaves, ok := a.decidedArms(test, depth, armRecordsOrLeaves)
	if !ok || !leaves {
		return flow{}, false // no arm returns: onlyRecords' case
	}
	rest, _, ok := a.armStatements(body, after, depth, armRecordsOrLeaves)
	if !ok {
		return flow{}, false
	}
	if out = merge(out, rest); !keepsOnly(out.use) || out.neutral {
		return flow{}, false // nothing recorded: a test of nothing is left a test
	}
	out.lines = append([]int{int(test.StartPosition().Row) + 1}, out.lines...)
	return out, true
}

// searchPick says whether a test sits in a loop that only computes names
// (`for name, limit in BANDS: if abs(gap) < limit: band = name; break`,
// `else: band = "wide"`): the loop iterates a value free of calls, its
// body is the test, whose conditions are free of calls, and the test's
// arms and the loop's else only assign plain values (names, literals)
// to names, break, continue or pass. What the test decides is then which
// values those names get (and how many turns a loop without effects
// takes): the flow is theirs.
func (a *pyAnalysis) searchPick(test *sitter.Node, depth int) (flow, bool) {
	blk := test.Parent()
	if test.Kind() != "if_statement" || blk == nil || blk.Kind() != "block" {
		return flow{}, false
	}
	loop := blk.Parent()
	if loop == nil || loop.Kind() != "for_statement" || !sameNode(loop.ChildByFieldName("body"), blk) {
		return flow{}, false
	}
	if it := loop.ChildByFieldName("right"); it == nil || !a.iterFree(it) {
		return flow{}, false
	}
	var assigns []*sitter.Node
	for i := uint(0); i < blk.NamedChildCount(); i++ {
		switch s := blk.NamedChild(i); {
		case sameNode(s, test):
			for _, p := range a.ifParts(test) {
				if p.cond != nil && !a.callFree(p.cond) {
					return flow{}, false
				}
				if !a.onlyAssigns(p.block, &assigns) {
					return flow{}, false
				}
			}
		case s.Kind() != "comment" && s.Kind() != "pass_statement":
			return flow{}, false // the loop does more than the test
		}
	}
	for i := uint(0); i < loop.NamedChildCount(); i++ {
		if c := loop.NamedChild(i); c.Kind() == "else_clause" && !a.onlyAssigns(c.ChildByFieldName("body"), &assigns) {
			return flow{}, false
		}
	}
	// the loop's own names hold what the break left in them; one never
	// read is no use
	out, any := flow{use: UseLog, neutral: true}, false
	walkAll(loop.ChildByFieldName("left"), func(n *sitter.Node) {
		if n.Kind() != "identifier" {
			return
		}
		if fl, used := a.taintInUsed(enclosingScope(loop), a.text(n), false, depth, ""); used {
			out, any = merge(out, fl), true
		}
	})
	for _, e := range assigns {
		out, any = merge(out, a.stored(e, e.ChildByFieldName("left"), false, depth, "")), true
	}
	if !any {
		return flow{}, false
	}
	return out, true
}

// plainValue says whether v is a name, a literal, or the length of one
// (`band = name`, `k = len(THRESHOLDS)`): a value that computes nothing on
// the GPU.
func (a *pyAnalysis) plainValue(v *sitter.Node) bool {
	switch v.Kind() {
	case "identifier", "string", "integer", "float", "true", "false", "none":
		return true
	case "call":
		name, method := a.callName(v.ChildByFieldName("function"))
		args := v.ChildByFieldName("arguments")
		return !method && name == "len" && args != nil && args.NamedChildCount() == 1 && a.plainValue(args.NamedChild(0))
	}
	return false
}

// iterBuiltins make an iterable of their arguments and do nothing else.
var iterBuiltins = map[string]bool{"enumerate": true, "zip": true, "range": true, "reversed": true}

// iterFree says whether an iterable is free of calls, or made by one of
// iterBuiltins from values that are (`enumerate(THRESHOLDS)`).
func (a *pyAnalysis) iterFree(it *sitter.Node) bool {
	if it.Kind() == "call" {
		if name, method := a.callName(it.ChildByFieldName("function")); !method && iterBuiltins[name] {
			args := it.ChildByFieldName("arguments")
			return args != nil && a.callFree(args)
		}
	}
	return a.callFree(it)
}

// onlyAssigns says whether every statement of block is one that
// onlyAssignsStatement allows, collecting the assignments.
func (a *pyAnalysis) onlyAssigns(block *sitter.Node, assigns *[]*sitter.Node) bool {
	if block == nil {
		return false
	}
	for i := uint(0); i < block.NamedChildCount(); i++ {
		if !a.onlyAssignsStatement(block.NamedChild(i), assigns) {
			return false
		}
	}
	return true
}

// onlyAssignsStatement says whether s is an assignment of a plain value
// (plainValue) to a name, a break, a continue, a pass or a comment,
// collecting the assignment.
func (a *pyAnalysis) onlyAssignsStatement(s *sitter.Node, assigns *[]*sitter.Node) bool {
	switch s.Kind() {
	case "break_statement", "continue_statement", "pass_statement", "comment":
		return true
	case "expression_statement":
		if s.NamedChildCount() != 1 || s.NamedChild(0).Kind() != "assignment" {
			return false
		}
		e := s.NamedChild(0)
		left, right := e.ChildByFieldName("left"), e.ChildByFieldName("right")
		if left == nil || right == nil || left.Kind() != "identifier" || !a.plainValue(right) {
			return false
		}
		*assigns = append(*assigns, e)
		return true
	}
	return false
}

// recordingCall says whether a call made as a statement runs a function
// of the program that only records (`record_alert(stats, i, v)`,
// `update_stats(stats, v)`): its arguments are free of calls and its
// body keeps to armStatements' recording rule, every return of which
// returns nothing or a value free of calls (the statement drops it). The
// flow is what the body records.
func (a *pyAnalysis) recordingCall(call *sitter.Node, depth int) (flow, bool) {
	if args := call.ChildByFieldName("arguments"); args == nil || !a.callFree(args) ||
		a.calleeDepth >= maxCalleeDepth || depth >= maxFlowDepth {
		return flow{}, false
	}
	var b *pyAnalysis
	var def *sitter.Node
	switch fn := call.ChildByFieldName("function"); {
	case fn == nil:
		return flow{}, false
	case fn.Kind() == "identifier":
		b, def = a.programFunction(a.text(fn))
	case fn.Kind() == "attribute":
		b, def = a.moduleAttributeFunction(fn)
	}
	if def == nil || def.ChildByFieldName("body") == nil {
		return flow{}, false
	}
	b.calleeDepth++
	defer func() { b.calleeDepth-- }()
	span, dropped := b.spanOf(def), b.droppedCalls()
	if !dropped[span] && b.resultAlwaysDropped(def) {
		dropped[span] = true
		defer delete(dropped, span)
	}
	fl, _, ok := b.armStatements(def.ChildByFieldName("body"), 0, depth+1, armRecordsDropped)
	if !ok {
		return flow{}, false
	}
	if b != a {
		fl.lines = nil // another file's lines
	}
	return fl, true
}

// armCompound walks the body of a with statement that only opens files
// (writesFile) or of a for loop that only reads what it iterates
// (recordingLoop) under rule, as armStatements does an arm; ok is false
// for any other with or for.
func (a *pyAnalysis) armCompound(s *sitter.Node, depth int, rule armRule) (out flow, returns, ok bool) {
	body := s.ChildByFieldName("body")
	switch {
	case body == nil:
		return flow{}, false, false
	case s.Kind() == "with_statement" && a.writesFile(s), s.Kind() == "for_statement" && a.recordingLoop(s):
		return a.armStatements(body, 0, depth, rule)
	}
	return flow{}, false, false
}

// recordingLoop says whether a for statement in an arm may be walked as
// its body's statements (armStatements): it iterates a value free of calls
// (iterFree) into plain names, has no else, and its body neither stores
// into what a loop name holds nor calls a method of it (`for g in
// opt.param_groups: g["lr"] = lr` changes the optimizer; `notes.append(
// g["lr"])` only reads it).
func (a *pyAnalysis) recordingLoop(loop *sitter.Node) bool {
	left, it, body := loop.ChildByFieldName("left"), loop.ChildByFieldName("right"), loop.ChildByFieldName("body")
	if left == nil || it == nil || body == nil || loop.ChildByFieldName("alternative") != nil || !a.iterFree(it) {
		return false
	}
	names := map[string]bool{}
	switch left.Kind() {
	case "identifier":
		names[a.text(left)] = true
	case "pattern_list", "tuple_pattern":
		for i := uint(0); i < left.NamedChildCount(); i++ {
			if n := left.NamedChild(i); n.Kind() == "identifier" {
				names[a.text(n)] = true
				continue
			}
			return false
		}
	default:
		return false
	}
	changes := false
	walkAll(body, func(n *sitter.Node) {
		switch n.Kind() {
		case "assignment", "augmented_assignment":
			if l := n.ChildByFieldName("left"); l != nil && l.Kind() != "identifier" {
				root := containerOf(l)
				changes = changes || root == nil || root.Kind() != "identifier" || names[a.text(root)]
			}
		case "call":
			if fn := n.ChildByFieldName("function"); fn != nil && fn.Kind() == "attribute" {
				obj := fn.ChildByFieldName("object")
				changes = changes || obj != nil && obj.Kind() == "identifier" && names[a.text(obj)]
			}
		}
	})
	return !changes
}

// writesFile says whether a with statement only opens files (`with
// open(path, "a") as f:`, its arguments free of calls): its body writes
// to the host's files, which armStatements then walks.
func (a *pyAnalysis) writesFile(with *sitter.Node) bool {
	opens := 0
	bad := false
	walkAll(with, func(n *sitter.Node) {
		if bad || n.Kind() != "with_item" {
			return
		}
		v := n.ChildByFieldName("value")
		if v != nil && v.Kind() == "as_pattern" && v.NamedChildCount() > 0 {
			v = v.NamedChild(0)
		}
		name, method := "", false
		if v != nil && v.Kind() == "call" {
			name, method = a.callName(v.ChildByFieldName("function"))
		}
		if v == nil || v.Kind() != "call" || method || name != "open" || !a.callFree(v.ChildByFieldName("arguments")) {
			bad = true
			return
		}
		opens++
	})
	return !bad && opens > 0
}

// droppedCalls is the set of functions whose result the call being walked
// drops (recordingCall): a value one of them returns goes nowhere. Shared
// with the analyses of the program's other files (analysisOf).
func (a *pyAnalysis) droppedCalls() map[nodeSpan]bool {
	if a.dropped == nil {
		a.dropped = map[nodeSpan]bool{}
	}
	return a.dropped
}

// resultAlwaysDropped says whether every call of the function def (in
// this file) in the program is a statement of its own, which drops what
// it returns; false when the calls are not all known.
func (a *pyAnalysis) resultAlwaysDropped(def *sitter.Node) bool {
	p, pf := a.others.prog, a.others.self
	if p == nil || pf == nil || !sameNode(pf.root, a.root) {
		return false
	}
	calls, known := p.typer().callsOf(pf, def)
	if !known || len(calls) == 0 {
		return false
	}
	for _, c := range calls {
		if up := c.node.Parent(); up == nil || up.Kind() != "expression_statement" {
			return false
		}
	}
	return true
}
