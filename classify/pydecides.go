package classify

// Where the program reads what a value was stored into decides: an
// attribute of the program's objects tested or sizing something anywhere
// in the program (directly, or through a method that returns it) makes
// the value a branch or a shape (docs/classifier.md, "What a monitor's
// methods set, followed").

import sitter "github.com/tree-sitter/go-tree-sitter"

// attributeDecides says whether an attribute of the program's objects
// that a value is stored into (`self.alarm = word == "nan"`, also through
// an entry: `self.hist[k] = v`) is read somewhere in the program to decide
// a branch or a size: a read whose flow (follow) is one, or that a method
// returns (through numbers or text) to a read of that method that is one
// (`return self.bad >= self.patience` … `if stopper.step(v): break`).
// When it is, that is the use (UseBranch or UseShape); ok is false when no
// read is, or the attribute is a library object's. When in the program a
// read tests the attribute is not asked: one tested only after the loop
// is taken as deciding too (true where the truth is false: not the
// dangerous way).
func (a *pyAnalysis) attributeDecides(container *sitter.Node) (Use, bool) {
	for container != nil && container.Kind() == "subscript" {
		container = container.ChildByFieldName("value")
	}
	if container == nil || container.Kind() != "attribute" || !a.programObject(container.ChildByFieldName("object")) {
		return UseNone, false
	}
	return a.readDecides(attrName(a, container))
}

// readDecides says whether a read of an attribute or method named name, in
// any file of the program, decides a branch or a size (attributeDecides).
func (a *pyAnalysis) readDecides(name string) (Use, bool) {
	if a.deciding == nil {
		a.deciding = map[string]bool{}
	}
	if name == "" || !a.others.known || a.deciding[name] || a.onwardDepth >= maxOnwardDepth {
		return UseNone, false
	}
	a.deciding[name] = true // a read that cycles back decides nothing new
	defer delete(a.deciding, name)
	a.onwardDepth++
	defer func() { a.onwardDepth-- }()
	use, found := UseNone, false
	check := func(b *pyAnalysis) {
		walkAll(b.root, func(n *sitter.Node) {
			if found || n.Kind() != "attribute" || attrName(b, n) != name || isStoreTarget(n) || b.libraryMethodCall(n) ||
				b.inUncalledMethod(n) || b.readAfterFill(n) || !b.spend(1) {
				return
			}
			v := n
			if p := n.Parent(); p != nil && p.Kind() == "call" && sameNode(p.ChildByFieldName("function"), n) {
				v = p // a method's call: what it returns
			}
			fl := b.follow(v, 0)
			switch {
			case fl.use == UseBranch || fl.use == UseShape:
				use, found = fl.use, true
			case fl.returned && fl.use == UseNone:
				if def := enclosingFunction(n); def != nil && enclosingClass(def) != nil && def.ChildByFieldName("name") != nil {
					use, found = b.readDecides(b.text(def.ChildByFieldName("name")))
				}
			}
		})
	}
	check(a)
	for _, f := range a.others.files {
		if !found && mentionsAttribute(f.src, name) {
			check(a.analysisOf(f))
		}
	}
	return use, found
}
