package classify

// An attribute outlives the file that stores it: `self.last = x.item()` in
// a module's class may be tested by the script through the object
// (`if meter.last > 3: break`). Whether the attribute's value may be
// needed is therefore read from every file of the program, not only the
// one that stores it: the script of the captured command line and the
// local modules it imports (leanprogram.go). Where those files are not
// known (no command line, a program that imports code this analysis does
// not read), an attribute's value may be needed anywhere.

import (
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// otherFiles is what a query knows of the program's other files.
type otherFiles struct {
	// known: texts holds every other file of the program; otherwise any
	// of the program's code may read an attribute.
	known bool
	texts []programText
}

// programText is one file of the program, as read.
type programText struct {
	path string
	src  []byte
}

// onlyFile is a program of one file: the one analysed.
var onlyFile = otherFiles{known: true}

// attributeReadElsewhere says whether a read of an attribute named name in
// one of the program's other files may need its value (needsContents, in
// that file), or whether those files are not known.
func (a *pyAnalysis) attributeReadElsewhere(name string) bool {
	if !a.others.known {
		return true
	}
	for _, t := range a.others.texts {
		if !mentionsAttribute(t.src, name) {
			continue
		}
		if attributeNeededIn(t.src, name) {
			return true
		}
	}
	return false
}

// attributeNeededIn parses src and says whether a read of an attribute
// named name there may need its value; true when src does not parse.
func attributeNeededIn(src []byte, name string) bool {
	p := sitter.NewParser()
	defer p.Close()
	if err := p.SetLanguage(pyLanguage); err != nil {
		return true
	}
	tree := p.Parse(src, nil)
	if tree == nil {
		return true
	}
	defer tree.Close()
	root := tree.RootNode()
	if root.HasError() {
		return true
	}
	b := &pyAnalysis{src: src, root: root, row: ^uint(0), tainted: map[string]bool{}, others: onlyFile}
	return b.attributeReadIn(name)
}

// mentionsAttribute says whether src has `.name` anywhere, a cheap test
// before a parse.
func mentionsAttribute(src []byte, name string) bool {
	for i := 0; i+1+len(name) <= len(src); i++ {
		if src[i] != '.' || string(src[i+1:i+1+len(name)]) != name {
			continue
		}
		if j := i + 1 + len(name); j == len(src) || !isIdentByte(src[j]) {
			return true
		}
	}
	return false
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
