package classify

// The program a capture ran, read without frames: the script of the
// captured command line (trace.ProgramHints.Command) and the modules of
// its own it imports, parsed once per analysis. The program matcher
// (leanplaces.go) lists every place of these files that can read a value
// back from the GPU; a read without frames of its own takes their verdict
// only when all of them agree (docs/classifier.md, "Reads without frames").

import (
	"path"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// maxProgramFiles bounds the files of one program (the script and the
// local modules it imports, transitively).
const maxProgramFiles = 16

// maxProgramBytes bounds the program's files together.
const maxProgramBytes = 4 << 20

// parsedFile is one file of the program, parsed.
type parsedFile struct {
	path    string // where it was read
	file    string // the path the trace recorded (the script's, or its directory's module)
	src     []byte
	sf      *sourceFile
	tree    *sitter.Tree
	root    *sitter.Node
	imports map[string]string // local name → the module it comes from ("np" → "numpy")
	// fromLocal: names imported from one of the program's own modules
	// (values or functions, not modules).
	fromLocal map[string]bool
	scopes    map[uint]*scopeIndex // by the scope's first byte (leanscope.go)
	// attrNeeded: whether a read of an attribute of each name asked about
	// may need its value here (pyelsewhere.go).
	attrNeeded map[string]bool
	// methods: the program's (programTrees.methods); prog: the program.
	methods map[string]bool
	prog    *programTrees
}

func (pf *parsedFile) text(n *sitter.Node) string { return n.Utf8Text(pf.src) }

// programDef is one function of the program.
type programDef struct {
	file *parsedFile
	node *sitter.Node
}

// programTrees is the program's files, parsed.
type programTrees struct {
	files   []*parsedFile
	defs    map[string][]programDef
	classes map[string][]classDef
	// methods: the names of the methods its classes define.
	methods map[string]bool
	// foreign names the first import that is neither the standard
	// library, torch, numpy nor one of the program's modules: its code is
	// not read, so a read may come from it.
	foreign string
	// othersOf: others' answers, by path.
	othersOf map[string]otherFiles
	// live: the modules' top-level definitions running code names (pylive.go).
	live map[string]bool
	// hostTypes answers the use analysis's questions of type (hostValue).
	hostTypes *gpuTyper
}

// typer is the program's gpuTyper for the use analysis's questions of
// type (hostTypes), made on first use.
func (p *programTrees) typer() *gpuTyper {
	if p.hostTypes == nil {
		p.hostTypes = newGPUTyper(p)
	}
	return p.hostTypes
}

// function returns the program's one function named name; nil when there
// is none or several.
func (p *programTrees) function(name string) *programDef {
	if defs := p.defs[name]; len(defs) == 1 {
		return &defs[0]
	}
	return nil
}

// close frees the parse trees.
func (p *programTrees) close() {
	for _, f := range p.files {
		f.tree.Close()
	}
}

// file is the program's file read at path; nil when it is none of them.
func (p *programTrees) file(path string) *parsedFile {
	for _, f := range p.files {
		if f.path == path {
			return f
		}
	}
	return nil
}

// others is what the program's files other than the one read at path
// say: every one of them, when the program is read whole (no import of
// code this analysis does not read).
func (p *programTrees) others(path string) otherFiles {
	if p == nil || p.foreign != "" || len(p.files) == 0 {
		return otherFiles{}
	}
	if o, ok := p.othersOf[path]; ok {
		return o
	}
	out := otherFiles{known: true, files: make([]*parsedFile, 0, len(p.files)-1), prog: p}
	for _, f := range p.files {
		if f.path != path {
			out.files = append(out.files, f)
		} else {
			out.self = f
		}
	}
	if p.othersOf == nil {
		p.othersOf = map[string]otherFiles{}
	}
	p.othersOf[path] = out
	return out
}

// scriptPath returns the Python script a captured command line runs (its
// first *.py argument after the interpreter), "" when there is none or it
// runs a module (-m).
func scriptPath(cmd []string) string {
	for i, a := range cmd {
		if i == 0 {
			continue
		}
		if a == "-m" || a == "-c" {
			return ""
		}
		if strings.HasSuffix(a, ".py") && !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// loadProgram reads and parses the script of cmd and the modules of its
// own it imports, looking for each file where the source reader looks for
// frames' files. why says what stopped it when the result is nil.
func loadProgram(src *sourceReader, cmd []string) (p *programTrees, why string) {
	script := scriptPath(cmd)
	if script == "" {
		return nil, "the captured command line names no Python script"
	}
	p = &programTrees{defs: map[string][]programDef{}, classes: map[string][]classDef{}, methods: map[string]bool{}}
	dir := path.Dir(strings.ReplaceAll(script, `\`, "/"))
	queue, seen, total := []string{script}, map[string]bool{script: true}, 0
	for len(queue) > 0 {
		file := queue[0]
		queue = queue[1:]
		sf := src.file(file, 1)
		if sf == nil && file == script {
			p.close()
			return nil, "the program's script " + shortFile(script) + " was not found (run nsyssync from its directory, or pass --source-root)"
		}
		if sf == nil {
			continue // a module of the program's directory that is not there: imported from elsewhere
		}
		pf, ok := parseProgramFile(sf, file)
		if total += len(pf.src); !ok || total > maxProgramBytes || len(p.files) >= maxProgramFiles {
			if pf != nil {
				pf.tree.Close()
			}
			p.close()
			return nil, "the program's files do not parse or are too large"
		}
		p.files = append(p.files, pf)
		for _, mod := range pf.imports {
			root := rootModule(mod)
			if root == "." {
				if p.foreign == "" {
					p.foreign = "a relative import"
				}
				continue
			}
			if gpuArrayModules[root] || root == "numpy" || stdlibModules[root] || root == "__future__" {
				continue
			}
			local := path.Join(dir, strings.ReplaceAll(root, ".", "/")+".py")
			if !seen[local] {
				seen[local] = true
				if src.file(local, 1) == nil {
					if p.foreign == "" {
						p.foreign = root
					}
					continue
				}
				queue = append(queue, local)
			}
		}
	}
	for _, f := range p.files {
		f.methods, f.prog = p.methods, p
		walkAll(f.root, func(n *sitter.Node) {
			nm := n.ChildByFieldName("name")
			switch {
			case nm == nil:
			case n.Kind() == "function_definition" && enclosingClass(n) == nil:
				p.defs[f.text(nm)] = append(p.defs[f.text(nm)], programDef{file: f, node: n})
			case n.Kind() == "function_definition":
				p.methods[f.text(nm)] = true
			case n.Kind() == "class_definition":
				p.classes[f.text(nm)] = append(p.classes[f.text(nm)], classDef{file: f, node: n})
			}
		})
		for name, mod := range f.imports {
			if p.isLocal(rootModule(mod)) && mod != rootModule(mod) {
				f.fromLocal[name] = true
			}
		}
	}
	return p, ""
}

// isLocal says whether a module is one of the program's files.
func (p *programTrees) isLocal(module string) bool {
	for _, f := range p.files {
		if strings.TrimSuffix(path.Base(f.file), ".py") == module {
			return true
		}
	}
	return false
}

// parseProgramFile parses one file and lists its imports; ok is false
// when it does not parse cleanly.
func parseProgramFile(sf *sourceFile, file string) (*parsedFile, bool) {
	src := []byte(strings.Join(sf.lines, "\n"))
	p := sitter.NewParser()
	defer p.Close()
	if err := p.SetLanguage(pyLanguage); err != nil {
		return nil, false
	}
	tree := p.Parse(src, nil)
	if tree == nil {
		return nil, false
	}
	pf := &parsedFile{path: sf.path, file: file, src: src, sf: sf, tree: tree, root: tree.RootNode(),
		imports: map[string]string{}, fromLocal: map[string]bool{}, scopes: map[uint]*scopeIndex{}}
	if pf.root.HasError() {
		return pf, false
	}
	walkAll(pf.root, func(n *sitter.Node) {
		switch n.Kind() {
		case "import_statement":
			for i := uint(0); i < n.NamedChildCount(); i++ {
				name, alias := importName(pf, n.NamedChild(i))
				if alias == "" {
					alias = rootModule(name)
					name = alias
				}
				pf.imports[alias] = name
			}
		case "import_from_statement":
			mod := n.ChildByFieldName("module_name")
			if mod == nil || mod.Kind() == "relative_import" {
				pf.imports["."] = "." // a relative import: a package's module, not read
				return
			}
			for i := uint(0); i < n.NamedChildCount(); i++ {
				c := n.NamedChild(i)
				if sameNode(c, mod) || c.Kind() == "wildcard_import" {
					continue
				}
				name, alias := importName(pf, c)
				if alias == "" {
					alias = name
				}
				pf.imports[alias] = pf.text(mod) + "." + name
			}
		}
	})
	return pf, true
}

// importName returns the dotted name and the alias of one imported name.
func importName(pf *parsedFile, n *sitter.Node) (name, alias string) {
	if n.Kind() == "aliased_import" {
		if nm := n.ChildByFieldName("name"); nm != nil {
			name = pf.text(nm)
		}
		if al := n.ChildByFieldName("alias"); al != nil {
			alias = pf.text(al)
		}
		return name, alias
	}
	return pf.text(n), ""
}

// walkAll calls fn on every named node under n, n included.
func walkAll(n *sitter.Node, fn func(*sitter.Node)) {
	fn(n)
	for i := uint(0); i < n.NamedChildCount(); i++ {
		walkAll(n.NamedChild(i), fn)
	}
}

// rootModule is a dotted module name's first part.
func rootModule(m string) string {
	if i := strings.IndexByte(m, '.'); i >= 0 {
		return m[:i]
	}
	return m
}

// stdlibModules are the modules of Python's standard library a training
// script imports; their functions read no GPU value themselves (a tensor
// handed to one is a place of its own, leanplaces.go). subprocess is not
// one: a program it starts is another program, whose reads the trace
// holds too.
var stdlibModules = map[string]bool{"os": true, "sys": true, "time": true, "math": true, "random": true, "json": true,
	"logging": true, "argparse": true, "collections": true, "itertools": true, "functools": true, "dataclasses": true,
	"typing": true, "statistics": true, "contextlib": true, "pathlib": true, "re": true, "copy": true, "pickle": true,
	"csv": true, "io": true, "datetime": true, "warnings": true, "enum": true, "abc": true, "operator": true,
	"string": true, "textwrap": true, "traceback": true, "gc": true, "signal": true, "threading": true, "queue": true,
	"heapq": true, "bisect": true, "numbers": true, "types": true, "inspect": true, "shutil": true, "tempfile": true,
	"glob": true, "struct": true, "uuid": true, "hashlib": true, "platform": true, "pprint": true,
	"timeit": true, "atexit": true, "weakref": true, "decimal": true, "fractions": true}
