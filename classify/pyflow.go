package classify

import (
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// maxFlowDepth bounds how many variables deep a value is followed.
const maxFlowDepth = 12

// flow is where a value goes.
type flow struct {
	use      Use
	returned bool // returned from the function (the caller decides)
	// entry: when returned, the constant key of the dict entry the value
	// was returned in (`return {"loss": v}`), "" for the value itself
	entry   string
	neutral bool // every use found loops back to a variable already followed
	// open: returned (entry as above), and used another way that is not
	// known — unknown, unless a caller tests it or takes it as a size
	// (then needed whatever the other use); returned stays false, so
	// whoever does not ask about it reads an unknown use
	open  bool
	lines []int // lines that show the use
}

func (a *pyAnalysis) at(use Use, n *sitter.Node) flow {
	return flow{use: use, lines: []int{int(n.StartPosition().Row) + 1}}
}

// follow climbs from the expression v to what its value decides or feeds:
// UseBranch for a test, UseShape for a size, UseLog for a log call or a
// store, UseNone for anything else or anything unsure.
func (a *pyAnalysis) follow(v *sitter.Node, depth int) flow { return a.followFrom(v, depth, "") }

// followFrom is follow from a value that is already the entry key of a
// dict (a call's result returned as `{"loss": v}`), or the value itself
// ("").
func (a *pyAnalysis) followFrom(v *sitter.Node, depth int, key string) flow {
	for {
		if !a.spend(1) {
			return flow{} // the query's budget is spent: not known
		}
		p := v.Parent()
		if p == nil {
			return flow{}
		}
		entry := key
		key = ""
		if p.Kind() == "comparison_operator" && presenceTest(p) {
			return flow{use: UseLog, neutral: true} // `v is None`: whether it was set, not what it holds
		}
		switch p.Kind() {
		case "parenthesized_expression", "comparison_operator", "unary_operator", "not_operator", "concatenated_string", "list", "tuple", "set", "expression_list", "keyword_argument", "list_splat", "dictionary_splat":
			if p.Kind() == "keyword_argument" {
				if !sameNode(p.ChildByFieldName("value"), v) {
					return flow{}
				}
				key = entry // handed by name: still the dict that holds it in that entry
			}
			v = p
		case "if_statement", "elif_clause", "while_statement":
			if !sameNode(p.ChildByFieldName("condition"), v) {
				return flow{}
			}
			if p.Kind() != "while_statement" {
				if fl, ok := a.testFlow(p, depth); ok {
					return fl
				}
			}
			return a.at(UseBranch, p)
		case "assert_statement":
			if sameNode(p.NamedChild(0), v) {
				return a.at(UseBranch, p)
			}
			return flow{}
		case "conditional_expression":
			if sameNode(p.NamedChild(1), v) && !a.picksText(p) && !a.picksPlain(p) {
				return a.at(UseBranch, p)
			}
			v = p
		case "boolean_operator":
			if right := p.ChildByFieldName("right"); sameNode(p.ChildByFieldName("left"), v) && (right == nil || !a.callFree(right)) {
				return a.at(UseBranch, p) // `v and f()` tests v: whether f runs
			}
			v = p // `v or x < 3`, x free of calls: the whole decides
		case "binary_operator":
			if !a.arithmeticKeepsScalar(p, v) {
				return flow{}
			}
			v = p
		case "attribute":
			// a method that keeps the data: x.cpu().numpy(), t.detach().tolist()
			call := p.Parent()
			if sameNode(p.ChildByFieldName("object"), v) && v.Kind() == "identifier" && !isStoreTarget(p) &&
				(call == nil || call.Kind() != "call" || !sameNode(call.ChildByFieldName("function"), p)) {
				v = p // a field of the record that holds it (pyrecord.go)
				continue
			}
			if !sameNode(p.ChildByFieldName("object"), v) || call == nil || call.Kind() != "call" ||
				!sameNode(call.ChildByFieldName("function"), p) || !keepsData[a.text(p.ChildByFieldName("attribute"))] && !viewMethods[a.text(p.ChildByFieldName("attribute"))] {
				return flow{}
			}
			v = call
		case "list_comprehension", "set_comprehension", "generator_expression", "dictionary_comprehension":
			if !sameNode(p.ChildByFieldName("body"), v) {
				return flow{} // the iterable or a condition
			}
			v = p
		case "for_in_clause":
			// iterated by a comprehension free of effects (`[x * 100 for x in
			// v.tolist() if not math.isnan(x)]`): its elements (and, with a
			// filter, their number) are computed from it, and the result's
			// uses decide
			comp := p.Parent()
			if !sameNode(p.ChildByFieldName("right"), v) || comp == nil || !a.comprehensionFree(comp, v) {
				return flow{}
			}
			v = comp
		case "interpolation":
			s := p.Parent()
			if s == nil || s.Kind() != "string" {
				return flow{}
			}
			v = s
		case "pair":
			if !sameNode(p.ChildByFieldName("value"), v) || p.Parent() == nil {
				return flow{}
			}
			if p.Parent().Kind() == "dictionary" {
				key = a.constantString(p.ChildByFieldName("key"))
			}
			v = p.Parent() // the dict
		case "argument_list":
			call := p.Parent()
			if call == nil || call.Kind() != "call" {
				return flow{}
			}
			if a.typeTestOf(call, v) {
				return flow{use: UseLog, neutral: true} // its type, not what it holds
			}
			switch u := a.callUse(call); {
			case a.lengthOf(v) && p.NamedChildCount() == 1:
				return a.lengthFlow(call, depth)
			case u == useThrough, a.lookupKey(call, v), a.recordCall(call):
				v = call
			case a.entryCall(call) && sameNode(p.NamedChild(0), v) && a.callNameIs(call, "setdefault"):
				return a.kept(containerOf(call), call, depth) // `d.setdefault(k, [])`: the key picks the entry, as a store's
			case u == int(UseLog) && a.storesInto(call):
				return a.kept(containerOf(call), call, depth) // appended to a list
			case u == int(UseLog):
				return a.at(UseLog, call) // shown: printed, logged, written
			case u == int(UseNone):
				fl, ok := a.intoCallee(call, v, depth, entry)
				if !ok {
					return a.at(UseNone, call)
				}
				if fl.open {
					return a.openAtCall(call, depth, fl.entry) // the callee's return, not this function's
				}
				if !fl.returned || fl.use != UseNone {
					return fl
				}
				if up := call.Parent(); up != nil && up.Kind() == "expression_statement" {
					return flow{use: UseLog, lines: fl.lines} // returned, and dropped: what it kept on the way is all
				}
				v, key = call, fl.entry // returned: the call's result carries it on
			default:
				return a.at(Use(u), call)
			}
		case "call":
			if sameNode(p.ChildByFieldName("function"), v) {
				return a.at(UseBranch, p) // called: which code runs depends on it
			}
			// a generator handed alone (`" ".join(f"{k}={v}" for …)`,
			// `sum(x for …)`): as an argument
			if !sameNode(p.ChildByFieldName("arguments"), v) || v.Kind() != "generator_expression" {
				return flow{}
			}
			switch u := a.callUse(p); {
			case u == useThrough:
				v = p
			case u == int(UseLog) && !a.storesInto(p):
				return a.at(UseLog, p)
			default:
				return flow{}
			}
		case "slice":
			return a.at(UseShape, p) // x[:n]
		case "subscript":
			if sameNode(p.ChildByFieldName("value"), v) && !isStoreTarget(p) {
				// an element read out of what holds it (`row["loss"]`,
				// `vals[0]`): the element is it or part of it, or none of
				// it; its uses decide
				v = p
				continue
			}
			// the key of a store (`counts[word] += 1`): it picks the entry
			// written, and the container's reads decide
			if !sameNode(p.ChildByFieldName("subscript"), v) {
				return flow{}
			}
			if !isStoreTarget(p) {
				// the key of a read (`EXTRA_PASSES[k]`): it picks the element;
				// an element that decides a branch or a size makes the key
				// decide it, any other use leaves it not known (the element
				// may hold anything)
				if el := a.followFrom(p, depth+1, ""); el.use == UseBranch || el.use == UseShape {
					return el
				}
				return flow{}
			}
			return a.kept(containerOf(p), p.Parent(), depth)
		case "assignment":
			if !sameNode(p.ChildByFieldName("right"), v) {
				return flow{}
			}
			return a.stored(p, p.ChildByFieldName("left"), false, depth, entry)
		case "augmented_assignment":
			if !sameNode(p.ChildByFieldName("right"), v) {
				return flow{}
			}
			return a.stored(p, p.ChildByFieldName("left"), true, depth, "")
		case "named_expression":
			if !sameNode(p.ChildByFieldName("value"), v) {
				return flow{}
			}
			name := p.ChildByFieldName("name")
			return merge(a.taint(p, a.text(name), false, depth, ""), a.follow(p, depth))
		case "return_statement":
			if fn := enclosingFunction(p); fn != nil && a.dropped[a.spanOf(fn)] {
				return flow{use: UseLog, neutral: true} // returned to a call whose result is dropped (recordingCall)
			}
			return flow{returned: true, entry: entry}
		case "for_statement":
			// iterated (`for k, v in logs.items():`): the loop's targets
			// hold it, and their uses decide
			if !sameNode(p.ChildByFieldName("right"), v) {
				return flow{}
			}
			return a.stored(p, p.ChildByFieldName("left"), false, depth, "")
		case "lambda":
			// a key function: what it returns is compared, and the call's
			// result (min, max, sorted) carries the value on
			kw := p.Parent()
			if !sameNode(p.ChildByFieldName("body"), v) || kw == nil || kw.Kind() != "keyword_argument" ||
				kw.ChildByFieldName("name") == nil || a.text(kw.ChildByFieldName("name")) != "key" {
				return flow{}
			}
			v = p
		default:
			return flow{}
		}
	}
}

// kept is the use of a value that fill stores into container (an append,
// a subscript or attribute store), from what the program does with the
// container (pycontainer.go, pyfill.go): tested while it is filled, a
// branch; read otherwise while filled, unknown; read only once the loop
// that fills it is over, later; else only kept, logged.
func (a *pyAnalysis) kept(container, fill *sitter.Node, depth int) flow {
	if !a.entryAliased(container) {
		if fl, ok := a.storedByKey(container, false, depth); ok {
			return fl // an entry of a dict: its readers decide
		}
	}
	switch a.containerUse(container, fill) {
	case containerTested:
		return a.at(UseBranch, fill)
	case containerNow:
		if u, ok := a.attributeDecides(container); ok {
			return a.at(u, fill) // a read of the attribute tests or sizes it
		}
		return flow{}
	case containerLater:
		return a.at(UseLater, fill)
	}
	return a.at(UseLog, fill)
}

// stored follows a value assigned (or accumulated, aug) to target; entry
// is the constant key it has in the dict literal assigned ("" for none).
func (a *pyAnalysis) stored(stmt, target *sitter.Node, aug bool, depth int, entry string) flow {
	if target == nil {
		return flow{}
	}
	if fl, ok := a.storedByKey(target, aug, depth); ok {
		return fl
	}
	switch target.Kind() {
	case "subscript", "attribute":
		held := containerOf(target)
		if target.Kind() == "attribute" {
			held = target
		}
		return a.kept(held, stmt, depth) // stored in a container or an object
	case "pattern_list", "tuple_pattern", "list_pattern":
		// unpacked (`lo, hi = t.tolist()`, `level, msg = pick(v)`): each
		// name holds part of it, and every one's use counts
		var out flow
		for i := uint(0); i < target.NamedChildCount(); i++ {
			fl := a.stored(stmt, target.NamedChild(i), false, depth, "")
			if i == 0 {
				out = fl
				continue
			}
			out = merge(out, fl)
		}
		return out
	case "identifier":
		fl := a.taint(stmt, a.text(target), aug, depth, entry)
		if aug && fl.use == UseLog {
			fl.lines = append([]int{int(stmt.StartPosition().Row) + 1}, fl.lines...)
		}
		return fl
	}
	return flow{}
}

// openAtCall is the use of a value a callee returns while using it another
// way not known (flow.open): the call's result, followed, decides only
// when it is tested or taken as a size; returned on, it stays open.
func (a *pyAnalysis) openAtCall(call *sitter.Node, depth int, entry string) flow {
	res := a.followFrom(call, depth, entry)
	switch {
	case res.use == UseBranch || res.use == UseShape:
		return res
	case res.use == UseNone && (res.returned || res.open):
		return flow{open: true, entry: res.entry}
	}
	return flow{}
}

// lengthFlow is the flow of `len(v)` (call) for a value v followed: how
// many a list holds shows what a test that filled it decided, so where
// the length is only shown or kept (`"alerts={}".format(len(alerts))`),
// so is the value. A length that decides or sizes is not known: the
// length of a list read back (`range(len(x.tolist()))`) is the tensor's
// shape, not the values, and which of the two it is is not told here.
func (a *pyAnalysis) lengthFlow(call *sitter.Node, depth int) flow {
	fl := a.followFrom(call, depth+1, "")
	if fl.use == UseBranch || fl.use == UseShape || fl.use == UseNone && !fl.returned && !fl.open {
		return a.at(UseNone, call)
	}
	return fl
}
