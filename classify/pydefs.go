package classify

// Which of the program's definitions a name used in one of its files
// names: the file's own module-level class or function, or one imported
// by name (`from _utils import log_row`) or through a module imported
// whole (`rl.kl_exceeded`) from another of the program's modules.

import (
	"path"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// programClass is the class that name, used in this file, names: one the
// file defines at module level, or one it imports by name from one of the
// program's modules; the program must have one class of that name. It
// returns the analysis of the class's file.
func (a *pyAnalysis) programClass(name string) (*pyAnalysis, *sitter.Node) {
	if own := a.moduleClass(name); own != nil {
		if a.others.prog != nil && a.others.prog.class(name) == nil {
			return nil, nil // another file of the program has a class of that name
		}
		return a, own
	}
	return a.importedDefinition(name, "class_definition", func(p *programTrees, orig string) (*parsedFile, *sitter.Node) {
		if c := p.class(orig); c != nil {
			return c.file, c.node
		}
		return nil, nil
	})
}

// importedDefinition is the definition of the kind that name, imported by
// name into this file from one of the program's modules, is: lookup gives
// the program's one definition of the original name, which must stand at
// the top level of that module (not a method or a nested one). It returns
// the analysis of the definition's file.
func (a *pyAnalysis) importedDefinition(name, kind string, lookup func(*programTrees, string) (*parsedFile, *sitter.Node)) (*pyAnalysis, *sitter.Node) {
	self, prog := a.others.self, a.others.prog
	if self == nil || prog == nil {
		return nil, nil
	}
	imported, ok := self.imports[name]
	if !ok {
		return nil, nil
	}
	mod, orig := path.Split(strings.ReplaceAll(imported, ".", "/"))
	if mod == "" {
		return nil, nil
	}
	return a.definitionIn(strings.TrimSuffix(mod, "/"), orig, kind, lookup)
}

// definitionIn is the program's one definition of the kind named name
// (lookup finds it) when it stands at the top level of the module file
// module (`pkg/mod`), with the analysis of that file; nil otherwise.
func (a *pyAnalysis) definitionIn(module, name, kind string, lookup func(*programTrees, string) (*parsedFile, *sitter.Node)) (*pyAnalysis, *sitter.Node) {
	file, node := lookup(a.others.prog, name)
	if node == nil || !isModuleFile(file.file, module+".py") {
		return nil, nil
	}
	b := a.analysisOf(file)
	if own := b.moduleDefinition(kind, name); own == nil || !sameNode(own, node) {
		return nil, nil // a method or a nested definition: not the module's name
	}
	return b, node
}

// programFunctionNamed finds the program's one function of a name.
func programFunctionNamed(p *programTrees, name string) (*parsedFile, *sitter.Node) {
	if d := p.function(name); d != nil {
		return d.file, d.node
	}
	return nil, nil
}

// programFunction is the top-level function that name, called in this
// file, runs: one the file defines, or one it imports by name from one of
// the program's modules (the program must define one function of that
// name, at that module's top level). It returns the analysis of the
// function's file.
func (a *pyAnalysis) programFunction(name string) (*pyAnalysis, *sitter.Node) {
	if own := a.moduleFunction(name); own != nil {
		return a, own
	}
	if a.moduleDefinition("class_definition", name) != nil {
		return nil, nil
	}
	return a.importedDefinition(name, "function_definition", programFunctionNamed)
}

// moduleAttributeFunction is the top-level function that `mod.name`
// names when mod is one of the program's modules imported whole (`import
// _utils as u`), with the analysis of its file; nil otherwise.
func (a *pyAnalysis) moduleAttributeFunction(fn *sitter.Node) (*pyAnalysis, *sitter.Node) {
	obj, attr := fn.ChildByFieldName("object"), fn.ChildByFieldName("attribute")
	self, prog := a.others.self, a.others.prog
	if obj == nil || attr == nil || obj.Kind() != "identifier" || self == nil || prog == nil {
		return nil, nil
	}
	module, ok := self.imports[a.text(obj)]
	if !ok || strings.Contains(module, ".") || !prog.isLocal(module) || a.definingScope(obj, a.text(obj)).Kind() != "module" {
		return nil, nil // not a module of the program, or a name bound again
	}
	return a.definitionIn(module, a.text(attr), "function_definition", programFunctionNamed)
}

// isModuleFile says whether file, as the program matcher recorded it, is
// the module file rel (`pkg/mod.py`).
func isModuleFile(file, rel string) bool {
	file = strings.ReplaceAll(file, `\`, "/")
	return file == rel || strings.HasSuffix(file, "/"+rel)
}
