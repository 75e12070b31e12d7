package classify

// Code no part of the program runs (docs/classifier.md "Methods no code
// calls"): a helper class shared by several scripts often has methods one
// program never calls (the ImageNet example's AverageMeter.all_reduce,
// made for distributed runs), and a helper module functions and classes
// one script never names. A read inside them is no use of a value in
// this program, and no place where the program may read one back.

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// inUncalledMethod says whether n is inside a method that no code of the
// program can call (uncalledMethod).
func (a *pyAnalysis) inUncalledMethod(n *sitter.Node) bool {
	if !a.others.known {
		return false
	}
	for def := enclosingFunction(n); def != nil; def = enclosingFunction(def) {
		if enclosingClass(def) != nil && a.uncalledMethod(def) {
			return true
		}
	}
	return a.inUnusedDefinition(n)
}

// inUnusedDefinition says whether n is inside a top-level function or
// class of one of the program's modules that no code of the program names
// (programTrees.unusedDefinition): a utilities module's class another
// script uses.
func (a *pyAnalysis) inUnusedDefinition(n *sitter.Node) bool {
	p, pf := a.others.prog, a.others.self
	if p == nil || pf == nil || len(p.files) == 0 || pf == p.files[0] {
		return false
	}
	top := n
	for top.Parent() != nil && top.Parent().Kind() != "module" {
		top = top.Parent()
	}
	if top.Parent() == nil {
		return false
	}
	if a.unusedTop == nil {
		a.unusedTop = map[uint]bool{}
	}
	v, ok := a.unusedTop[top.StartByte()]
	if !ok {
		v = p.unusedDefinition(pf, top)
		a.unusedTop[top.StartByte()] = v
	}
	return v
}

// uncalledMethod says whether def, a method of a class, is one that no
// code of the program can call: not decorated (a decorator may register
// it), not a dunder (Python calls those), of a class whose bases are all
// the program's own or object (a library's base class calls its hooks:
// forward, training_step, on_epoch_end), and whose name appears nowhere in
// the program's code outside its own def — not as an attribute, not as
// the literal of a lookup (getattr(m, "name")) — and no code looks
// attributes up by names made at run time (getattr(m, "on_" + hook)) or
// runs text as code (eval, exec). Comments, docstrings and other text are
// not code.
func (a *pyAnalysis) uncalledMethod(def *sitter.Node) bool {
	nm := def.ChildByFieldName("name")
	cls := enclosingClass(def)
	if nm == nil || cls == nil || def.Parent() == nil || def.Parent().Kind() == "decorated_definition" {
		return false
	}
	name := a.text(nm)
	if strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__") || !a.ownBases(cls) {
		return false
	}
	if a.uncalled == nil {
		a.uncalled = map[uint]bool{}
	}
	if v, ok := a.uncalled[def.StartByte()]; ok {
		return v
	}
	owner := methodOwner{file: a.others.self, cls: cls}
	named := a.namesInCode(a.root, name, def, owner)
	for _, f := range a.others.files {
		if named {
			break
		}
		named = a.analysisOf(f).namesInCode(f.root, name, def, owner)
	}
	a.uncalled[def.StartByte()] = !named
	return !named
}

// namesInCode says whether code under n, outside skip (the method itself: its own recursion calls it from nowhere), names name: an
// identifier, or a string that holds it as a word (getattr(m, "name"),
// a registry's key). Comments and docstrings are not code.
func (a *pyAnalysis) namesInCode(n *sitter.Node, name string, skip *sitter.Node, owner methodOwner) bool {
	found := false
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		if found || sameNode(n, skip) || n.Kind() == "comment" || isDocstring(n) || sameName(a, n, name) {
			return
		}
		if !a.spend(1) {
			found = true // the query's budget is spent: it may be called
			return
		}
		switch n.Kind() {
		case "identifier":
			found = a.text(n) == name
			return
		case "call":
			f, _ := a.callName(n.ChildByFieldName("function"))
			index, lookup := dynamicLookups[f]
			switch {
			case f == "eval" || f == "exec":
				found = true // code made of text may call anything
				return
			case lookup:
				// getattr(obj, "on_" + hook): a method named at run time may be
				// any; getattr(obj, "name") names it
				if lit, ok := a.lookupName(n, index); !ok || lit == name {
					found = true
					return
				}
			}
		case "string":
			return // text is no code: only a lookup's literal names an attribute
		case "keyword_argument":
			if v := n.ChildByFieldName("value"); v != nil {
				walk(v) // its name is a parameter's, not a reference
			}
			return
		case "attribute":
			if owner.file != nil && a.others.prog != nil && a.others.self != nil &&
				a.others.prog.otherClassRef(a.others.self, n, name, owner.file, owner.cls) {
				return // `self.name` of another class that defines it (pyclassref.go)
			}
		}
		for i := uint(0); i < n.NamedChildCount(); i++ {
			walk(n.NamedChild(i))
		}
	}
	walk(n)
	return found
}

