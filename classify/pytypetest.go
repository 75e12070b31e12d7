package classify

// The type tests that narrow a variable (pynarrow.go): isinstance against
// Python's scalar types or torch.Tensor, torch.is_tensor, and whether the
// names they use are Python's own.

import (
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// typeTestProves says whether a type test (isinstance, torch.is_tensor),
// found to be truth, shows that name holds no tensor.
func (g *gpuTyper) typeTestProves(pf *parsedFile, call *sitter.Node, name string, truth bool) bool {
	fn, args := call.ChildByFieldName("function"), call.ChildByFieldName("arguments")
	if args == nil || args.NamedChildCount() == 0 {
		return false
	}
	subject := args.NamedChild(0)
	if subject.Kind() != "identifier" || pf.text(subject) != name {
		return false
	}
	fname, method := callNameOf(pf, fn)
	switch {
	case !method && fname == "isinstance" && g.builtinName(pf, fn) && args.NamedChildCount() == 2:
		types := args.NamedChild(1)
		if truth {
			return g.allTypes(pf, types, scalarType)
		}
		return !g.prog.importsCupy() && g.anyType(pf, types, tensorType)
	case method && fname == "is_tensor" && !truth:
		obj := fn.ChildByFieldName("object")
		return obj.Kind() == "identifier" && pf.imports[pf.text(obj)] == "torch" && !g.prog.importsCupy()
	}
	return false
}

// builtinName says whether the identifier n names Python's builtin: not
// bound, imported or a parameter where it is used.
func (g *gpuTyper) builtinName(pf *parsedFile, n *sitter.Node) bool {
	name := pf.text(n)
	_, imported := pf.imports[name]
	return n.Kind() == "identifier" && !imported && bindingScope(pf, n, name) == nil && paramOf(pf, n, name) == nil &&
		!topLevelDef(pf, name)
}

// allTypes says whether a type or tuple of types names only types is.
func (g *gpuTyper) allTypes(pf *parsedFile, t *sitter.Node, is func(*gpuTyper, *parsedFile, *sitter.Node) bool) bool {
	if t.Kind() == "tuple" || t.Kind() == "parenthesized_expression" {
		for i := uint(0); i < t.NamedChildCount(); i++ {
			if !g.allTypes(pf, t.NamedChild(i), is) {
				return false
			}
		}
		return t.NamedChildCount() > 0
	}
	return is(g, pf, t)
}

// anyType says whether a type or tuple of types names one that is.
func (g *gpuTyper) anyType(pf *parsedFile, t *sitter.Node, is func(*gpuTyper, *parsedFile, *sitter.Node) bool) bool {
	if t.Kind() == "tuple" || t.Kind() == "parenthesized_expression" {
		for i := uint(0); i < t.NamedChildCount(); i++ {
			if g.anyType(pf, t.NamedChild(i), is) {
				return true
			}
		}
		return false
	}
	return is(g, pf, t)
}

// Python's scalar types and the modules of scalar types.
var (
	builtinScalarTypes = map[string]bool{"int": true, "float": true, "bool": true, "str": true, "bytes": true, "complex": true}
	moduleScalarTypes  = map[string]map[string]bool{
		"numbers": {"Number": true, "Real": true, "Integral": true, "Complex": true, "Rational": true},
		"numpy": {"ndarray": true, "generic": true, "number": true, "floating": true, "integer": true, "bool_": true,
			"float32": true, "float64": true, "int32": true, "int64": true},
	}
)

// scalarType says whether t names a type of host values: Python's
// scalars, numbers' ABCs, NumPy's arrays and scalars, type(None).
func scalarType(g *gpuTyper, pf *parsedFile, t *sitter.Node) bool {
	switch t.Kind() {
	case "identifier":
		return builtinScalarTypes[pf.text(t)] && g.builtinName(pf, t)
	case "attribute":
		obj, at := t.ChildByFieldName("object"), t.ChildByFieldName("attribute")
		return obj != nil && at != nil && obj.Kind() == "identifier" && moduleScalarTypes[pf.imports[pf.text(obj)]][pf.text(at)]
	case "call":
		fn, args := t.ChildByFieldName("function"), t.ChildByFieldName("arguments")
		return fn != nil && fn.Kind() == "identifier" && pf.text(fn) == "type" && g.builtinName(pf, fn) &&
			args != nil && args.NamedChildCount() == 1 && args.NamedChild(0).Kind() == "none"
	}
	return false
}

// tensorType says whether t names torch.Tensor.
func tensorType(_ *gpuTyper, pf *parsedFile, t *sitter.Node) bool {
	switch t.Kind() {
	case "identifier":
		return pf.imports[pf.text(t)] == "torch.Tensor"
	case "attribute":
		obj, at := t.ChildByFieldName("object"), t.ChildByFieldName("attribute")
		return obj != nil && at != nil && obj.Kind() == "identifier" && pf.imports[pf.text(obj)] == "torch" && pf.text(at) == "Tensor"
	}
	return false
}

// importsCupy says whether a file of the program imports CuPy, whose
// arrays are CUDA values that are no torch.Tensor.
func (p *programTrees) importsCupy() bool {
	for _, f := range p.files {
		for _, m := range f.imports {
			if r := rootModule(m); r == "cupy" || r == "cupyx" {
				return true
			}
		}
	}
	return false
}

// typeTests are Python's builtins that answer from a value's type alone.
var typeTests = map[string]bool{"isinstance": true, "hasattr": true, "callable": true}

// typeTestOf says whether call asks one of Python's typeTests about v, its
// first argument (`isinstance(v, float)`): the host knows the answer
// without the value, so the test is no use of it. The name must be the
// builtin's: every mention of it in the file is a call.
func (a *pyAnalysis) typeTestOf(call, v *sitter.Node) bool {
	fn, args := call.ChildByFieldName("function"), call.ChildByFieldName("arguments")
	if fn == nil || fn.Kind() != "identifier" || args == nil || args.NamedChildCount() == 0 ||
		!sameNode(args.NamedChild(0), v) || !typeTests[a.text(fn)] {
		return false
	}
	name := a.text(fn)
	if builtin, ok := a.builtin[name]; ok {
		return builtin
	}
	builtin := true
	walkAll(a.root, func(n *sitter.Node) {
		if builtin && n.Kind() == "identifier" && a.text(n) == name {
			c := n.Parent()
			builtin = c != nil && c.Kind() == "call" && sameNode(c.ChildByFieldName("function"), n)
		}
	})
	if a.builtin == nil {
		a.builtin = map[string]bool{}
	}
	a.builtin[name] = builtin
	return builtin
}
