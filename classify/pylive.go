package classify

// Which top-level definitions of the program's modules run: a helper
// module shared by several scripts defines functions and classes one
// script never reaches, and those reach others (`reduce_dict` calling
// `to_python`) that are dead with them. A definition is live when code
// that runs names it: the script, a module's top-level statements (they
// run at import), or a live definition's body, to a fixed point.
// Identifiers name (an attribute's name too: `utils.to_python`), and so
// do the literals of lookups (`getattr(utils, "to_python")`); `eval`,
// `exec`, `globals()` and `vars()` make every definition live. Strings
// and comments are no code.

import (
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// unusedDefinition says whether a top-level statement of one of the
// program's modules (not the script) is an undecorated function or class
// definition that no running code of the program names.
func (p *programTrees) unusedDefinition(pf *parsedFile, top *sitter.Node) bool {
	if len(p.files) == 0 || pf == p.files[0] || top.ChildByFieldName("name") == nil ||
		top.Kind() != "function_definition" && top.Kind() != "class_definition" {
		return false // a decorated one: a decorator may register it
	}
	if p.live == nil {
		p.live = p.liveDefinitions()
	}
	return !p.live[defKey(pf, top)]
}

// defKey names a definition of a file.
func defKey(pf *parsedFile, def *sitter.Node) string {
	return pf.path + ":" + itoa(int(def.StartByte()))
}

// liveDefinitions returns the keys of the modules' top-level definitions
// that running code names.
func (p *programTrees) liveDefinitions() map[string]bool {
	type candidate struct {
		file *parsedFile
		def  *sitter.Node
		name string
	}
	var candidates []candidate
	named := namedSet{names: map[string]bool{}}
	for i, f := range p.files {
		for j := uint(0); j < f.root.NamedChildCount(); j++ {
			top := f.root.NamedChild(j)
			if nm := top.ChildByFieldName("name"); i > 0 && nm != nil &&
				(top.Kind() == "function_definition" || top.Kind() == "class_definition") {
				candidates = append(candidates, candidate{f, top, f.text(nm)})
				continue
			}
			named.collect(f, top)
		}
	}
	live := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, c := range candidates {
			k := defKey(c.file, c.def)
			if live[k] || !named.all && !named.names[c.name] {
				continue
			}
			live[k], changed = true, true
			named.collect(c.file, c.def)
		}
	}
	return live
}

// namedSet is what running code names.
type namedSet struct {
	names map[string]bool
	all   bool // code made of text, or the module's globals looked up: any
}

// collect adds the names code under n names.
func (s *namedSet) collect(pf *parsedFile, n *sitter.Node) {
	switch n.Kind() {
	case "identifier":
		s.names[pf.text(n)] = true
		return
	case "string", "comment":
		return
	case "call":
		name, method := callNameOf(pf, n.ChildByFieldName("function"))
		switch {
		case !method && (name == "eval" || name == "exec" || name == "globals" || name == "vars"):
			s.all = true
		case name == "getattr":
			if args := n.ChildByFieldName("arguments"); args != nil && args.NamedChildCount() > 1 {
				if lit := literalString(pf.text, args.NamedChild(1)); lit != "" {
					s.names[lit] = true
				}
			}
		}
	}
	for i := uint(0); i < n.NamedChildCount(); i++ {
		s.collect(pf, n.NamedChild(i))
	}
}