// methodOwner is the class of a method asked about, and its file.
type methodOwner struct {
	file *parsedFile
	cls  *sitter.Node
}

// sameName says whether n defines a method of the name in a class that
// only the program's code calls into (undecorated, its bases the
// program's own): a method of another class named alike (torchvision's
// MetricLogger's synchronize_between_processes calls its meters') calls
// the name only when it runs itself, and it runs only when called by a
// name met elsewhere.
func sameName(a *pyAnalysis, n *sitter.Node, name string) bool {
	nm := n.ChildByFieldName("name")
	if n.Kind() != "function_definition" || nm == nil || a.text(nm) != name {
		return false
	}
	cls := enclosingClass(n)
	return cls != nil && n.Parent() != nil && (n.Parent().Kind() != "decorated_definition" || a.builtinDecorated(n.Parent())) &&
		a.ownBases(cls)
}

// builtinDecorators wrap a method without registering it anywhere.
var builtinDecorators = map[string]bool{"property": true, "staticmethod": true, "classmethod": true,
	"cached_property": true, "functools.cached_property": true, "abstractmethod": true, "abc.abstractmethod": true}

// builtinDecorated says whether every decorator of d is one of Python's
// that only wraps the method (@property, @staticmethod, …): a property
// named like a method is a definition of its own, not a reference.
func (a *pyAnalysis) builtinDecorated(d *sitter.Node) bool {
	for i := uint(0); i < d.NamedChildCount(); i++ {
		c := d.NamedChild(i)
		if c.Kind() == "decorator" && !builtinDecorators[strings.TrimSpace(strings.TrimPrefix(a.text(c), "@"))] {
			return false
		}
	}
	return true
}

// dynamicLookups look an attribute up by name: the place of the name
// among their arguments.
var dynamicLookups = map[string]int{"getattr": 1, "methodcaller": 0, "attrgetter": 0, "__getattribute__": 0}

// lookupName is the attribute name a lookup call names with a plain
// string at argument index; ok is false when the name is made at run time.
func (a *pyAnalysis) lookupName(call *sitter.Node, index int) (lit string, ok bool) {
	args := call.ChildByFieldName("arguments")
	if args == nil || int(args.NamedChildCount()) <= index {
		return "", false
	}
	lit = a.constantString(args.NamedChild(uint(index)))
	return lit, lit != ""
}

// isDocstring says whether n is a statement made of one string, first in
// a module's, class's or function's body.
func isDocstring(n *sitter.Node) bool {
	if n.Kind() != "expression_statement" || n.NamedChildCount() != 1 || n.NamedChild(0).Kind() != "string" {
		return false
	}
	body := n.Parent()
	if body == nil || body.NamedChildCount() == 0 || !sameNode(body.NamedChild(0), n) {
		return false
	}
	return body.Kind() == "module" || body.Kind() == "block" && body.Parent() != nil &&
		(body.Parent().Kind() == "class_definition" || body.Parent().Kind() == "function_definition")
}

// ownBases says whether every base of a class is the program's own class
// or object (no bases at all included).
func (a *pyAnalysis) ownBases(cls *sitter.Node) bool {
	bases := cls.ChildByFieldName("superclasses")
	for i := uint(0); bases != nil && i < bases.NamedChildCount(); i++ {
		b := bases.NamedChild(i)
		if b.Kind() != "identifier" {
			return false // a module's class, a keyword (metaclass=…)
		}
		if name := a.text(b); name != "object" && (a.others.prog == nil || a.others.prog.class(name) == nil) {
			return false
		}
	}
	return true
}

// walkLive is walkAll without the methods no code of the program calls
// (pydead.go): what they would read back is never read.
func walkLive(file *pyAnalysis, n *sitter.Node, fn func(*sitter.Node)) {
	if n.Kind() == "function_definition" && enclosingClass(n) != nil && file.uncalledMethod(n) {
		return
	}
	fn(n)
	for i := uint(0); i < n.NamedChildCount(); i++ {
		walkLive(file, n.NamedChild(i), fn)
	}
}
