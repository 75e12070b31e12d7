package classify

// Mappings: a subscript of a dict reads nothing back whatever its key (a
// tensor key hashes by identity), so `self.meters[k]` or `rec[key]`, with
// a key that comes from values that may hold tensors, is no place where
// the program may read one back (leanplaces.go).

import (
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// dictMakers make mappings (builtins, or collections' when imported).
var dictMakers = map[string]bool{"dict": true, "defaultdict": true, "OrderedDict": true, "Counter": true}

// maxDictDepth bounds how far isDict follows names.
const maxDictDepth = 4

// isDict says whether n is a mapping: a dict display or comprehension, a
// call of dict/defaultdict/OrderedDict/Counter, torch's state_dict() (where
// no class of the program defines one), a **kwargs parameter, a name every
// binding of which is one (or None), or self.attr every store of which is
// (and no code stores into an attribute of that name of another object).
func (g *gpuTyper) isDict(pf *parsedFile, n *sitter.Node, depth int) bool {
	if n == nil || depth > maxDictDepth {
		return false
	}
	switch n.Kind() {
	case "dictionary", "dictionary_comprehension":
		return true
	case "parenthesized_expression":
		return n.NamedChildCount() == 1 && g.isDict(pf, n.NamedChild(0), depth)
	case "call":
		fn := n.ChildByFieldName("function")
		name, method := callNameOf(pf, fn)
		switch {
		case !method && g.prog.function(name) != nil:
			return g.returnsDict(*g.prog.function(name), depth)
		case !method:
			return dictMakers[name] && (g.builtinName(pf, fn) || pf.imports[name] == "collections."+name)
		case dictMakers[name]:
			obj := fn.ChildByFieldName("object")
			return obj.Kind() == "identifier" && pf.imports[pf.text(obj)] == "collections"
		case name == "state_dict":
			return !g.prog.methods["state_dict"]
		}
	case "identifier":
		return g.dictName(pf, n, depth)
	case "attribute":
		return g.dictAttr(pf, n, depth)
	}
	return false
}

// dictName answers isDict for a variable.
func (g *gpuTyper) dictName(pf *parsedFile, id *sitter.Node, depth int) bool {
	name := pf.text(id)
	scope := bindingScope(pf, id, name)
	if scope == nil {
		def := paramOf(pf, id, name)
		return def != nil && (kwargsParam(pf, def, name) || g.passedDicts(pf, def, name, depth))
	}
	seen := false
	for _, b := range pf.scopeIndex(scope).values[name] {
		switch {
		case b.stored:
		case b.loop || b.value == nil:
			return false
		case b.value.Kind() == "none" || g.isDict(pf, b.value, depth+1):
			seen = true
		default:
			return false
		}
	}
	return seen
}

// kwargsParam says whether name is def's **kwargs.
func kwargsParam(pf *parsedFile, def *sitter.Node, name string) bool {
	params := def.ChildByFieldName("parameters")
	for i := uint(0); params != nil && i < params.NamedChildCount(); i++ {
		p := params.NamedChild(i)
		if p.Kind() == "dictionary_splat_pattern" && p.NamedChildCount() == 1 && pf.text(p.NamedChild(0)) == name {
			return true
		}
	}
	return false
}

// dictAttr answers isDict for self.attr.
func (g *gpuTyper) dictAttr(pf *parsedFile, n *sitter.Node, depth int) bool {
	obj, at := n.ChildByFieldName("object"), n.ChildByFieldName("attribute")
	if obj == nil || at == nil || obj.Kind() != "identifier" || pf.text(obj) != "self" {
		return false
	}
	cls := selfClass(n)
	if cls == nil {
		return false
	}
	self := "self." + pf.text(at)
	ok, seen := true, false
	walkAll(cls, func(m *sitter.Node) {
		if !ok || m.Kind() != "attribute" || pf.text(m) != self {
			return
		}
		v, stored := storedValue(m)
		switch {
		case !stored:
			if p := m.Parent(); p != nil && p.Kind() == "augmented_assignment" && sameNode(p.ChildByFieldName("left"), m) {
				ok = false
			}
		case v == nil:
			ok = false
		case v.Kind() == "none" || g.isDict(pf, v, depth+1):
			seen = true
		default:
			ok = false
		}
	})
	return ok && seen && !g.storedOnOthers(pf.text(at))
}

// storedOnOthers says whether some code of the program stores into an
// attribute named attr of an object other than self.
func (g *gpuTyper) storedOnOthers(attr string) bool {
	found := false
	g.eachOutsideStore(attr, func(*parsedFile, *sitter.Node) bool {
		found = true
		return false
	})
	return found
}

// passedDicts says whether every call of def passes a mapping for its
// parameter name (and every call is known).
func (g *gpuTyper) passedDicts(pf *parsedFile, def *sitter.Node, name string, depth int) bool {
	params := def.ChildByFieldName("parameters")
	index := -1
	for i := uint(0); params != nil && i < params.NamedChildCount(); i++ {
		if p := params.NamedChild(i); p.Kind() == "identifier" && pf.text(p) == name {
			index = int(i)
		}
	}
	calls, known := g.callsOf(pf, def)
	if index < 0 || !known || len(calls) == 0 {
		return false
	}
	if enclosingClass(def) != nil {
		index-- // self
	}
	for _, c := range calls {
		arg, ok := argumentFor(c.file, c.node, index, name)
		if !ok || arg == nil || !g.isDict(c.file, arg, depth+1) {
			return false
		}
	}
	return true
}

// returnsDict says whether every return of a program function hands back
// a mapping.
func (g *gpuTyper) returnsDict(def programDef, depth int) bool {
	all, seen := true, false
	walkOwn(def.node, func(n *sitter.Node) {
		if n.Kind() == "return_statement" {
			seen = true
			all = all && n.NamedChildCount() == 1 && g.isDict(def.file, n.NamedChild(0), depth+1)
		}
	})
	return seen && all
}
