package classify

// Records (docs/classifier.md "Records: namedtuples and dataclasses"): a
// value handed to the constructor of a namedtuple or a dataclass of the
// program (`m = StepMetrics(i, loss, norm)`) is carried on by the record,
// and a field read of a record that holds it (`m.grad_norm`) carries it on
// again. Which field holds it is not asked: every field read of the record
// counts as a use of the value (a test of any field makes it true; only
// shown fields leave it false).

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// recordCall says whether call constructs a record type of the program:
// a name bound at the top of this file or of the program's other files to
// `namedtuple(...)`/`NamedTuple(...)`, or a class deriving from NamedTuple
// or decorated with @dataclass.
func (a *pyAnalysis) recordCall(call *sitter.Node) bool {
	fn := call.ChildByFieldName("function")
	if fn == nil || fn.Kind() != "identifier" {
		return false
	}
	name := a.text(fn)
	if recordType(a.text, a.root, name) {
		return true
	}
	if !a.others.known {
		return false
	}
	for _, f := range a.others.files {
		if recordType(f.text, f.root, name) {
			return true
		}
	}
	return false
}

// isRecord says whether name is a record type one of the program's files
// defines at its top (recordCall), for the type questions of leangpu.go.
func (p *programTrees) isRecord(name string) bool {
	for _, f := range p.files {
		if recordType(f.text, f.root, name) {
			return true
		}
	}
	return false
}

// recordType says whether the module binds name at its top to a record
// type (recordCall).
func recordType(text func(*sitter.Node) string, module *sitter.Node, name string) bool {
	for i := uint(0); i < module.NamedChildCount(); i++ {
		st := module.NamedChild(i)
		switch st.Kind() {
		case "expression_statement":
			as := st.NamedChild(0)
			if as == nil || as.Kind() != "assignment" {
				continue
			}
			left, right := as.ChildByFieldName("left"), as.ChildByFieldName("right")
			if left == nil || right == nil || left.Kind() != "identifier" || text(left) != name || right.Kind() != "call" {
				continue
			}
			if f, _ := callNameBy(right.ChildByFieldName("function"), text); f == "namedtuple" || f == "NamedTuple" {
				return true
			}
		case "class_definition":
			if nm := st.ChildByFieldName("name"); nm != nil && text(nm) == name {
				bases := st.ChildByFieldName("superclasses")
				return bases != nil && strings.HasSuffix(strings.TrimSpace(text(bases)), "NamedTuple)")
			}
		case "decorated_definition":
			def := st.ChildByFieldName("definition")
			if def == nil || def.Kind() != "class_definition" || def.ChildByFieldName("name") == nil || text(def.ChildByFieldName("name")) != name {
				continue
			}
			for j := uint(0); j < st.NamedChildCount(); j++ {
				if d := st.NamedChild(j); d.Kind() == "decorator" && strings.Contains(text(d), "dataclass") {
					return true
				}
			}
		}
	}
	return false
}
