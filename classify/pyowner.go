package classify

// Whose object a value is stored into: the program's own (its classes'
// instances, dicts it makes) or a library's, which the library reads
// (`opt.param_groups`); and which calls store into a container.

import sitter "github.com/tree-sitter/go-tree-sitter"

// programObject says whether obj is an object of the program's own
// classes: `self` in one of their methods, a name bound only to calls of
// one of them, or `self.x` stored only so.
func (a *pyAnalysis) programObject(obj *sitter.Node) bool {
	if obj == nil {
		return false
	}
	switch obj.Kind() {
	case "identifier":
		if a.text(obj) == "self" {
			return a.selfClass(obj) != nil
		}
		_, cls := a.boundClass(a.definingScope(obj, a.text(obj)), a.text(obj))
		return cls != nil
	case "attribute":
		self, field := obj.ChildByFieldName("object"), obj.ChildByFieldName("attribute")
		if self == nil || field == nil || self.Kind() != "identifier" || a.text(self) != "self" {
			return false
		}
		cls := a.selfClass(self)
		if cls == nil {
			return false
		}
		_, stored := a.storedClass(cls, a.text(field))
		return stored != nil
	}
	return false
}

// loopsOverLibrary says whether scope binds name as the target of a loop
// over an attribute of an object that is not the program's (or an entry
// of one): each item is the library's.
func (a *pyAnalysis) loopsOverLibrary(scope *sitter.Node, name string) bool {
	found := false
	walkScope(scope, func(n *sitter.Node) {
		if found || n.Kind() != "for_statement" && n.Kind() != "for_in_clause" {
			return
		}
		left, right := n.ChildByFieldName("left"), n.ChildByFieldName("right")
		if left == nil || right == nil || !a.mentions(left, name) {
			return
		}
		for right.Kind() == "subscript" || right.Kind() == "call" {
			if right.Kind() == "subscript" {
				right = right.ChildByFieldName("value")
			} else {
				right = right.ChildByFieldName("function")
			}
			if right == nil {
				return
			}
		}
		found = right.Kind() == "attribute" && !a.programObject(right.ChildByFieldName("object"))
	})
	return found
}

// libraryMethodCall says whether an attribute is the function of a call
// (`out.pow(2).mean()`) that no class of the program defines a method of
// that name for: a library's method, not a read of a value the program
// stored under that name (a number or a container is never called).
func (a *pyAnalysis) libraryMethodCall(attr *sitter.Node) bool {
	call := attr.Parent()
	if a.methods == nil || call == nil || call.Kind() != "call" || !sameNode(call.ChildByFieldName("function"), attr) {
		return false
	}
	return !a.methods[attrName(a, attr)]
}

// storesInto says whether a call stores its argument into a container
// (`other.append(hist)`): the contents then live on elsewhere.
func (a *pyAnalysis) storesInto(call *sitter.Node) bool {
	name, method := a.callName(call.ChildByFieldName("function"))
	return method && (name == "append" || name == "extend" || name == "appendleft") || a.dictUpdate(call)
}

// dictUpdate says whether a call is `d.update(…)` on a name that its
// function only ever binds to a dict (a display, dict(), defaultdict(),
// OrderedDict(), Counter()): a store into d, as `d[k] = v` is.
func (a *pyAnalysis) dictUpdate(call *sitter.Node) bool {
	fn := call.ChildByFieldName("function")
	if name, method := a.callName(fn); !method || name != "update" {
		return false
	}
	obj := fn.ChildByFieldName("object")
	if obj == nil || obj.Kind() != "identifier" {
		return false
	}
	name := a.text(obj)
	scope := a.definingScope(obj, name)
	if scope.Kind() != "function_definition" {
		return false
	}
	if params := scope.ChildByFieldName("parameters"); params != nil && a.declares(params, name) {
		return false
	}
	dicts, other := 0, 0
	a.ownStatements(scope, func(n *sitter.Node) {
		if n.Kind() != "assignment" && n.Kind() != "augmented_assignment" {
			return
		}
		left := n.ChildByFieldName("left")
		if left == nil || !a.mentions(left, name) {
			return
		}
		if right := n.ChildByFieldName("right"); n.Kind() == "assignment" && left.Kind() == "identifier" && a.makesDict(right) {
			dicts++
			return
		}
		other++
	})
	return dicts > 0 && other == 0
}

// makesDict says whether an expression makes a new dict.
func (a *pyAnalysis) makesDict(e *sitter.Node) bool {
	switch {
	case e == nil:
		return false
	case e.Kind() == "dictionary" || e.Kind() == "dictionary_comprehension":
		return true
	case e.Kind() == "call":
		name, method := a.callName(e.ChildByFieldName("function"))
		return !method && (name == "dict" || name == "defaultdict" || name == "OrderedDict" || name == "Counter")
	}
	return false
}
