package classify

// The places of a program that can read a value back from the GPU, for
// reads that carry no frames (lean and default captures, aten ranges
// alone). Each place gets the verdict its line gives (pyUse, the same
// analysis as a frame's line), or is opaque: a read whose use the reading
// does not follow. See leanmatch.go for how they decide a read.

import (
	"fmt"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// maxPlaces bounds the places of one program; past it the program is
// opaque.
const maxPlaces = 64

// maxCallerDepth bounds how far a returned value is followed to its callers.
const maxCallerDepth = 3

// placeKind is how a place reads.
type placeKind int

const (
	placeScalar placeKind = iota // .item(), float(t), int(t), bool(t): one value
	placeCopy                    // .cpu(), .numpy(), .tolist(), .to("cpu"): data
	placeShown                   // printed, logged or formatted for display
	placeTest                    // a truth test
	placeSize                    // a size or a bound
	placeOp                      // a torch op that reads a count or a flag inside
	placeOpaque                  // a read whose use is not followed
)

// readPlace is one place of the program that can read back.
type readPlace struct {
	kind placeKind
	path string // the file it is in, as read
	line int    // 1-based
	dep  Dependency
	cat  string
	what string // what it does, for the evidence
}

// fits says whether the place can make a read of n bytes: one value is at
// most 8 bytes; copies, prints and the unknown can be any size.
func (p readPlace) fits(n int64) bool {
	switch p.kind {
	case placeScalar, placeTest, placeSize, placeOp:
		return n <= maxScalarBytes
	}
	return true
}

// readingOps are torch ops that read a count or a flag back themselves.
var readingOps = map[string]readPlace{
	"nonzero": {dep: DepTrue, cat: CatDynamicShape}, "unique": {dep: DepTrue, cat: CatDynamicShape},
	"unique_consecutive": {dep: DepTrue, cat: CatDynamicShape}, "masked_select": {dep: DepTrue, cat: CatDynamicShape},
	"repeat_interleave": {dep: DepTrue, cat: CatDynamicShape}, "argwhere": {dep: DepTrue, cat: CatDynamicShape},
	"bincount": {dep: DepTrue, cat: CatDynamicShape}, "histc": {dep: DepTrue, cat: CatDynamicShape},
	"equal": {dep: DepTrue, cat: CatControlFlow}, "allclose": {dep: DepTrue, cat: CatControlFlow},
	"GradScaler": {dep: DepTrue, cat: CatControlFlow}, "ReduceLROnPlateau": {dep: DepTrue, cat: CatControlFlow},
}

// opaqueOps read inside in ways the place does not say (an error check, a
// length moved to the host, a size taken from the data).
var opaqueOps = map[string]bool{"inverse": true, "cholesky": true, "pack_padded_sequence": true, "one_hot": true,
	"coalesce": true, "multinomial": true, "is_nonzero": true, "save": true, "tensor_split": true,
	"split_with_sizes": true, "complex": true, "memoryview": true, "bytes": true, "array": true,
	"asarray": true, "from_dlpack": true, "to_dlpack": true, "copy_": true, "tensor": true, "as_tensor": true,
	"Tensor": true, "set_": true}

// sizeTaking are calls whose arguments are sizes (factories, views).
var sizeTaking = map[string]bool{"zeros": true, "ones": true, "empty": true, "full": true, "arange": true, "randn": true,
	"rand": true, "randint": true, "linspace": true, "randperm": true, "view": true, "reshape": true, "expand": true,
	"repeat": true, "narrow": true, "new_zeros": true, "new_ones": true, "new_empty": true, "new_full": true,
	"topk": true, "kthvalue": true, "chunk": true, "range": true, "islice": true,
	// NumPy's and CuPy's random arrays of a size
	"random": true, "random_sample": true, "standard_normal": true}

// placeFinder lists one program's places.
type placeFinder struct {
	prog   *programTrees
	types  *gpuTyper
	places []readPlace
	// files: an analysis of each of the program's files, by path, for
	// the code no part of the program runs (pydead.go)
	files map[string]*pyAnalysis
}

// findPlaces lists every place of the program that can read back, but
// those in a module's top-level function or class that no code of the
// program names (unusedDefinition).
func findPlaces(p *programTrees) []readPlace {
	f := &placeFinder{prog: p, types: newGPUTyper(p), files: map[string]*pyAnalysis{}}
	for i, pf := range p.files {
		file := f.analysis(pf)
		for j := uint(0); j < pf.root.NamedChildCount(); j++ {
			top := pf.root.NamedChild(j)
			if i > 0 && p.unusedDefinition(pf, top) {
				continue
			}
			walkLive(file, top, func(n *sitter.Node) {
				if len(f.places) <= maxPlaces {
					f.visit(pf, n)
				}
			})
		}
	}
	return f.places
}

// analysis is the finder's analysis of the program's file pf, made once.
func (f *placeFinder) analysis(pf *parsedFile) *pyAnalysis {
	if a, ok := f.files[pf.path]; ok {
		return a
	}
	budget := maxQuerySteps
	a := &pyAnalysis{src: pf.src, root: pf.root, methods: pf.methods, others: f.prog.others(pf.path), budget: &budget}
	f.files[pf.path] = a
	return a
}

func (f *placeFinder) add(pf *parsedFile, n *sitter.Node, kind placeKind, dep Dependency, cat, what string) {
	line := int(n.StartPosition().Row) + 1
	f.places = append(f.places, readPlace{kind: kind, path: pf.path, line: line, dep: dep, cat: cat,
		what: fmt.Sprintf("%s:%d %s", displayFile(pf.path), line, what)})
}

func (f *placeFinder) opaque(pf *parsedFile, n *sitter.Node, what string) {
	f.add(pf, n, placeOpaque, DepUnknown, CatUnknown, what)
}

func (f *placeFinder) gpu(pf *parsedFile, n *sitter.Node) bool { return f.types.maybeGPU(pf, n) }

// visit looks at one node.
func (f *placeFinder) visit(pf *parsedFile, n *sitter.Node) {
	switch n.Kind() {
	case "call":
		f.call(pf, n)
	case "string":
		for i := uint(0); i < n.NamedChildCount(); i++ {
			if c := n.NamedChild(i); c.Kind() == "interpolation" && f.gpu(pf, c.NamedChild(0)) {
				f.formatted(pf, n, "formats a value that may be a CUDA tensor", pyRead{kind: readFormat})
				return
			}
		}
	case "if_statement", "elif_clause", "while_statement":
		f.tested(pf, n.ChildByFieldName("condition"))
	case "assert_statement", "if_clause":
		f.tested(pf, n.NamedChild(0))
	case "conditional_expression":
		f.tested(pf, n.NamedChild(1))
	case "boolean_operator":
		f.tested(pf, n.ChildByFieldName("left"))
	case "not_operator":
		f.tested(pf, n.ChildByFieldName("argument"))
	case "binary_operator":
		if left := n.ChildByFieldName("left"); left != nil && left.Kind() == "string" && f.gpu(pf, n.ChildByFieldName("right")) {
			f.formatted(pf, n, "formats a value that may be a CUDA tensor with %", pyRead{kind: readPercent})
		}
	case "subscript":
		f.subscript(pf, n)
	}
}

// tested adds the truth tests of a condition: each operand that is not a
// comparison (which reads a 1-byte bool) nor a read of its own.
func (f *placeFinder) tested(pf *parsedFile, c *sitter.Node) {
	if c == nil {
		return
	}
	switch c.Kind() {
	case "parenthesized_expression":
		f.tested(pf, c.NamedChild(0))
	case "boolean_operator":
		f.tested(pf, c.ChildByFieldName("left"))
		f.tested(pf, c.ChildByFieldName("right"))
	case "not_operator":
		f.tested(pf, c.ChildByFieldName("argument"))
	case "comparison_operator", "call":
		// a comparison reads a bool (1 byte); a call's read is its own place
		if c.Kind() == "call" && !f.gpu(pf, c) {
			return
		}
		if c.Kind() == "call" {
			f.add(pf, c, placeTest, DepTrue, CatControlFlow, "tests a value that may be a CUDA tensor")
		}
	default:
		if f.gpu(pf, c) {
			f.add(pf, c, placeTest, DepTrue, CatControlFlow, "tests a value that may be a CUDA tensor")
		}
	}
}

// subscript adds an index or a slice bound taken from a value that may be
// a tensor: a bound is a size; an index may be a mask or an int read back.
func (f *placeFinder) subscript(pf *parsedFile, n *sitter.Node) {
	if f.types.isDict(pf, n.ChildByFieldName("value"), 0) {
		return // a mapping's key reads nothing back (pydict.go)
	}
	for i := uint(0); i < n.NamedChildCount(); i++ {
		c := n.NamedChild(i)
		if sameNode(c, n.ChildByFieldName("value")) {
			continue
		}
		if c.Kind() == "slice" {
			if f.gpu(pf, c) {
				f.add(pf, c, placeSize, DepTrue, CatDynamicShape, "slices with a bound that may be a CUDA tensor")
			}
			continue
		}
		if f.gpu(pf, c) && !f.types.intArray(pf, c, 0) {
			f.opaque(pf, c, "indexes with a value that may be a CUDA tensor (a mask, or an index read back)")
		}
	}
}

// argsMaybeGPU says whether any argument of a call may be a tensor.
func (f *placeFinder) argsMaybeGPU(pf *parsedFile, args *sitter.Node) bool {
	return args != nil && f.gpu(pf, args)
}

// optionKeywords are the keyword arguments of torch's factories and views
// that never hold a size or a value: a generator or a device there is no
// read back.
var optionKeywords = map[string]bool{"device": true, "dtype": true, "layout": true, "generator": true,
	"requires_grad": true, "pin_memory": true, "memory_format": true, "out": true, "names": true}

// inputFirst are the size-taking calls whose first argument, called as
// a module's function (`torch.topk(x, k)`, `itertools.islice(it, n)`), is
// the tensor or iterable they work on, not a size; as a method the
// object is (`x.topk(k)`).
var inputFirst = map[string]bool{"topk": true, "kthvalue": true, "chunk": true, "narrow": true, "reshape": true,
	"islice": true}

// sizeArgsMaybeGPU is argsMaybeGPU without the option keywords, and
// without the input of an inputFirst call (skipInput).
func (f *placeFinder) sizeArgsMaybeGPU(pf *parsedFile, args *sitter.Node, skipInput bool) bool {
	positional := 0
	for i := uint(0); args != nil && i < args.NamedChildCount(); i++ {
		a := args.NamedChild(i)
		if a.Kind() == "keyword_argument" {
			if name := a.ChildByFieldName("name"); name != nil && (optionKeywords[pf.text(name)] || skipInput && pf.text(name) == "input") {
				continue
			}
		} else if positional++; skipInput && positional == 1 && a.Kind() != "list_splat" {
			continue // the input, not a size
		}
		if f.gpu(pf, a) {
			return true
		}
	}
	return false
}

// call adds the places of one call.
func (f *placeFinder) call(pf *parsedFile, call *sitter.Node) {
	fn, args := call.ChildByFieldName("function"), call.ChildByFieldName("arguments")
	name, method := callNameOf(pf, fn)
	if args == nil || args.Kind() != "argument_list" {
		return
	}
	nargs := args.NamedChildCount()
	var obj *sitter.Node
	if method {
		obj = fn.ChildByFieldName("object")
	}
	onGPU := method && obj != nil && f.gpu(pf, obj)
	switch {
	case method && name == "item" && nargs == 0 && onGPU:
		f.used(pf, call, placeScalar, pyRead{kind: readItem}, "reads a scalar (.item())")
	case !method && (name == "float" || name == "int" || name == "bool") && nargs == 1 && f.gpu(pf, args.NamedChild(0)):
		kind := map[string]readKind{"float": readFloat, "int": readInt, "bool": readTruth}[name]
		f.used(pf, call, placeScalar, pyRead{kind: kind}, "converts a value that may be a CUDA tensor ("+name+"())")
	case method && name == "tolist" && nargs == 0 && onGPU:
		f.used(pf, call, placeCopy, pyRead{kind: readTolist}, "copies to the host (.tolist())")
	case method && (name == "cpu" || name == "numpy") && nargs == 0 && onGPU:
		f.used(pf, call, placeCopy, pyRead{kind: readCopy}, "copies to the host (."+name+"())")
	case method && name == "get" && onGPU && !hasPositional(args):
		// CuPy's ndarray.get(stream=, out=, blocking=): dict.get always
		// takes a key
		f.used(pf, call, placeCopy, pyRead{kind: readCopy}, "copies to the host (.get())")
	case method && name == "asnumpy" && nargs >= 1 && f.types.isModule(pf, obj) && f.gpu(pf, args.NamedChild(0)):
		f.used(pf, call, placeCopy, pyRead{kind: readCopy}, "copies to the host (asnumpy())")
	case method && name == "to" && onGPU:
		f.to(pf, call, args)
	case f.displays(pf, call, name, method):
		for i := uint(0); i < nargs; i++ {
			if a := args.NamedChild(i); a.Kind() != "string" && f.gpu(pf, a) {
				f.add(pf, call, placeShown, DepFalse, CatLogging, "prints or logs a value that may be a CUDA tensor")
				return
			}
		}
	case !method && (name == "str" || name == "repr" || name == "format") && f.argsMaybeGPU(pf, args),
		method && name == "format" && obj != nil && obj.Kind() == "string" && f.argsMaybeGPU(pf, args):
		f.formatted(pf, call, "formats a value that may be a CUDA tensor ("+name+")", pyRead{kind: -1})
	case sizeTaking[name] && f.sizeArgsMaybeGPU(pf, args, inputFirst[name] && (!method || f.types.isModule(pf, obj))):
		f.add(pf, call, placeSize, DepTrue, CatDynamicShape, "takes a size that may be a CUDA tensor ("+name+")")
	case readingOps[name].dep != "":
		op := readingOps[name]
		f.add(pf, call, placeOp, op.dep, op.cat, "calls "+name+", which reads back from the GPU")
	case name == "where" && nargs == 1:
		f.add(pf, call, placeOp, DepTrue, CatDynamicShape, "calls where(cond), which reads back its count")
	case name == "clip_grad_norm_" && strings.Contains(pf.text(args), "error_if_nonfinite=True"):
		f.add(pf, call, placeOp, DepTrue, CatControlFlow, "checks the norm is finite (error_if_nonfinite=True)")
	case name == "LBFGS" || insideNamespace(pf.text(fn), "linalg", "distributions") && !linalgNorms[name]:
		// LBFGS's step reads the loss and its tolerances; linalg checks
		// its results for errors (a norm has none to check); distributions
		// validate their arguments
		f.opaque(pf, call, "calls "+pf.text(fn)+", which reads back inside")
	case !method && (name == "exec" || name == "eval" || name == "__import__"),
		method && moduleName(pf, obj) == "os" && (name == "system" || name == "popen" || strings.HasPrefix(name, "exec") || strings.HasPrefix(name, "spawn")):
		f.opaque(pf, call, "runs code the reading does not see ("+name+")")
	case opaqueOps[name] && f.argsMaybeGPU(pf, args):
		f.opaque(pf, call, "hands a value that may be a CUDA tensor to "+name)
	case method && f.types.isStdlibModule(pf, obj) && f.argsMaybeGPU(pf, args),
		method && f.types.isModule(pf, obj) && rootModule(pf.imports[moduleName(pf, obj)]) == "numpy" && f.argsMaybeGPU(pf, args):
		f.opaque(pf, call, "hands a value that may be a CUDA tensor to "+pf.text(fn))
	case !method && (name == "any" || name == "all" || name == "max" || name == "min" || name == "sorted") && f.argsMaybeGPU(pf, args):
		f.add(pf, call, placeTest, DepTrue, CatControlFlow, "tests or compares values that may be CUDA tensors ("+name+")")
	case name == "item" || name == "tolist" || name == "cpu" || name == "numpy":
		if method && obj != nil && !onGPU {
			return // a Python or host value's
		}
		f.opaque(pf, call, "reads back in a way not followed ("+name+")")
	}
}

// hasPositional says whether a call's argument list holds a positional
// argument.
func hasPositional(args *sitter.Node) bool {
	for i := uint(0); args != nil && i < args.NamedChildCount(); i++ {
		if k := args.NamedChild(i).Kind(); k != "keyword_argument" && k != "comment" {
			return true
		}
	}
	return false
}

// linalgNorms are the linalg functions (torch.linalg, cupy.linalg) that
// only reduce, with no error status to read back.
var linalgNorms = map[string]bool{"norm": true, "vector_norm": true, "matrix_norm": true}

// insideNamespace says whether a dotted function name goes through one of
// the namespaces (torch.linalg.solve, dist.Normal from torch.distributions).
func insideNamespace(dotted string, namespaces ...string) bool {
	for _, ns := range namespaces {
		if strings.Contains("."+dotted+".", "."+ns+".") {
			return true
		}
	}
	return false
}

// moduleName is the identifier at the root of an attribute chain.
func moduleName(pf *parsedFile, n *sitter.Node) string {
	for n != nil && n.Kind() == "attribute" {
		n = n.ChildByFieldName("object")
	}
	if n == nil {
		return ""
	}
	return pf.text(n)
}

// displays says whether a call only shows its arguments (print, a logger,
// a progress bar's postfix, a writer).
func (f *placeFinder) displays(pf *parsedFile, call *sitter.Node, name string, method bool) bool {
	if !method {
		return name == "print" || name == "pprint"
	}
	obj := ""
	if o := call.ChildByFieldName("function").ChildByFieldName("object"); o != nil {
		obj = strings.ToLower(pf.text(o))
	}
	return logMethods[name] || loggerMethods[name] && (strings.Contains(obj, "log") || loggerObjects[obj])
}
