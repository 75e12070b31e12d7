package classify

// What a function stores in a dict it was handed is its callers' entry:
// their reads of it decide (docs/classifier.md, "Dict entries, early
// returns and search loops (stop 32)" and "Deeper bookkeeping (stop 33)").

import sitter "github.com/tree-sitter/go-tree-sitter"

// paramEntryFlow is the flow of a value a function stores under the
// constant key of a dict it takes as a parameter (`watch["best"] = v` in
// `def observe(watch, v)`): the dict is its callers', so what decides is
// each caller's use of that entry of the variable it passes (taintIn from
// the caller's scope). ok is false when name is not one of scope's
// parameters, the program's calls of the function are not all known (it
// is passed as a value, or the program's files are not), or a call
// passes anything but a variable for it. A caller that was itself handed
// the dict passes the question on to its own callers; one that returns
// the entry's value goes on from its own calls (returnedToCallers). Going
// up to a caller is not a call deeper: only the flow depth bounds it
// (with the query's budget and the guard against cycles).
func (a *pyAnalysis) paramEntryFlow(scope *sitter.Node, name, key string, depth int) (flow, bool) {
	p, pf := a.others.prog, a.others.self
	if scope == nil || scope.Kind() != "function_definition" || p == nil || pf == nil || !sameNode(pf.root, a.root) ||
		depth >= maxFlowDepth {
		return flow{}, false
	}
	index := paramIndex(pf, scope, name)
	if index < 0 {
		return flow{}, false
	}
	if enclosingClass(scope) != nil && !staticMethodBy(scope, pf.text) {
		index-- // self
	}
	calls, known := p.typer().callsOf(pf, scope)
	if !known || len(calls) == 0 || index < 0 {
		return flow{}, false
	}
	var out flow
	for i, c := range calls {
		arg, ok := argumentFor(c.file, c.node, index, name)
		if !ok || arg == nil || arg.Kind() != "identifier" {
			return flow{}, false
		}
		b := a.analysisOf(c.file)
		argName := b.text(arg)
		scope := b.definingScope(arg, argName)
		fl, used := b.taintInUsed(scope, argName, false, depth+1, key)
		if fl.returned && fl.use == UseNone {
			fl = b.returnedToCallers(c.file, arg, fl, depth+1)
		}
		if up, ok := b.paramEntryFlow(scope, argName, key, depth+1); ok {
			if used {
				up = merge(fl, up)
			}
			fl = up // the caller was handed the dict too: its own callers read the entry
		}
		fl.lines = nil // another place's lines: not the store's to show
		if i == 0 {
			out = fl
			continue
		}
		out = merge(out, fl)
	}
	return out, true
}

// returnedToCallers follows on a value that the function enclosing n (in
// pf, this analysis's file) returns (fl.returned): from every call of that
// function in the program (`improved, bad = fold(stats, v)` where fold
// returns `stats["bad"]`). fl itself when the calls are not all known;
// nothing when the program never calls the function.
func (a *pyAnalysis) returnedToCallers(pf *parsedFile, n *sitter.Node, fl flow, depth int) flow {
	fn, p := enclosingFunction(n), a.others.prog
	if fn == nil || p == nil || depth >= maxFlowDepth {
		return fl
	}
	calls, known := p.typer().callsOf(pf, fn)
	switch {
	case !known:
		return fl
	case len(calls) == 0:
		return flow{use: UseLog, neutral: true} // no code of the program calls it: returned to no one
	}
	var out flow
	for i, c := range calls {
		b := a.analysisOf(c.file)
		onward := b.followFrom(c.node, depth+1, fl.entry)
		onward.lines = nil
		if i == 0 {
			out = onward
			continue
		}
		out = merge(out, onward)
	}
	return out
}

// filledThrough says whether a container is only filled where it stands
// (`d["seen"].append(x)`, `d["seen"].extend(xs)`): the call adds to it
// and reads nothing of what it holds.
func (a *pyAnalysis) filledThrough(container *sitter.Node) bool {
	attr := container.Parent()
	if attr == nil || attr.Kind() != "attribute" || !sameNode(attr.ChildByFieldName("object"), container) {
		return false
	}
	call := attr.Parent()
	return call != nil && call.Kind() == "call" && sameNode(call.ChildByFieldName("function"), attr) && a.storesInto(call) &&
		!a.dictUpdate(call)
}

// entryAliased says whether what a dict holds under the constant key of
// container (`stats["hist"]`) may also be held by a variable: somewhere in
// the program a dict literal puts a variable under that key (`{"hist":
// hist}`), or a store does (`d["hist"] = hist`). A list filled through the
// entry is then filled through that variable too, whose reads the entry's
// do not include. False for any other container.
func (a *pyAnalysis) entryAliased(container *sitter.Node) bool {
	if container == nil || container.Kind() != "subscript" {
		return false
	}
	key := a.constantString(container.ChildByFieldName("subscript"))
	if key == "" {
		return false
	}
	aliased := func(b *pyAnalysis) bool {
		found := false
		walkAll(b.root, func(n *sitter.Node) {
			if found {
				return
			}
			switch n.Kind() {
			case "pair":
				v := n.ChildByFieldName("value")
				found = b.constantString(n.ChildByFieldName("key")) == key && v != nil && v.Kind() == "identifier"
			case "assignment":
				l, r := n.ChildByFieldName("left"), n.ChildByFieldName("right")
				found = l != nil && r != nil && l.Kind() == "subscript" && r.Kind() == "identifier" &&
					b.constantString(l.ChildByFieldName("subscript")) == key
			}
		})
		return found
	}
	if aliased(a) {
		return true
	}
	for _, f := range a.others.files {
		if aliased(a.analysisOf(f)) {
			return true
		}
	}
	return false
}
