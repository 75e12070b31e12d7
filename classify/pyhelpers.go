package classify

// Into the program's own small functions (docs/classifier.md "After round
// 13"): a value handed to a function of the file is followed into its
// parameter, and what the function returns carries it on at the call; a
// number stored under a constant key of a dict is followed through the
// reads of that key. pyrecords.go, pytext.go and pynumbers.go hold the
// rest of that analysis.

import (
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// intoCallee follows a value v, an argument of call, into the parameter of
// the file's function that call names (calleeParam), or of the program's
// method it runs (methodParam): the flow of every use
// of the parameter there. When the function returns it (or a value
// computed from it), the flow says returned and the caller goes on from the
// call's result. ok is false when the call is not to a function of the
// file, the argument does not match a parameter the function keeps, or the
// calls nest deeper than maxCalleeDepth. With entry set, v is a dict that
// holds the value under that constant key, and so is the parameter.
func (a *pyAnalysis) intoCallee(call, v *sitter.Node, depth int, entry string) (fl flow, ok bool) {
	if !a.spend(1) {
		return flow{}, false
	}
	b, def, name, ok := a.calleeParam(call, v)
	method := false
	if !ok {
		b, def, name, ok = a.methodParam(call, v) // pymethods.go
		method = true
	}
	if !ok {
		return flow{}, false
	}
	body := def.ChildByFieldName("body")
	if body == nil {
		return flow{}, false
	}
	if entry != "" && !b.readsEntry(def, name, entry) {
		return flow{use: UseLog, neutral: true}, true // the callee reads no entry of that key: not a use of it
	}
	if a.calleeDepth >= maxCalleeDepth || depth >= maxFlowDepth {
		return flow{}, false
	}
	if b.labelFunction(def) {
		return flow{returned: true}, true // the label it returns carries the value on
	}
	b.calleeDepth++
	defer func() { b.calleeDepth-- }()
	if method {
		b.methodDepth++
		defer func() { b.methodDepth-- }()
	}
	fl = b.taintIn(def, name, false, depth, entry)
	if b != a {
		fl.lines = nil // lines of another file: not this one's to show
	}
	if fl.neutral && fl.use == UseLog && entry == "" {
		return flow{}, true // the parameter only cycles back: nothing seen
	}
	return fl, true
}

// readsEntry says whether the function def reads what its parameter name
// (a dict) holds under the constant key entry (entryRead, over the text
// only), so that it answers before any following of the uses.
func (a *pyAnalysis) readsEntry(def *sitter.Node, name, entry string) bool {
	reads := false
	a.uses(def, name, func(n *sitter.Node) {
		if !reads {
			_, reads = a.entryRead(n, entry)
		}
	})
	return reads
}

// storedByKey follows a value stored under a constant key of a dict held
// in a variable (`state["best"] = v`, `stats["n"] += v`), or put into the
// container held there (`state["hist"].append(v)`: target is then that
// entry), through the reads of that key in the scope that binds the
// variable: a read of another constant key is not a use of it, any use of
// the whole dict is; of a dict the function takes as a parameter, its
// callers' reads too (paramEntryFlow). ok is false for any other store, or
// when those reads decide nothing (the container analysis then answers as
// before).
func (a *pyAnalysis) storedByKey(target *sitter.Node, aug bool, depth int) (flow, bool) {
	if target.Kind() != "subscript" {
		return flow{}, false
	}
	dict, key := target.ChildByFieldName("value"), a.constantString(target.ChildByFieldName("subscript"))
	if dict == nil || dict.Kind() != "identifier" || key == "" {
		return flow{}, false
	}
	name := a.text(dict)
	scope := a.definingScope(dict, name)
	fl, used := a.taintInUsed(scope, name, aug, depth, key)
	if callers, ok := a.paramEntryFlow(scope, name, key, depth); ok { // a dict the function was handed
		if used {
			callers = merge(fl, callers)
		}
		fl = callers
	}
	if fl.use == UseNone && !fl.returned {
		return flow{}, false
	}
	return fl, true
}

// calleeParam matches an argument of a call by name to the parameter of
// the program's top-level function the call runs (programFunction: the
// file's own, or one imported by name from another of the program's
// modules): a positional argument by its place, a keyword argument by its
// name. It returns the analysis of the function's file, the function and
// the parameter's name; ok is false for any other call, a splat argument
// (or a positional one after it), a parameter not found, or one the
// function assigns.
func (a *pyAnalysis) calleeParam(call, arg *sitter.Node) (b *pyAnalysis, def *sitter.Node, name string, ok bool) {
	fn := call.ChildByFieldName("function")
	if fn == nil || arg.Parent() == nil || arg.Parent().Kind() != "argument_list" {
		return nil, nil, "", false
	}
	switch fn.Kind() {
	case "identifier":
		b, def = a.programFunction(a.text(fn))
	case "attribute":
		b, def = a.moduleAttributeFunction(fn) // `rl.kl_exceeded(stats)`, rl a module of the program
	}
	if def == nil {
		return nil, nil, "", false
	}
	kw, pos, ok := a.argSlot(arg)
	if !ok {
		return nil, nil, "", false
	}
	name = b.paramOf(def, kw, pos, 0)
	if name == "" || b.bindsOther(def, name) {
		return nil, nil, "", false
	}
	return b, def, name, true
}

// paramFor is the name of def's parameter (def in this file) that the
// argument arg of a call goes to (paramOf).
func (a *pyAnalysis) paramFor(def, arg *sitter.Node, skip int) string {
	kw, pos, ok := a.argSlot(arg)
	if !ok {
		return ""
	}
	return a.paramOf(def, kw, pos, skip)
}

// argSlot says where an argument of a call stands: its keyword, or its
// place among the positional arguments; ok is false for a splat argument
// (or a positional one after it), or a node that is no argument.
func (a *pyAnalysis) argSlot(arg *sitter.Node) (kw string, pos int, ok bool) {
	args := arg.Parent()
	if args == nil || args.Kind() != "argument_list" {
		return "", 0, false
	}
	if arg.Kind() == "keyword_argument" {
		name := arg.ChildByFieldName("name")
		if name == nil {
			return "", 0, false
		}
		return a.text(name), -1, true
	}
	pos = -1
	for i := uint(0); i < args.NamedChildCount(); i++ {
		c := args.NamedChild(i)
		if c.Kind() == "list_splat" || c.Kind() == "dictionary_splat" {
			return "", 0, false // the places after it are not known
		}
		if c.Kind() == "keyword_argument" {
			continue
		}
		pos++
		if sameNode(c, arg) {
			return "", pos, true
		}
	}
	return "", 0, false
}

// paramOf is the name of the parameter of def (in this file) that takes
// the argument of keyword kw, or else of place pos, the first skip
// parameters (a method's self) taking none; "" when there is none.
func (a *pyAnalysis) paramOf(def *sitter.Node, kw string, pos, skip int) string {
	params := def.ChildByFieldName("parameters")
	if params == nil {
		return ""
	}
	name := ""
	a.eachParam(params, func(place int, p string) {
		switch {
		case kw != "" && p == kw && (place < 0 || place >= skip):
			name = p
		case kw == "" && place >= 0 && place == pos+skip:
			name = p
		}
	})
	return name
}

// eachParam calls fn with the place and name of each parameter that takes
// a positional argument (place -1 for a keyword-only one), up to a splat.
func (a *pyAnalysis) eachParam(params *sitter.Node, fn func(place int, name string)) {
	a.eachParamNode(params, func(place int, name string, _ *sitter.Node) { fn(place, name) })
}

// eachParamNode is eachParam with each parameter's default (nil for none).
func (a *pyAnalysis) eachParamNode(params *sitter.Node, fn func(place int, name string, dflt *sitter.Node)) {
	place := 0
	for i := uint(0); i < params.NamedChildCount(); i++ {
		p := params.NamedChild(i)
		var id, dflt *sitter.Node
		switch p.Kind() {
		case "identifier":
			id = p
		case "default_parameter", "typed_default_parameter":
			id, dflt = p.ChildByFieldName("name"), p.ChildByFieldName("value")
		case "typed_parameter":
			if p.NamedChildCount() > 0 && p.NamedChild(0).Kind() == "identifier" {
				id = p.NamedChild(0)
			}
		case "keyword_separator", "list_splat_pattern":
			place = -1 << 30 // keyword-only from here on
			continue
		default: // positional_separator, **kwargs
			continue
		}
		if id == nil {
			continue
		}
		fn(max(place, -1), a.text(id), dflt)
		place++
	}
}

// isLoad says whether an identifier reads its variable.
func isLoad(n *sitter.Node) bool {
	p := n.Parent()
	if p == nil {
		return false
	}
	field := ""
	for i := uint(0); i < p.ChildCount(); i++ {
		if sameNode(p.Child(i), n) {
			field = p.FieldNameForChild(uint32(i))
			break
		}
	}
	switch p.Kind() {
	case "assignment", "augmented_assignment", "for_statement", "for_in_clause":
		return field != "left"
	case "attribute":
		return field != "attribute"
	case "keyword_argument", "named_expression", "function_definition", "class_definition", "default_parameter", "typed_parameter", "typed_default_parameter":
		return field != "name" && p.Kind() != "typed_parameter"
	case "parameters", "lambda_parameters", "pattern_list", "tuple_pattern", "list_pattern", "global_statement", "nonlocal_statement",
		"dotted_name", "aliased_import", "import_statement", "import_from_statement", "as_pattern_target":
		return false
	}
	return true
}

// enclosingScope is the function (or lambda, or module) around n.
func enclosingScope(n *sitter.Node) *sitter.Node {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Kind() == "function_definition" || p.Parent() == nil {
			return p
		}
	}
	return n
}

func sameNode(a, b *sitter.Node) bool {
	return a != nil && b != nil && a.Id() == b.Id()
}
