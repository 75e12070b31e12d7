package classify

// Attributes of the program's classes, for the type questions of
// leangpu.go: an attribute may hold a tensor when a method of its class,
// or code outside it, stores one into it.

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// attrMaybeGPU says whether an attribute of the class's instances may be,
// or hold, a tensor: any value a method stores into self.attr.
func (g *gpuTyper) attrMaybeGPU(cls *classDef, attr string) bool {
	if cls.method(attr) != nil {
		return false // a bound method
	}
	return g.keyed("attr:"+cls.file.path+":"+itoa(int(cls.node.StartByte()))+":"+attr, func() bool {
		return g.storedMaybeGPU(cls, attr) || g.storedOutside(attr)
	})
}

// storedOutside says whether some store of the program into an attribute
// named attr of an object other than self (`state.best = v`, from outside
// its class) may store a tensor. Any object's attribute of that name
// counts: which object it is is not asked.
func (g *gpuTyper) storedOutside(attr string) bool {
	return g.keyed("outside:"+attr, func() bool {
		gpu := false
		g.eachOutsideStore(attr, func(f *parsedFile, v *sitter.Node) bool {
			gpu = g.maybeGPU(f, v)
			return !gpu
		})
		return gpu
	})
}

// eachOutsideStore calls fn with the value of every store of the program
// into an attribute named attr of an object other than self (an element
// of what is unpacked, for `a.x, a.y = pair`), until fn returns false.
func (g *gpuTyper) eachOutsideStore(attr string, fn func(*parsedFile, *sitter.Node) bool) {
	more := true
	for _, f := range g.prog.files {
		if !more || !mentionsAttribute(f.src, attr) {
			continue
		}
		walkAll(f.root, func(n *sitter.Node) {
			if !more || n.Kind() != "attribute" || n.ChildByFieldName("attribute") == nil || f.text(n.ChildByFieldName("attribute")) != attr {
				return
			}
			if obj := n.ChildByFieldName("object"); obj == nil || obj.Kind() == "identifier" && f.text(obj) == "self" {
				return // the class's own stores: storedMaybeGPU
			}
			v, stored := storedValue(n)
			if !stored {
				return
			}
			if v == nil {
				v = n.Parent().Parent().ChildByFieldName("right") // unpacked: an element of it
			}
			more = fn(f, v)
		})
	}
}

// storedMaybeGPU says whether a method of the class stores into self.attr
// a value that may be, or hold, a tensor.
func (g *gpuTyper) storedMaybeGPU(cls *classDef, attr string) bool {
	pf, self := cls.file, "self."+attr
	gpu := false
	walkAll(cls.node, func(n *sitter.Node) {
		if gpu {
			return
		}
		switch n.Kind() {
		case "assignment", "augmented_assignment":
			left := n.ChildByFieldName("left")
			if left != nil && left.Kind() == "subscript" {
				left = left.ChildByFieldName("value")
			}
			if left != nil && pf.text(left) == self {
				gpu = g.maybeGPU(pf, n.ChildByFieldName("right"))
			}
			if left != nil && (left.Kind() == "pattern_list" || left.Kind() == "tuple_pattern") {
				for i := uint(0); !gpu && i < left.NamedChildCount(); i++ {
					if t := left.NamedChild(i); pf.text(t) == self {
						v, _ := storedValue(t) // `self.a, self.b = a, b`
						if v == nil {
							v = n.ChildByFieldName("right") // an element of what is unpacked
						}
						gpu = g.maybeGPU(pf, v)
					}
				}
			}
		case "call":
			fn := n.ChildByFieldName("function")
			if m, method := callNameOf(pf, fn); method && (mutators[m] || m == "setdefault") &&
				strings.HasPrefix(pf.text(fn.ChildByFieldName("object")), self) {
				gpu = g.maybeGPU(pf, n.ChildByFieldName("arguments"))
			}
		}
	})
	return gpu
}
