package classify

import sitter "github.com/tree-sitter/go-tree-sitter"

// After the loop: a container filled inside a loop, or inside a step
// function that a loop elsewhere calls, and read only once the filling is
// over (`preds.append(out.cpu())` in an evaluation loop, `torch.cat(preds)`
// after it) needs none of its contents while it is filled. Every copy into
// it could be asynchronous, with one wait before the first read after the
// loop; the reads after the loop do not make the copies' waits needed.
//
// The fill window is bounded only where the analysis can see all of it:
//
//   - the container is a fresh one (`[]`, `{}`, `list()`, `dict()`,
//     `defaultdict(…)`, …) bound in the function that defines it, and never
//     rebound to anything else, so no caller can read it in between;
//   - the fill sits inside a loop of that same function: the window is the
//     innermost such loop; or
//   - the fill sits in a step function defined in that function (a
//     closure), whose name is only called there or handed to a plain
//     function (`measure(step)`, taken to call it before it returns): the
//     window is the closure itself and every statement, from the first to
//     the last, that names it.
//
// Reads inside the window, and reads inside any other function nested in
// the defining one (it may be called inside the window), still count.
// Anything else (a parameter, a global, an attribute, a closure stored or
// returned, a decorator that may register it) leaves the window unbounded
// and every read counts, as before.

// fillWindow returns the nodes inside which a read of the container name
// (bound in scope) may run while fills at fill are still to come; ok is
// false when no such bound is known.
func (a *pyAnalysis) fillWindow(fill, scope *sitter.Node, name string) (window []*sitter.Node, ok bool) {
	if scope == nil || scope.Kind() != "function_definition" || !a.bindsFresh(scope, name) {
		return nil, false
	}
	return a.fillWindowIn(fill, scope)
}

// fillWindowIn is fillWindow once the container (or object) is known to
// be the function's own: the innermost loop of scope around fill, or the
// closure around it and the statements that name it.
func (a *pyAnalysis) fillWindowIn(fill, scope *sitter.Node) (window []*sitter.Node, ok bool) {
	var loop, closure *sitter.Node
	for p := fill.Parent(); p != nil && !sameNode(p, scope); p = p.Parent() {
		switch p.Kind() {
		case "for_statement", "while_statement":
			if closure == nil && loop == nil {
				loop = p
			}
		case "function_definition", "lambda":
			closure = p
		}
	}
	nested := a.nestedFunctions(scope)
	switch {
	case closure == nil && loop != nil:
		return append(nested, loop), true
	case closure != nil && closure.Kind() == "function_definition":
		calls, ok := a.closureCalls(scope, closure)
		if !ok {
			return nil, false
		}
		return append(append(nested, closure), calls...), true
	}
	return nil, false
}

// freshContainers are the calls that make a new, empty container.
var freshContainers = map[string]bool{"list": true, "dict": true, "set": true, "defaultdict": true,
	"OrderedDict": true, "deque": true, "Counter": true}

// bindsFresh says whether the function's own body binds name, and only
// ever to a new container, and does not take it as a parameter.
func (a *pyAnalysis) bindsFresh(fn *sitter.Node, name string) bool {
	if params := fn.ChildByFieldName("parameters"); params != nil && a.declares(params, name) {
		return false
	}
	fresh, other := 0, 0
	a.ownStatements(fn, func(n *sitter.Node) {
		switch n.Kind() {
		case "assignment", "augmented_assignment":
		default:
			return
		}
		left := n.ChildByFieldName("left")
		if left == nil || !a.mentions(left, name) {
			return
		}
		if n.Kind() == "assignment" && left.Kind() == "identifier" && a.isFresh(n.ChildByFieldName("right")) {
			fresh++
			return
		}
		if left.Kind() == "identifier" || left.Kind() == "pattern_list" || left.Kind() == "tuple_pattern" {
			other++ // rebound (or +=, which may alias another list)
		}
	})
	return fresh > 0 && other == 0
}

// isFresh says whether an expression makes a new, empty container.
func (a *pyAnalysis) isFresh(e *sitter.Node) bool {
	if e == nil {
		return false
	}
	switch e.Kind() {
	case "list", "dictionary", "set":
		return e.NamedChildCount() == 0
	case "call":
		name, _ := a.callName(e.ChildByFieldName("function"))
		return freshContainers[name]
	}
	return false
}

// mentions says whether the target names the identifier (alone or in a
// tuple of targets), not an attribute or an element of it.
func (a *pyAnalysis) mentions(target *sitter.Node, name string) bool {
	if target.Kind() == "identifier" {
		return a.text(target) == name
	}
	if target.Kind() != "pattern_list" && target.Kind() != "tuple_pattern" {
		return false
	}
	for i := uint(0); i < target.NamedChildCount(); i++ {
		if a.mentions(target.NamedChild(i), name) {
			return true
		}
	}
	return false
}

