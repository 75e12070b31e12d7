package classify

// Into the methods of the program's own classes (docs/classifier.md
// "Values handed to the program's methods"): a value handed to a method
// (`meter.update(loss.item(), n=bs)`) is followed into the parameter that
// takes it, in whichever of the program's files defines the method, as a
// value handed to a function of the file is (pyhelpers.go). The method is
// the one the call runs only when the receiver's class is known and the
// class defines the method itself, undecorated:
//
//   - a name every binding of which, in the scope that binds it, is a call
//     of one of the program's classes (`meter = AverageMeter()`);
//   - self, in a method of a class, when no other class of the program
//     defines a method of that name (a subclass's would run instead);
//   - self.name, every store of which in the class is a call of one of the
//     program's classes (`self.meter = AverageMeter()` in `__init__`).
//
// A class is the program's when the file that calls defines it, or imports
// it from one of the program's modules, and the program has one class of
// that name. Anything else (a library's object, a receiver bound twice,
// a parameter) is not followed: the value's use stays unknown.

import (
	"bytes"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// methodParam matches an argument of a method call to the parameter of
// the program's method the call runs. It returns the analysis of the file
// that defines the method (a itself, or one of the program's other files),
// the method, and the parameter's name; ok is false when the method is not
// known, the argument matches no parameter, or the method assigns it.
func (a *pyAnalysis) methodParam(call, arg *sitter.Node) (b *pyAnalysis, def *sitter.Node, name string, ok bool) {
	fn := call.ChildByFieldName("function")
	if fn == nil || fn.Kind() != "attribute" {
		return nil, nil, "", false
	}
	obj, attr := fn.ChildByFieldName("object"), fn.ChildByFieldName("attribute")
	if obj == nil || attr == nil {
		return nil, nil, "", false
	}
	method := a.text(attr)
	b, cls := a.receiverClass(obj, method)
	if cls == nil {
		return nil, nil, "", false
	}
	def = b.ownMethod(cls, method)
	if def == nil {
		return nil, nil, "", false
	}
	kw, pos, ok := a.argSlot(arg)
	if !ok {
		return nil, nil, "", false
	}
	skip := 1 // self
	if staticMethodBy(def, b.text) {
		skip = 0
	}
	name = b.paramOf(def, kw, pos, skip)
	if name == "" || b.bindsOther(def, name) {
		return nil, nil, "", false
	}
	return b, def, name, true
}

// receiverClass is the program's class whose instance obj is, and the
// analysis of the file that defines it; nil when not known.
func (a *pyAnalysis) receiverClass(obj *sitter.Node, method string) (*pyAnalysis, *sitter.Node) {
	switch obj.Kind() {
	case "identifier":
		name := a.text(obj)
		if name == "self" {
			cls := a.selfClass(obj)
			if cls == nil || a.methodsNamed(method) != 1 {
				return nil, nil
			}
			return a, cls
		}
		return a.boundClass(a.definingScope(obj, name), name)
	case "attribute":
		self, field := obj.ChildByFieldName("object"), obj.ChildByFieldName("attribute")
		if self == nil || field == nil || self.Kind() != "identifier" || a.text(self) != "self" {
			return nil, nil
		}
		cls := a.selfClass(self)
		if cls == nil {
			return nil, nil
		}
		return a.storedClass(cls, a.text(field))
	}
	return nil, nil
}

// selfClass is the class of the method whose first parameter self is.
func (a *pyAnalysis) selfClass(self *sitter.Node) *sitter.Node {
	def := enclosingFunction(self)
	if def == nil || a.paramOf(def, "", 0, 0) != "self" {
		return nil
	}
	return enclosingClass(def)
}

// boundClass is the program's class of which every binding of name in
// scope is a call (one at least), and the analysis of its file.
func (a *pyAnalysis) boundClass(scope *sitter.Node, name string) (*pyAnalysis, *sitter.Node) {
	calls, ok := a.boundValues(scope, name)
	if !ok {
		return nil, nil
	}
	return a.classOfCalls(calls)
}

// boundValues lists the values a scope assigns to name; ok is false when
// name is also bound another way (a parameter, unpacked, a loop's target,
// imported, declared global or nonlocal).
func (a *pyAnalysis) boundValues(scope *sitter.Node, name string) ([]*sitter.Node, bool) {
	if scope == nil {
		return nil, false
	}
	if scope.Kind() == "function_definition" {
		if params := scope.ChildByFieldName("parameters"); params != nil && a.declares(params, name) {
			return nil, false
		}
	}
	declared := false
	walkAll(scope, func(n *sitter.Node) {
		if k := n.Kind(); (k == "global_statement" || k == "nonlocal_statement") && hasIdentifier(n, name, a.text) {
			declared = true // rebound elsewhere, maybe
		}
	})
	if declared {
		return nil, false
	}
	var calls []*sitter.Node
	ok := true
	walkScope(scope, func(n *sitter.Node) {
		if !ok || n.Kind() != "identifier" || a.text(n) != name || isLoad(n) {
			return
		}
		p := n.Parent()
		if p == nil || p.Kind() == "attribute" || p.Kind() == "keyword_argument" {
			return // obj.name, f(name=…): not a binding of the variable
		}
		if p.Kind() != "assignment" || !sameNode(p.ChildByFieldName("left"), n) {
			ok = false // unpacked, a loop's target, imported, declared global…
			return
		}
		calls = append(calls, p.ChildByFieldName("right"))
	})
	return calls, ok
}

// storedClass is the program's class of which every store of self.field
// in cls is a call (one at least), and the analysis of its file.
func (a *pyAnalysis) storedClass(cls *sitter.Node, field string) (*pyAnalysis, *sitter.Node) {
	var calls []*sitter.Node
	walkAll(cls, func(n *sitter.Node) {
		if n.Kind() != "attribute" || !isStoreTarget(n) {
			return
		}
		obj, f := n.ChildByFieldName("object"), n.ChildByFieldName("attribute")
		if obj != nil && f != nil && obj.Kind() == "identifier" && a.text(obj) == "self" && a.text(f) == field {
			calls = append(calls, n.Parent().ChildByFieldName("right"))
		}
	})
	return a.classOfCalls(calls)
}

// classOfCalls is the program's one class that every one of calls makes
// (`Meter(…)`), and the analysis of its file; nil when calls is empty or
// any of them is something else.
func (a *pyAnalysis) classOfCalls(calls []*sitter.Node) (*pyAnalysis, *sitter.Node) {
	var b *pyAnalysis
	var cls *sitter.Node
	for _, c := range calls {
		if c == nil || c.Kind() != "call" {
			return nil, nil
		}
		fn := c.ChildByFieldName("function")
		if fn == nil || fn.Kind() != "identifier" {
			return nil, nil
		}
		cb, cc := a.programClass(a.text(fn))
		if cc == nil || cls != nil && !sameNode(cls, cc) {
			return nil, nil
		}
		b, cls = cb, cc
	}
	return b, cls
}

// moduleClass is the file's one module-level class named name.
func (a *pyAnalysis) moduleClass(name string) *sitter.Node {
	return a.moduleDefinition("class_definition", name)
}

// ownMethod is the class's method named name, defined in its own body,
// undecorated or a `@staticmethod`; nil when it has none (an inherited
// method is not followed) or more than one.
func (a *pyAnalysis) ownMethod(cls *sitter.Node, name string) *sitter.Node {
	body := cls.ChildByFieldName("body")
	var found *sitter.Node
	for i := uint(0); body != nil && i < body.NamedChildCount(); i++ {
		d := body.NamedChild(i)
		nm := d.ChildByFieldName("name")
		if d.Kind() == "decorated_definition" {
			def := d.ChildByFieldName("definition")
			if def == nil || def.ChildByFieldName("name") == nil || a.text(def.ChildByFieldName("name")) != name {
				continue
			}
			if !staticMethodBy(def, a.text) || found != nil {
				return nil // a property, a class method, a wrapper: not followed
			}
			found = def
			continue
		}
		if d.Kind() != "function_definition" || nm == nil || a.text(nm) != name {
			continue
		}
		if found != nil {
			return nil
		}
		found = d
	}
	return found
}

// staticMethodBy says whether def is decorated with `@staticmethod` alone
// (Python calls it without the instance), its source read by text.
func staticMethodBy(def *sitter.Node, text func(*sitter.Node) string) bool {
	d := def.Parent()
	if d == nil || d.Kind() != "decorated_definition" {
		return false
	}
	decorators := 0
	static := false
	for i := uint(0); i < d.NamedChildCount(); i++ {
		if c := d.NamedChild(i); c.Kind() == "decorator" {
			decorators++
			static = strings.TrimSpace(strings.TrimPrefix(text(c), "@")) == "staticmethod"
		}
	}
	return decorators == 1 && static
}

// methodsNamed counts the methods named name of every class of the
// program (of this file alone when the program is not known).
func (a *pyAnalysis) methodsNamed(name string) int {
	count := func(b *pyAnalysis) int {
		n := 0
		walkAll(b.root, func(d *sitter.Node) {
			if d.Kind() == "function_definition" && enclosingClass(d) != nil {
				if nm := d.ChildByFieldName("name"); nm != nil && b.text(nm) == name {
					n++
				}
			}
		})
		return n
	}
	n := count(a)
	if !a.others.known {
		return n + 1 // another file may define one: not known
	}
	for _, f := range a.others.files {
		if bytes.Contains(f.src, []byte(name)) {
			n += count(&pyAnalysis{src: f.src, root: f.root})
		}
	}
	return n
}

// analysisOf is an analysis of the program's file pf that carries this
// one's depths on; a itself when pf is a's file.
func (a *pyAnalysis) analysisOf(pf *parsedFile) *pyAnalysis {
	if pf == a.others.self {
		return a
	}
	return &pyAnalysis{src: pf.src, root: pf.root, row: ^uint(0), tainted: map[string]bool{}, methods: pf.methods,
		others: a.others.prog.others(pf.path), calleeDepth: a.calleeDepth, numberDepth: a.numberDepth,
		onwardDepth: a.onwardDepth, methodDepth: a.methodDepth, pureDepth: a.pureDepth, budget: a.budget, deciding: a.deciding,
		tests: a.testMemo(), dropped: a.droppedCalls()}
}

// walkScope calls fn on every named node of scope's own code: not inside
// the functions or classes it defines.
func walkScope(scope *sitter.Node, fn func(*sitter.Node)) {
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		fn(n)
		for i := uint(0); i < n.NamedChildCount(); i++ {
			c := n.NamedChild(i)
			if k := c.Kind(); k == "function_definition" || k == "class_definition" || k == "decorated_definition" || k == "lambda" {
				if k == "decorated_definition" {
					c = c.ChildByFieldName("definition")
				}
				if c == nil {
					continue
				}
				if nm := c.ChildByFieldName("name"); nm != nil {
					fn(nm) // its name is bound here
				}
				continue
			}
			walk(c)
		}
	}
	body := scope
	if scope.Kind() == "function_definition" {
		body = scope.ChildByFieldName("body")
	}
	if body != nil {
		walk(body)
	}
}

// hasIdentifier says whether n has an identifier name under it.
func hasIdentifier(n *sitter.Node, name string, text func(*sitter.Node) string) bool {
	found := false
	walkAll(n, func(c *sitter.Node) { found = found || c.Kind() == "identifier" && text(c) == name })
	return found
}
