package classify

// Parameters and attributes of the program's own functions and classes,
// for the type questions of leangpu.go: a parameter may be a tensor when a
// call of its function passes one (or its callers are not all known); an
// attribute of the program's class when a method stores one in it.

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// classDef is one class of the program.
type classDef struct {
	file *parsedFile
	node *sitter.Node
}

// class returns the program's one class named name; nil when none or several.
func (p *programTrees) class(name string) *classDef {
	if cs := p.classes[name]; len(cs) == 1 {
		return &cs[0]
	}
	return nil
}

// method returns the class's method named name; nil when it has none.
func (c *classDef) method(name string) *programDef {
	body := c.node.ChildByFieldName("body")
	for i := uint(0); body != nil && i < body.NamedChildCount(); i++ {
		d := body.NamedChild(i)
		if d.Kind() == "decorated_definition" {
			d = d.ChildByFieldName("definition")
		}
		if d != nil && d.Kind() == "function_definition" {
			if nm := d.ChildByFieldName("name"); nm != nil && c.file.text(nm) == name {
				return &programDef{file: c.file, node: d}
			}
		}
	}
	return nil
}

// classOf returns the program class whose instance obj is: self inside a
// method, or a variable every binding of which is a call of that class.
func (g *gpuTyper) classOf(pf *parsedFile, obj *sitter.Node) *classDef {
	if obj == nil || obj.Kind() != "identifier" {
		return nil
	}
	name := pf.text(obj)
	if name == "self" {
		for p := obj.Parent(); p != nil; p = p.Parent() {
			if p.Kind() == "class_definition" {
				return &classDef{file: pf, node: p}
			}
		}
		return nil
	}
	scope := bindingScope(pf, obj, name)
	if scope == nil {
		return nil
	}
	var cls *classDef
	ok := true
	g.bindings(pf, scope, name, func(v *sitter.Node, loop bool) {
		if loop || v == nil || v.Kind() != "call" {
			ok = false
			return
		}
		cn, method := callNameOf(pf, v.ChildByFieldName("function"))
		c := g.prog.class(cn)
		if method || c == nil || cls != nil && !sameNode(cls.node, c.node) {
			ok = false
			return
		}
		cls = c
	})
	if !ok {
		return nil
	}
	return cls
}

// paramOf returns the function around id that has name as a parameter;
// nil when none does (or a lambda does).
func paramOf(pf *parsedFile, id *sitter.Node, name string) *sitter.Node {
	for p := id.Parent(); p != nil; p = p.Parent() {
		switch p.Kind() {
		case "lambda":
			if declaresParam(pf.text, p.ChildByFieldName("parameters"), name) {
				return nil
			}
		case "function_definition":
			if params := p.ChildByFieldName("parameters"); inside(id, params) {
				continue // a default value: evaluated where the function is defined
			} else if declaresParam(pf.text, params, name) {
				return p
			}
			if body := p.ChildByFieldName("body"); body != nil && scopeBinds(pf, body, name) {
				return nil
			}
		}
	}
	return nil
}

// paramMaybeGPU says whether a parameter may be a tensor: its default or
// an argument some call passes for it does, or not every call is known.
func (g *gpuTyper) paramMaybeGPU(pf *parsedFile, def *sitter.Node, name string) bool {
	return g.keyed("param:"+pf.path+":"+itoa(int(def.StartByte()))+":"+name, func() bool {
		return g.passedMaybeGPU(pf, def, name)
	})
}

// passedMaybeGPU answers paramMaybeGPU's question.
func (g *gpuTyper) passedMaybeGPU(pf *parsedFile, def *sitter.Node, name string) bool {
	params := def.ChildByFieldName("parameters")
	index, def0 := -1, (*sitter.Node)(nil)
	for i := uint(0); i < params.NamedChildCount(); i++ {
		p := params.NamedChild(i)
		if !mentionsName(pf, p, name) {
			continue
		}
		switch p.Kind() {
		case "identifier", "typed_parameter":
		case "default_parameter", "typed_default_parameter":
			def0 = p.ChildByFieldName("value")
		default:
			return true // *args, **kwargs
		}
		index = int(i)
	}
	if index < 0 || def0 != nil && g.maybeGPU(pf, def0) {
		return true
	}
	calls, known := g.callsOf(pf, def)
	if !known || len(calls) == 0 && def0 == nil {
		return true
	}
	offset := 0
	if enclosingClass(def) != nil && !staticMethodBy(def, pf.text) {
		offset = 1 // self
	}
	for _, c := range calls {
		arg, ok := argumentFor(c.file, c.node, index-offset, name)
		if !ok || arg != nil && g.maybeGPU(c.file, arg) {
			return true
		}
	}
	return false
}

// programCall is one call of a program function.
type programCall struct {
	file *parsedFile
	node *sitter.Node
}