// ownStatements calls fn on every node of the function's body outside its
// nested functions and classes.
func (a *pyAnalysis) ownStatements(fn *sitter.Node, visit func(*sitter.Node)) {
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		visit(n)
		for i := uint(0); i < n.NamedChildCount(); i++ {
			c := n.NamedChild(i)
			if c.Kind() == "function_definition" || c.Kind() == "class_definition" || c.Kind() == "lambda" {
				continue
			}
			walk(c)
		}
	}
	if body := fn.ChildByFieldName("body"); body != nil {
		walk(body)
	}
}

// nestedFunctions lists the functions, lambdas and classes defined inside fn.
func (a *pyAnalysis) nestedFunctions(fn *sitter.Node) []*sitter.Node {
	var out []*sitter.Node
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		for i := uint(0); i < n.NamedChildCount(); i++ {
			c := n.NamedChild(i)
			switch c.Kind() {
			case "function_definition", "class_definition", "lambda":
				out = append(out, c)
				continue
			}
			walk(c)
		}
	}
	if body := fn.ChildByFieldName("body"); body != nil {
		walk(body)
	}
	return out
}

// closureCalls returns the statements of scope's body, from the first to
// the last, that name the closure; ok is false when the closure is not a
// statement of scope's body, carries a decorator that is not torch's, or
// is named other than as a call or a call's argument (stored, returned,
// assigned: it may run at any time).
func (a *pyAnalysis) closureCalls(scope, closure *sitter.Node) (stmts []*sitter.Node, ok bool) {
	def := closure
	if p := closure.Parent(); p != nil && p.Kind() == "decorated_definition" {
		def = p
		for i := uint(0); i < p.NamedChildCount(); i++ {
			if d := p.NamedChild(i); d.Kind() == "decorator" && !a.torchDecorator(d) {
				return nil, false
			}
		}
	}
	body := scope.ChildByFieldName("body")
	nameNode := closure.ChildByFieldName("name")
	if body == nil || nameNode == nil || def.Parent() == nil || !sameNode(def.Parent(), body) {
		return nil, false
	}
	name := a.text(nameNode)
	first, last := -1, -1
	for i := uint(0); i < body.NamedChildCount(); i++ {
		stmt := body.NamedChild(i)
		if sameNode(stmt, def) {
			continue
		}
		named, bad := false, false
		a.uses(stmt, name, func(n *sitter.Node) {
			named = true
			bad = bad || !calledOrPassed(n)
		})
		if bad {
			return nil, false
		}
		if named {
			if first < 0 {
				first = int(i)
			}
			last = int(i)
		}
	}
	if first < 0 {
		return nil, false // never called here: it may run at any time
	}
	for i := first; i <= last; i++ {
		stmts = append(stmts, body.NamedChild(uint(i)))
	}
	return stmts, true
}

// calledOrPassed says whether an identifier is the function of a call, or
// an argument of a call of a plain function (`measure(step)`), which is
// taken to call it before it returns. Handed to a method
// (`hooks.append(step)`, `model.register_forward_hook(step)`) it may be
// stored and run at any time.
func calledOrPassed(n *sitter.Node) bool {
	p := n.Parent()
	if p == nil {
		return false
	}
	switch p.Kind() {
	case "call":
		return sameNode(p.ChildByFieldName("function"), n)
	case "keyword_argument":
		if !sameNode(p.ChildByFieldName("value"), n) {
			return false
		}
		p = p.Parent()
	}
	if p == nil || p.Kind() != "argument_list" {
		return false
	}
	call := p.Parent()
	if call == nil || call.Kind() != "call" {
		return false
	}
	fn := call.ChildByFieldName("function")
	return fn != nil && fn.Kind() == "identifier"
}

// torchDecorator says whether a decorator is one of torch's that only
// changes how the function runs (no_grad, inference_mode, …), never when.
func (a *pyAnalysis) torchDecorator(d *sitter.Node) bool {
	switch t := a.text(d); t {
	case "@torch.no_grad()", "@torch.inference_mode()", "@torch.enable_grad()", "@no_grad()", "@inference_mode()",
		"@torch.no_grad", "@torch.inference_mode", "@torch.compiler.disable", "@torch.autocast(\"cuda\")":
		return true
	}
	return false
}

// inside says whether n lies inside w.
func inside(n, w *sitter.Node) bool { return w != nil && within(n, []*sitter.Node{w}) }

// within says whether n lies inside one of nodes.
func within(n *sitter.Node, nodes []*sitter.Node) bool {
	for _, w := range nodes {
		if w.StartByte() <= n.StartByte() && n.EndByte() <= w.EndByte() {
			return true
		}
	}
	return false
}
