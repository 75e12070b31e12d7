package classify

// What a name of the program refers to, for the type questions of
// leangpu.go: a class itself rather than an instance (`Summary.NONE`), or
// a parameter that only shares its name with a function of the program
// (`def bar(step, total)` beside the script's `def step(i)`).

import sitter "github.com/tree-sitter/go-tree-sitter"

// classObject returns the program's class that obj names itself (not an
// instance of it): a class the file defines at its top and binds nothing
// else to, or one it imports from one of the program's modules.
func (g *gpuTyper) classObject(pf *parsedFile, obj *sitter.Node) *classDef {
	if obj == nil || obj.Kind() != "identifier" {
		return nil
	}
	name := pf.text(obj)
	cls := g.prog.class(name)
	if cls == nil {
		return nil
	}
	if bindingScope(pf, obj, name) != nil || paramOf(pf, obj, name) != nil {
		return nil // a variable of that name
	}
	if cls.file == pf && cls.node.Parent() != nil && cls.node.Parent().Kind() == "module" {
		return cls
	}
	if from, ok := g.importedFrom(pf, name); ok && from == cls.file {
		return cls
	}
	return nil
}

// classAttrMaybeGPU answers for an attribute of a class object: what its
// body assigns to the name (`NONE = 0`); a method is no tensor; anything
// else (inherited, set from outside) may be.
func (g *gpuTyper) classAttrMaybeGPU(cls *classDef, attr string) bool {
	if cls.method(attr) != nil {
		return false
	}
	body := cls.node.ChildByFieldName("body")
	bound, gpu := false, false
	for i := uint(0); body != nil && i < body.NamedChildCount(); i++ {
		st := body.NamedChild(i)
		if st.Kind() != "expression_statement" || st.NamedChildCount() != 1 || st.NamedChild(0).Kind() != "assignment" {
			continue
		}
		as := st.NamedChild(0)
		if left := as.ChildByFieldName("left"); left != nil && left.Kind() == "identifier" && cls.file.text(left) == attr {
			bound = true
			gpu = gpu || g.maybeGPU(cls.file, as.ChildByFieldName("right"))
		}
	}
	return !bound || gpu
}

// otherVariable says whether the identifier n, named name, is a
// parameter of a function no call of which hands it an identifier of that
// name (`def progress_line(step, total)` called as `progress_line(i, n)`):
// another variable than the program's function `step`, whatever it holds.
func (g *gpuTyper) otherVariable(pf *parsedFile, n *sitter.Node, name string) bool {
	fn := paramOf(pf, n, name)
	if fn == nil || fn.ChildByFieldName("name") == nil {
		return false
	}
	index, offset := paramIndex(pf, fn, name), 0
	if enclosingClass(fn) != nil {
		offset = 1 // self
	}
	if index < offset {
		return false
	}
	fname := pf.text(fn.ChildByFieldName("name"))
	for _, ref := range g.identifiers(fname) {
		p := ref.node.Parent()
		var call *sitter.Node
		switch {
		case p != nil && sameNode(p.ChildByFieldName("name"), ref.node) && (p.Kind() == "function_definition" || p.Kind() == "class_definition"),
			p != nil && (p.Kind() == "import_from_statement" || p.Kind() == "dotted_name" || p.Kind() == "aliased_import"):
			continue // its definition, an import of it
		case p != nil && p.Kind() == "call" && sameNode(p.ChildByFieldName("function"), ref.node):
			call = p
		case p != nil && p.Kind() == "attribute" && sameNode(p.ChildByFieldName("attribute"), ref.node) &&
			p.Parent() != nil && p.Parent().Kind() == "call" && sameNode(p.Parent().ChildByFieldName("function"), p):
			call = p.Parent()
		default:
			return false // handed on as a value: its calls are not all seen
		}
		arg, ok := argumentFor(ref.file, call, index-offset, name)
		if !ok || arg != nil && arg.Kind() == "identifier" && ref.file.text(arg) == name {
			return false
		}
	}
	return true
}

// paramIndex is the place of the parameter named name in fn's parameter
// list; -1 when it is none of them, or a splat.
func paramIndex(pf *parsedFile, fn *sitter.Node, name string) int {
	params := fn.ChildByFieldName("parameters")
	for i := uint(0); params != nil && i < params.NamedChildCount(); i++ {
		p := params.NamedChild(i)
		if !mentionsName(pf, p, name) {
			continue
		}
		switch p.Kind() {
		case "identifier", "typed_parameter", "default_parameter", "typed_default_parameter":
			return int(i)
		}
		return -1
	}
	return -1
}

// builtinAlias says whether fn is a variable every binding of which is
// one of the builtins set names, or a conditional expression picking
// between them (`pick = min if mode == "min" else max`).
func (g *gpuTyper) builtinAlias(pf *parsedFile, fn *sitter.Node, set map[string]bool) bool {
	if fn == nil || fn.Kind() != "identifier" {
		return false
	}
	scope := bindingScope(pf, fn, pf.text(fn))
	if scope == nil {
		return false
	}
	var builtin func(v *sitter.Node) bool
	builtin = func(v *sitter.Node) bool {
		switch {
		case v == nil:
			return false
		case v.Kind() == "identifier":
			return set[pf.text(v)] && bindingScope(pf, v, pf.text(v)) == nil && paramOf(pf, v, pf.text(v)) == nil
		case v.Kind() == "conditional_expression" && v.NamedChildCount() == 3:
			return builtin(v.NamedChild(0)) && builtin(v.NamedChild(2))
		}
		return false
	}
	all, seen := true, false
	g.bindings(pf, scope, pf.text(fn), func(v *sitter.Node, loop bool) {
		seen = true
		all = all && !loop && builtin(v)
	})
	return seen && all
}
