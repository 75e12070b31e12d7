package classify

// Which class's method an attribute `self.name` names: Python looks name
// up in the class of self first, so inside a class that defines name
// itself, `self.name` is that class's method (or a subclass's override),
// not a method of the same name of an unrelated class. A helper module of
// meters often has several classes with an `update`, an `avg` or a
// `median`; without this every `self.avg` made each of them called.

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// otherClassRef says whether ref, an attribute `self.name` in file pf,
// cannot reach the method name of class cls (in clsFile; nil for a
// function that is no method): the class around ref defines name itself
// and is not cls, cls derives from no class named like it, and no class
// of the program derives from cls (a subclass of both could reach cls's
// method first).
func (p *programTrees) otherClassRef(pf *parsedFile, ref *sitter.Node, name string, clsFile *parsedFile, cls *sitter.Node) bool {
	obj, at := ref.ChildByFieldName("object"), ref.ChildByFieldName("attribute")
	if obj == nil || at == nil || obj.Kind() != "identifier" || pf.text(obj) != "self" || pf.text(at) != name {
		return false
	}
	around := selfClass(ref)
	if around == nil || cls != nil && sameNode(around, cls) {
		return false
	}
	own := classDef{file: pf, node: around}
	if own.method(name) == nil {
		return false
	}
	if cls == nil {
		return true
	}
	return !p.subclassOf(clsFile, cls, pf.text(around.ChildByFieldName("name")), 0) &&
		!p.hasSubclass(clsFile.text(cls.ChildByFieldName("name")))
}

// selfClass is the class whose method's self n is under: the class
// around the innermost function around n; nil for a nested function.
func selfClass(n *sitter.Node) *sitter.Node {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Kind() == "function_definition" {
			return enclosingClass(p)
		}
	}
	return nil
}

// subclassOf says whether cls derives from a class named base, through
// the program's classes.
func (p *programTrees) subclassOf(pf *parsedFile, cls *sitter.Node, base string, depth int) bool {
	bases := cls.ChildByFieldName("superclasses")
	for i := uint(0); bases != nil && i < bases.NamedChildCount(); i++ {
		name := pf.text(bases.NamedChild(i))
		if name == base || strings.HasSuffix(name, "."+base) || depth > 8 {
			return true
		}
		if c := p.class(name); c != nil && p.subclassOf(c.file, c.node, base, depth+1) {
			return true
		}
	}
	return false
}

// hasSubclass says whether a class of the program names the class name
// among its bases.
func (p *programTrees) hasSubclass(name string) bool {
	for _, cs := range p.classes {
		for _, c := range cs {
			bases := c.node.ChildByFieldName("superclasses")
			for i := uint(0); bases != nil && i < bases.NamedChildCount(); i++ {
				if b := c.file.text(bases.NamedChild(i)); b == name || strings.HasSuffix(b, "."+name) {
					return true
				}
			}
		}
	}
	return false
}
