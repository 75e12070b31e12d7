package classify

// The uses of a variable that holds a value read back (pyflow.go's
// assignments and parameters): every use in the scope that binds it,
// followed, all of them merged (pymerge.go); a dict that holds it under a
// constant key is followed through that entry only.

import (
	"strconv"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// taint follows every use of the variable name in the function around at.
// All must agree: a test anywhere makes it UseBranch, a size UseShape; a
// return or anything unknown leaves it UseNone, unless lenient (a value
// accumulated with +=, which only a test, size or return overrules).
//
// With entry set, name holds a dict literal with the value under that
// constant key: a read of another constant key (`d["step"]`) is not a use
// of the value, and a read of its own (`d["loss"]`) is followed as the
// value; any other use of the dict is the value's.
func (a *pyAnalysis) taint(at *sitter.Node, name string, lenient bool, depth int, entry string) flow {
	return a.taintIn(enclosingScope(at), name, lenient, depth, entry)
}

// following says whether the uses of the variable name in the function
// around at are being followed (taint) by this query.
func (a *pyAnalysis) following(at *sitter.Node, name string) bool {
	return a.tainted[taintKey(enclosingScope(at), name, "")]
}

// taintKey names the following of name in scope: per scope and entry, a
// function's name is not its caller's.
func taintKey(scope *sitter.Node, name, entry string) string {
	key := name + "[" + entry + "]"
	if scope != nil {
		key = strconv.Itoa(int(scope.StartByte())) + ":" + key
	}
	return key
}

// taintIn is taint over the uses of name in scope.
func (a *pyAnalysis) taintIn(scope *sitter.Node, name string, lenient bool, depth int, entry string) flow {
	fl, _ := a.taintInUsed(scope, name, lenient, depth, entry)
	return fl
}

// taintInUsed is taintIn, and whether scope reads the variable (the entry)
// at all.
func (a *pyAnalysis) taintInUsed(scope *sitter.Node, name string, lenient bool, depth int, entry string) (fl flow, used bool) {
	key := taintKey(scope, name, entry)
	if a.tainted[key] {
		return flow{use: UseLog, neutral: true}, true
	}
	if depth >= maxFlowDepth {
		return flow{}, true
	}
	a.tainted[key] = true
	defer delete(a.tainted, key)
	var out flow
	first := true
	a.uses(scope, name, func(n *sitter.Node) {
		use, reads := a.entryRead(n, entry)
		if !reads {
			return
		}
		whole := ""
		if sameNode(use, n) {
			whole = entry // the dict itself, the value still in its entry
		}
		fl := a.followFrom(use, depth+1, whole)
		if lenient && fl.use == UseNone && !fl.returned && !fl.open {
			fl = flow{use: UseLog, neutral: true}
		}
		if first {
			out, first = fl, false
			return
		}
		out = merge(out, fl)
	})
	if first { // never used
		if lenient {
			return flow{use: UseLog}, false
		}
		return flow{}, false
	}
	if lenient && out.neutral && out.use == UseLog {
		out.neutral = false // the accumulation itself is the use
	}
	return out, true
}

// uses calls fn with every identifier in scope named name that reads it
// (not the target of an assignment, a keyword's name or an attribute's).
func (a *pyAnalysis) uses(scope *sitter.Node, name string, fn func(*sitter.Node)) {
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		if n.Kind() == "identifier" {
			if a.text(n) == name && isLoad(n) {
				fn(n)
			}
			return
		}
		for i := uint(0); i < n.NamedChildCount(); i++ {
			walk(n.NamedChild(i))
		}
	}
	walk(scope)
}

// entryRead says whether n, a use of a dict's name, reads what the dict
// holds under the constant key entry ("" for the dict itself, whatever it
// holds), and gives the node whose flow carries it on: the subscript
// `d["entry"]` read back out, or n itself for a use of the whole dict (a
// key computed may be entry). A read of, or a store into, another
// constant key, and a store into the entry or into what it holds, are not.
func (a *pyAnalysis) entryRead(n *sitter.Node, entry string) (*sitter.Node, bool) {
	sub := n.Parent()
	if entry == "" || sub == nil || sub.Kind() != "subscript" || !sameNode(sub.ChildByFieldName("value"), n) {
		return n, true
	}
	switch k := a.constantString(sub.ChildByFieldName("subscript")); {
	case k != "" && k != entry:
		return nil, false // another entry of the dict
	case k == entry && (isStoreTarget(sub) || a.filledThrough(sub)):
		return nil, false // a store into the entry, or into what it holds: not a read of it
	case k == entry:
		return sub, true // the value read back out
	}
	return n, true
}