// callsOf lists the calls of a program function in the program's files;
// known is false when the function is used in another way (passed as a
// value, decorated by other code), so its callers are not all known.
func (g *gpuTyper) callsOf(pf *parsedFile, def *sitter.Node) (calls []programCall, known bool) {
	fname := pf.text(def.ChildByFieldName("name"))
	cls := enclosingClass(def)
	if fname == "__init__" && cls != nil {
		fname = pf.text(cls.ChildByFieldName("name"))
	} else if strings.HasPrefix(fname, "__") || def.Parent() != nil && def.Parent().Kind() == "decorated_definition" &&
		!torchDecorated(pf, def.Parent()) && !staticMethodBy(def, pf.text) {
		return nil, false
	}
	known = true
	for _, ref := range g.identifiers(fname) {
		if !known {
			break
		}
		f, n := ref.file, ref.node
		p := n.Parent()
		switch {
		case p != nil && (p.Kind() == "function_definition" || p.Kind() == "class_definition") && sameNode(p.ChildByFieldName("name"), n):
		case p != nil && p.Kind() == "call" && sameNode(p.ChildByFieldName("function"), n):
			calls = append(calls, programCall{f, p})
		case p != nil && p.Kind() == "attribute" && g.prog.otherClassRef(f, p, fname, pf, cls):
			// `self.median` inside a class that defines median itself: its own
		case p != nil && p.Kind() == "attribute" && sameNode(p.ChildByFieldName("attribute"), n) && cls == nil &&
			(p.Parent() == nil || p.Parent().Kind() != "call" || !sameNode(p.Parent().ChildByFieldName("function"), p)):
			// an attribute of that name (`m.step`) read: not a function
			// that is no method (a store of it would name it plainly)
		case p != nil && p.Kind() == "attribute" && sameNode(p.ChildByFieldName("attribute"), n) &&
			p.Parent() != nil && p.Parent().Kind() == "call" && sameNode(p.Parent().ChildByFieldName("function"), p):
			calls = append(calls, programCall{f, p.Parent()})
		case p != nil && (p.Kind() == "import_from_statement" || p.Kind() == "dotted_name" || p.Kind() == "aliased_import" ||
			p.Kind() == "parameters" || p.Kind() == "default_parameter" || p.Kind() == "typed_parameter" ||
			p.Kind() == "keyword_argument" && sameNode(p.ChildByFieldName("name"), n)),
			g.otherVariable(f, n, fname):
			// an import, or a parameter of the same name (its calls are counted as calls through)
		default:
			// handed to one of the program's functions: its calls there
			more, ok := g.callsThrough(f, n)
			calls, known = append(calls, more...), ok
		}
	}
	return calls, known
}

// torchDecorated says whether a decorated definition's decorators are all
// torch's (no_grad, inference_mode): they call the function as written.
func torchDecorated(pf *parsedFile, d *sitter.Node) bool {
	for i := uint(0); i < d.NamedChildCount(); i++ {
		if c := d.NamedChild(i); c.Kind() == "decorator" && !strings.HasPrefix(strings.TrimPrefix(pf.text(c), "@"), "torch.") {
			return false
		}
	}
	return true
}

// enclosingClass is the class whose body defines def directly; nil otherwise.
func enclosingClass(def *sitter.Node) *sitter.Node {
	p := def.Parent()
	if p != nil && p.Kind() == "decorated_definition" {
		p = p.Parent()
	}
	if p != nil && p.Kind() == "block" && p.Parent() != nil && p.Parent().Kind() == "class_definition" {
		return p.Parent()
	}
	return nil
}

// argumentFor returns the argument a call passes for the parameter at
// index (or by name); nil when it passes none (the default holds). ok is
// false when a splat (*args, **kw) may pass it.
func argumentFor(pf *parsedFile, call *sitter.Node, index int, name string) (arg *sitter.Node, ok bool) {
	args := call.ChildByFieldName("arguments")
	if args == nil {
		return nil, false
	}
	pos := 0
	for i := uint(0); i < args.NamedChildCount(); i++ {
		a := args.NamedChild(i)
		switch a.Kind() {
		case "list_splat", "dictionary_splat":
			return nil, false
		case "keyword_argument":
			if k := a.ChildByFieldName("name"); k != nil && pf.text(k) == name {
				return a.ChildByFieldName("value"), true
			}
		default:
			if pos == index {
				return a, true
			}
			pos++
		}
	}
	return nil, true
}

// callsThrough follows a function handed as an argument to one of the
// program's functions (`measure(step)`): the calls of the parameter that
// receives it, in that function's body. ok is false for any other use.
func (g *gpuTyper) callsThrough(pf *parsedFile, id *sitter.Node) (calls []programCall, ok bool) {
	args := id.Parent()
	if args == nil || args.Kind() != "argument_list" || args.Parent() == nil {
		return nil, false
	}
	name, method := callNameOf(pf, args.Parent().ChildByFieldName("function"))
	callee := g.prog.function(name)
	if method || callee == nil {
		return nil, false
	}
	index := -1
	for i := uint(0); i < args.NamedChildCount(); i++ {
		if sameNode(args.NamedChild(i), id) {
			index = int(i)
		}
	}
	params := callee.node.ChildByFieldName("parameters")
	if index < 0 || params == nil || uint(index) >= params.NamedChildCount() {
		return nil, false
	}
	p := params.NamedChild(uint(index))
	if p.Kind() != "identifier" {
		return nil, false
	}
	pname := callee.file.text(p)
	walkAll(callee.node, func(n *sitter.Node) {
		if n.Kind() == "call" {
			if fn := n.ChildByFieldName("function"); fn != nil && fn.Kind() == "identifier" && callee.file.text(fn) == pname {
				calls = append(calls, programCall{callee.file, n})
			}
		}
	})
	return calls, len(calls) > 0
}

// identifiers returns every identifier of the program's files named name
// (an attribute's name included), from an index built on first use.
func (g *gpuTyper) identifiers(name string) []programCall {
	if g.idents == nil {
		g.idents = map[string][]programCall{}
		for _, f := range g.prog.files {
			walkAll(f.root, func(n *sitter.Node) {
				if n.Kind() == "identifier" {
					g.idents[f.text(n)] = append(g.idents[f.text(n)], programCall{f, n})
				}
			})
		}
	}
	return g.idents[name]
}
