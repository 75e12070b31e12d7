package classify

// Where a variable of the program is bound, and to what: the scopes and
// bindings the type questions of leangpu.go follow.

import (
	"strconv"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

func itoa(n int) string { return strconv.Itoa(n) }

// callNameOf returns a call's function name (the attribute for a method)
// and whether it is a method.
func callNameOf(pf *parsedFile, fn *sitter.Node) (string, bool) { return callNameBy(fn, pf.text) }

// walkOwn calls fn on every node of a scope that is not inside a nested
// function, class or lambda (their variables are their own).
func walkOwn(scope *sitter.Node, fn func(*sitter.Node)) {
	var walk func(n *sitter.Node, top bool)
	walk = func(n *sitter.Node, top bool) {
		if !top {
			switch n.Kind() {
			case "function_definition", "class_definition", "lambda":
				return
			}
		}
		fn(n)
		for i := uint(0); i < n.NamedChildCount(); i++ {
			walk(n.NamedChild(i), false)
		}
	}
	walk(scope, true)
}

// bindingScope returns the innermost function (or the module) around id
// that binds name; nil when name is a parameter there (its value is the
// caller's), is declared global or nonlocal, or nothing binds it.
func bindingScope(pf *parsedFile, id *sitter.Node, name string) *sitter.Node {
	for p := id.Parent(); p != nil; p = p.Parent() {
		switch p.Kind() {
		case "lambda":
			if params := p.ChildByFieldName("parameters"); params != nil && declaresParam(pf.text, params, name) {
				return nil
			}
		case "function_definition":
			if params := p.ChildByFieldName("parameters"); inside(id, params) {
				continue // a default value: evaluated where the function is defined
			} else if params != nil && declaresParam(pf.text, params, name) {
				return nil
			}
			if body := p.ChildByFieldName("body"); body != nil && scopeBinds(pf, body, name) {
				return body
			}
		case "module":
			if scopeBinds(pf, p, name) {
				return p
			}
			return nil
		}
	}
	return nil
}

// scopeBinds says whether a scope's own statements bind name; a global or
// nonlocal declaration of it counts as not bound here.
func scopeBinds(pf *parsedFile, scope *sitter.Node, name string) bool {
	ix := pf.scopeIndex(scope)
	return ix.binds[name] && !ix.declared[name]
}

// binding is one value bound to a name (nil: not known); loop marks a
// loop's iterable.
type binding struct {
	value *sitter.Node
	loop  bool
	// stored: a value stored into the name's object (`d[k] = v`,
	// `xs.append(v)`), which leaves the name bound as it was.
	stored bool
}

// scopeIndex is what one scope's own statements bind, built once.
type scopeIndex struct {
	binds    map[string]bool      // names bound here (assigned, looped over, defined)
	declared map[string]bool      // names declared global or nonlocal here
	values   map[string][]binding // the values bound to each name, stores into it included
	// sites: where each name is bound or stored into, by the first byte
	// of the binding's node (the assignment, loop, call or definition).
	sites map[string][]uint
}

// scopeIndex returns the index of a scope of the file, built on first use.
func (pf *parsedFile) scopeIndex(scope *sitter.Node) *scopeIndex {
	if ix := pf.scopes[scope.StartByte()]; ix != nil {
		return ix
	}
	ix := &scopeIndex{binds: map[string]bool{}, declared: map[string]bool{}, values: map[string][]binding{},
		sites: map[string][]uint{}}
	var at uint // the binding node being indexed
	site := func(name string) { ix.sites[name] = append(ix.sites[name], at) }
	add := func(target *sitter.Node, value *sitter.Node, loop, bound bool) {
		for _, name := range namesIn(pf, target) {
			if bound {
				ix.binds[name] = true
			}
			ix.values[name] = append(ix.values[name], binding{value, loop, !bound})
			site(name)
		}
	}
	walkOwn(scope, func(n *sitter.Node) {
		at = n.StartByte()
		switch n.Kind() {
		case "global_statement", "nonlocal_statement":
			for _, name := range namesIn(pf, n) {
				ix.declared[name] = true
			}
		case "assignment", "augmented_assignment":
			left, right := n.ChildByFieldName("left"), n.ChildByFieldName("right")
			if left != nil && left.Kind() == "subscript" {
				add(left.ChildByFieldName("value"), right, false, false) // name[k] = v
				return
			}
			add(left, right, false, true)
		case "named_expression":
			add(n.ChildByFieldName("name"), n.ChildByFieldName("value"), false, true)
		case "for_statement", "for_in_clause":
			left, iter := n.ChildByFieldName("left"), n.ChildByFieldName("right")
			if en, ok := enumerated(pf, iter); ok {
				if first := firstTarget(left); first != nil {
					ix.binds[pf.text(first)] = true // enumerate's count: a Python int
					site(pf.text(first))
					for _, name := range namesIn(pf, left) {
						if name != pf.text(first) {
							ix.binds[name] = true
							ix.values[name] = append(ix.values[name], binding{en, true, false})
							site(name)
						}
					}
					return
				}
				iter = en
			}
			add(left, iter, true, true)
		case "with_item", "as_pattern":
			if alias := n.ChildByFieldName("alias"); alias != nil {
				add(alias, n.NamedChild(0), false, n.Kind() == "as_pattern")
			}
		case "function_definition", "class_definition":
			if nm := n.ChildByFieldName("name"); nm != nil {
				ix.binds[pf.text(nm)] = true
				site(pf.text(nm))
			}
		case "call":
			fnode := n.ChildByFieldName("function")
			if m, method := callNameOf(pf, fnode); method && mutators[m] {
				if obj := fnode.ChildByFieldName("object"); obj != nil && obj.Kind() == "identifier" {
					add(obj, n.ChildByFieldName("arguments"), false, false)
				}
			}
		}
	})
	pf.scopes[scope.StartByte()] = ix
	return ix
}

// namesIn lists the plain names under n (not an attribute's or a
// subscript's inside).
func namesIn(pf *parsedFile, n *sitter.Node) []string {
	if n == nil {
		return nil
	}
	switch n.Kind() {
	case "identifier":
		return []string{pf.text(n)}
	case "attribute", "subscript":
		return nil
	}
	var out []string
	for i := uint(0); i < n.NamedChildCount(); i++ {
		out = append(out, namesIn(pf, n.NamedChild(i))...)
	}
	return out
}

// mentionsName says whether an identifier named name occurs under n as a
// plain name (not an attribute's or a subscript's inside).
func mentionsName(pf *parsedFile, n *sitter.Node, name string) bool {
	if n == nil {
		return false
	}
	switch n.Kind() {
	case "identifier":
		return pf.text(n) == name
	case "attribute", "subscript":
		return false
	}
	for i := uint(0); i < n.NamedChildCount(); i++ {
		if mentionsName(pf, n.NamedChild(i), name) {
			return true
		}
	}
	return false
}

// bindings calls fn with every value bound to name in scope: the right of
// an assignment (the whole right of a tuple unpacking), the iterable of a
// loop (loop set), a with-statement's expression, and what is appended,
// inserted or stored into it. A nil value is one not known.
func (g *gpuTyper) bindings(pf *parsedFile, scope *sitter.Node, name string, fn func(value *sitter.Node, loop bool)) {
	for _, b := range pf.scopeIndex(scope).values[name] {
		fn(b.value, b.loop)
	}
}

// mutators store their arguments into the object they are called on.
var mutators = map[string]bool{"append": true, "extend": true, "insert": true, "add": true, "update": true,
	"setdefault": true, "appendleft": true, "put": true}

// enumerated returns the iterable of enumerate(x).
func enumerated(pf *parsedFile, iter *sitter.Node) (*sitter.Node, bool) {
	if iter == nil || iter.Kind() != "call" {
		return nil, false
	}
	if name, method := callNameOf(pf, iter.ChildByFieldName("function")); method || name != "enumerate" {
		return nil, false
	}
	return iter.ChildByFieldName("arguments"), true
}

// firstTarget is the first name of a loop's targets (i of `i, x`).
func firstTarget(left *sitter.Node) *sitter.Node {
	for left != nil && left.Kind() != "identifier" {
		if left.NamedChildCount() == 0 {
			return nil
		}
		left = left.NamedChild(0)
	}
	return left
}
