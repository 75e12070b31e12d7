package classify

// Calls of the program's own methods that only compute and return
// (`mon.summary()` building a text from the object's attributes) do
// nothing else: inside a test's arm or a log call's arguments they are
// as free of effects as a conversion (callFree).

import (
	"bytes"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// maxPureDepth bounds how many pure methods deep a call is followed.
const maxPureDepth = 2

// pureMethodCall says whether a call `obj.m(…)` calls a method that every
// class of the program defining one named m defines as pure (pureBody).
// A method no class of the program defines is a library's: not known.
func (a *pyAnalysis) pureMethodCall(call *sitter.Node) bool {
	name, method := a.callName(call.ChildByFieldName("function"))
	if !method || a.methods == nil || !a.methods[name] || !a.others.known || a.pureDepth >= maxPureDepth {
		return false
	}
	a.pureDepth++
	defer func() { a.pureDepth-- }()
	found, ok := 0, true
	visit := func(b *pyAnalysis) {
		walkAll(b.root, func(d *sitter.Node) {
			if !ok || d.Kind() != "function_definition" || enclosingClass(d) == nil {
				return
			}
			if nm := d.ChildByFieldName("name"); nm != nil && b.text(nm) == name {
				found++
				ok = b.pureBody(d.ChildByFieldName("body"))
			}
		})
	}
	visit(a)
	for _, f := range a.others.files {
		if ok && bytes.Contains(f.src, []byte(name)) {
			b := a.analysisOf(f)
			b.pureDepth = a.pureDepth
			visit(b)
		}
	}
	return ok && found > 0
}

// pureFunctionCall says whether a call `f(…)` calls a top-level function
// of the program (programFunction) whose body is pure (pureBody):
// `_fmt(v)` picking a format for a number.
func (a *pyAnalysis) pureFunctionCall(call *sitter.Node) bool {
	fn := call.ChildByFieldName("function")
	if fn == nil || fn.Kind() != "identifier" || a.pureDepth >= maxPureDepth {
		return false
	}
	b, def := a.programFunction(a.text(fn))
	if def == nil {
		return false
	}
	a.pureDepth++
	defer func() { a.pureDepth-- }()
	if b != a {
		b.pureDepth = a.pureDepth
	}
	return b.pureBody(def.ChildByFieldName("body"))
}

// picksReturnedValue says whether a test sits in a pure function (pureBody:
// `if norm > clip: return clip / norm` then `return 1.0`): like a
// conditional expression between values free of calls (picksPlain), it
// decides nothing but the value returned, whose use at the callers decides.
func (a *pyAnalysis) picksReturnedValue(test *sitter.Node) bool {
	def := enclosingFunction(test)
	if def == nil || a.pureDepth >= maxPureDepth {
		return false
	}
	a.pureDepth++
	defer func() { a.pureDepth-- }()
	return a.pureBody(def.ChildByFieldName("body"))
}

// pureBody says whether a function's block only computes and returns
// expressions free of calls (computesOnly).
func (a *pyAnalysis) pureBody(block *sitter.Node) bool {
	return a.computesOnly(block, func(ret *sitter.Node) bool {
		return ret.NamedChildCount() == 0 || ret.NamedChildCount() == 1 && a.callFree(ret.NamedChild(0))
	})
}

// computesOnly says whether a function's block only computes: a
// docstring, pass, assignments of local names from expressions free of
// calls (callFree, `change = (v - prev) / prev`), returns that ret
// accepts, and ifs whose tests are free of calls and whose arms are the
// same.
func (a *pyAnalysis) computesOnly(block *sitter.Node, ret func(*sitter.Node) bool) bool {
	if block == nil {
		return false
	}
	for i := uint(0); i < block.NamedChildCount(); i++ {
		s := block.NamedChild(i)
		switch s.Kind() {
		case "comment", "pass_statement":
		case "expression_statement":
			if s.NamedChildCount() != 1 {
				return false
			}
			switch e := s.NamedChild(0); e.Kind() {
			case "string": // a docstring
			case "assignment":
				left, right := e.ChildByFieldName("left"), e.ChildByFieldName("right")
				if left == nil || right == nil || left.Kind() != "identifier" || !a.callFree(right) {
					return false
				}
			default:
				return false
			}
		case "return_statement":
			if !ret(s) {
				return false
			}
		case "if_statement":
			for _, p := range a.ifParts(s) {
				if p.cond != nil && !a.callFree(p.cond) || !a.computesOnly(p.block, ret) {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// comprehensionFree says whether a comprehension only computes its result
// from the iterable read: its body, key, value, conditions and other
// iterables free of calls with effects (callFree). A condition makes the
// result's length the values' (`[v for v in x.tolist() if v > 0]`): a
// test of it (`if kept:`) is a test, and a loop over it is followed
// through its targets only where its body does nothing else.
func (a *pyAnalysis) comprehensionFree(comp, read *sitter.Node) bool {
	for i := uint(0); i < comp.NamedChildCount(); i++ {
		c := comp.NamedChild(i)
		switch c.Kind() {
		case "for_in_clause":
			if r := c.ChildByFieldName("right"); r != nil && !sameNode(r, read) && !a.callFree(r) {
				return false
			}
		default:
			if !a.callFree(c) {
				return false
			}
		}
	}
	return true
}
