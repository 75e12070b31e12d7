package classify

// Reads after the loop of an object's attributes (docs/classifier.md
// "Read once the loop is over"): an object of the program's class made in
// a function (`tracker = BestTracker()`), handed values inside a loop of
// that function or inside a step function a statement of it calls
// (`measure(step)`), whose attribute the function reads only after that
// loop or those statements (`if tracker.best < 0.5:` after
// `measure(step)`), needs none of those values while they are stored: the
// last could be read once, after the loop. The window is pyfill.go's, with
// the object in place of a fresh container: every use of the object must
// be a plain attribute read or a method called on it (an object handed
// elsewhere, `cbs = [tracker]`, may be filled under another name), and
// each method call inside a loop or a step function may store into it and
// must have a bounded window the read lies outside of.

import sitter "github.com/tree-sitter/go-tree-sitter"

// readAfterFill says whether n, an attribute read `obj.attr`, runs only
// once every store into obj in the function that makes it is over.
func (a *pyAnalysis) readAfterFill(n *sitter.Node) bool {
	obj := n.ChildByFieldName("object")
	if obj == nil || obj.Kind() != "identifier" || isStoreTarget(n) {
		return false
	}
	name := a.text(obj)
	scope := a.definingScope(obj, name)
	if scope == nil || scope.Kind() != "function_definition" {
		return false
	}
	if b, cls := a.boundClass(scope, name); b == nil || cls == nil {
		return false // not one object of the program's class, made here
	}
	fills := 0
	after := true
	a.uses(scope, name, func(u *sitter.Node) {
		if after && !a.plainRead(u) && !a.methodCalled(u) {
			after = false // handed elsewhere (`cbs = [tracker]`, `run(step, tracker)`): its other names are not followed
			return
		}
		if !after || a.plainRead(u) || runsOnce(u, scope) {
			return // a read, or a call that runs once (`h.reset()` before the loop, `h.close()` after it): no fill while it runs
		}
		fills++
		window, ok := a.fillWindowIn(u, scope)
		after = ok && !within(n, window)
	})
	return after && fills > 0
}

// methodCalled says whether the use u of an object is the receiver of a
// method call (`obj.update(v)`).
func (a *pyAnalysis) methodCalled(u *sitter.Node) bool {
	p := u.Parent()
	if p == nil || p.Kind() != "attribute" || !sameNode(p.ChildByFieldName("object"), u) {
		return false
	}
	call := p.Parent()
	return call != nil && call.Kind() == "call" && sameNode(call.ChildByFieldName("function"), p)
}

// runsOnce says whether n lies in scope's own code outside every loop and
// every nested function or lambda: it runs once per call of scope.
func runsOnce(n, scope *sitter.Node) bool {
	for p := n.Parent(); p != nil && !sameNode(p, scope); p = p.Parent() {
		switch p.Kind() {
		case "for_statement", "while_statement", "function_definition", "lambda", "list_comprehension",
			"set_comprehension", "dictionary_comprehension", "generator_expression":
			return false
		}
	}
	return true
}

// plainRead says whether the use u of an object only reads an attribute
// of it (`obj.best`, not `obj.update(v)`, not `f(obj)`).
func (a *pyAnalysis) plainRead(u *sitter.Node) bool {
	p := u.Parent()
	if p == nil || p.Kind() != "attribute" || !sameNode(p.ChildByFieldName("object"), u) || isStoreTarget(p) {
		return false
	}
	call := p.Parent()
	return call == nil || call.Kind() != "call" || !sameNode(call.ChildByFieldName("function"), p)
}
