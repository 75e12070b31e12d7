package classify

// Whether an expression of the program may be, or hold, a CUDA tensor: the
// question the program matcher (leanprogram.go) asks of every value that
// is printed, tested, converted or used as a size. The answer is "no" only
// when the program shows it: literals, Python numbers (len, range, .item(),
// float(), sizes), strings, modules, and variables every binding of which
// is such a value. Anything the reading cannot follow — a parameter, an
// attribute, the result of a call into torch or an unknown function — may
// be a tensor.

import (
	"path"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// maxTypeWork bounds the nodes one program's type questions may visit; past
// it every answer is "may be a tensor".
const maxTypeWork = 200_000

// pyScalarCalls return Python values whatever their arguments.
var pyScalarCalls = map[string]bool{"len": true, "range": true, "int": true, "float": true, "str": true, "bool": true,
	"repr": true, "format": true, "isinstance": true, "hasattr": true, "type": true, "id": true, "hash": true, "ord": true,
	"chr": true, "callable": true, "open": true, "input": true, "print": true}

// pyScalarMethods return Python values (or host data) whatever they are called on.
var pyScalarMethods = map[string]bool{"item": true, "tolist": true, "numpy": true, "cpu": true, "size": true, "numel": true,
	"dim": true, "element_size": true, "nelement": true, "data_ptr": true, "get_device": true, "is_contiguous": true,
	"join": true, "format": true, "upper": true, "lower": true, "strip": true, "startswith": true,
	"endswith": true, "replace": true, "time": true, "perf_counter": true, "monotonic": true, "getenv": true}

// torchPyCalls are functions of torch's modules that return no tensor.
var torchPyCalls = map[string]bool{"device": true, "finfo": true, "iinfo": true, "is_available": true,
	"device_count": true, "current_device": true, "get_device_name": true, "get_default_dtype": true, "Size": true,
	// torch.distributed's questions about the process group
	"is_initialized": true, "get_rank": true, "get_world_size": true, "is_nccl_available": true,
	// questions about a value or torch's state: Python bools and ints
	"is_tensor": true, "is_storage": true, "is_floating_point": true, "is_complex": true, "numel": true,
	"is_grad_enabled": true, "is_inference_mode_enabled": true, "are_deterministic_algorithms_enabled": true}

// pyScalarAttrs are tensor attributes that hold Python values.
var pyScalarAttrs = map[string]bool{"shape": true, "ndim": true, "dtype": true, "device": true, "is_cuda": true,
	"requires_grad": true, "__name__": true, "__class__": true, "layout": true}

// passThroughCalls return (a combination of) their arguments.
var passThroughCalls = map[string]bool{"round": true, "abs": true, "max": true, "min": true, "sum": true, "sorted": true,
	"list": true, "tuple": true, "dict": true, "set": true, "reversed": true, "zip": true, "iter": true, "next": true,
	"slice": true,
	// collections' containers, of what they are handed (a factory for defaultdict)
	"deque": true, "OrderedDict": true, "defaultdict": true, "Counter": true}

// gpuTyper answers the question over one program's parsed files.
type gpuTyper struct {
	prog *programTrees
	work int
	// open: the keyed questions being answered, by their depth (a cycle
	// back to one adds nothing); lowest: the shallowest open question a
	// cycle reached since the current one opened.
	open   map[string]int
	lowest int
	memo   map[string]bool // answers that no open question's cycle made
	idents map[string][]programCall
}

func newGPUTyper(p *programTrees) *gpuTyper {
	return &gpuTyper{prog: p, open: map[string]int{}, memo: map[string]bool{}, lowest: maxDepthMark}
}

// maxDepthMark is "no cycle reached an open question".
const maxDepthMark = 1 << 30

// keyed answers a named question once. A question that cycles back to
// one still open gets "no" from the cycle (a cycle adds no tensor);
// its answer is kept only when it is "may be a tensor" (final whatever
// else is found) or no cycle reached a question opened before it.
func (g *gpuTyper) keyed(key string, answer func() bool) bool {
	if v, ok := g.memo[key]; ok {
		return v
	}
	if d, ok := g.open[key]; ok {
		g.lowest = min(g.lowest, d)
		return false
	}
	depth := len(g.open)
	g.open[key] = depth
	outer := g.lowest
	g.lowest = maxDepthMark
	v := answer()
	delete(g.open, key)
	if v || g.lowest >= depth {
		g.memo[key] = v
	}
	g.lowest = min(outer, g.lowest)
	return v
}

// maybeGPU says whether n may be, or hold, a CUDA tensor.
func (g *gpuTyper) maybeGPU(pf *parsedFile, n *sitter.Node) bool {
	if n == nil {
		return false
	}
	if g.work++; g.work > maxTypeWork {
		return true
	}
	switch n.Kind() {
	case "integer", "float", "string", "concatenated_string", "true", "false", "none", "ellipsis", "lambda", "comment":
		return false
	case "identifier":
		return g.nameMaybeGPU(pf, n)
	case "attribute":
		at, obj := n.ChildByFieldName("attribute"), n.ChildByFieldName("object")
		switch {
		case at == nil || obj == nil:
			return true
		case pyScalarAttrs[pf.text(at)] || g.isModule(pf, obj):
			return false
		}
		if cls := g.classOf(pf, obj); cls != nil {
			if g.prog.isRecord(cls.file.text(cls.node.ChildByFieldName("name"))) {
				// a record's fields: what its constructor was handed, or stored since
				return g.maybeGPU(pf, obj) || g.storedOutside(pf.text(at))
			}
			return g.attrMaybeGPU(cls, pf.text(at))
		}
		if cls := g.classObject(pf, obj); cls != nil {
			return g.classAttrMaybeGPU(cls, pf.text(at)) // `Summary.NONE`
		}
		return g.maybeGPU(pf, obj) // an attribute of a Python value is one (d.get, s.upper)
	case "call":
		return g.callMaybeGPU(pf, n)
	case "subscript":
		if gpu, ok := g.hyperMaybeGPU(pf, n); ok {
			return gpu // an optimizer's hyperparameter (leantorch.go)
		}
		return g.maybeGPU(pf, n.ChildByFieldName("value"))
	case "list_comprehension", "set_comprehension", "generator_expression":
		return g.maybeGPU(pf, n.ChildByFieldName("body"))
	case "dictionary_comprehension":
		return g.maybeGPU(pf, n.ChildByFieldName("body"))
	case "pair":
		return g.maybeGPU(pf, n.ChildByFieldName("value"))
	case "keyword_argument":
		return g.maybeGPU(pf, n.ChildByFieldName("value"))
	case "conditional_expression":
		return g.maybeGPU(pf, n.NamedChild(0)) || g.maybeGPU(pf, n.NamedChild(2))
	case "binary_operator":
		if left := n.ChildByFieldName("left"); left != nil && (left.Kind() == "string" || left.Kind() == "concatenated_string") {
			return false // "..." % x and "..." + s are strings
		}
		return g.maybeGPU(pf, n.ChildByFieldName("left")) || g.maybeGPU(pf, n.ChildByFieldName("right"))
	case "list", "tuple", "set", "dictionary", "parenthesized_expression", "unary_operator", "argument_list", "slice",
		"boolean_operator", "comparison_operator", "not_operator", "expression_list", "list_splat", "dictionary_splat":
		for i := uint(0); i < n.NamedChildCount(); i++ {
			if g.maybeGPU(pf, n.NamedChild(i)) {
				return true
			}
		}
		return false
	}
	return true
}

// callMaybeGPU answers for a call's result.
func (g *gpuTyper) callMaybeGPU(pf *parsedFile, call *sitter.Node) bool {
	fn, args := call.ChildByFieldName("function"), call.ChildByFieldName("arguments")
	name, method := callNameOf(pf, fn)
	anyArg := func() bool { return args == nil || g.maybeGPU(pf, args) }
	switch {
	case !method && pyScalarCalls[name]:
		return false
	case !method && name == "deque":
		held, ok := argumentFor(pf, call, 0, "iterable")
		return !ok || g.maybeGPU(pf, held) // its maxlen is a size, not held
	case !method && (passThroughCalls[name] || g.builtinAlias(pf, fn, passThroughCalls)):
		return anyArg() // `pick = min if lowest else max; pick(...)` too
	case method && pyScalarMethods[name]:
		return false
	case method && name == "get" && !hasPositional(args), method && name == "asnumpy" && g.isModule(pf, fn.ChildByFieldName("object")):
		return false // CuPy's x.get(), cupy.asnumpy(x): host arrays
	case method && (name == "keys" || name == "values" || name == "items" || name == "copy" || name == "get" || name == "pop"):
		return g.maybeGPU(pf, fn.ChildByFieldName("object"))
	case method && g.isStdlibModule(pf, fn.ChildByFieldName("object")):
		return false // math.sqrt(x), time.time(), os.getenv(...): Python values
	case method && torchPyCalls[name] && g.isModule(pf, fn.ChildByFieldName("object")):
		return false // torch.device("cuda"), torch.finfo(t.dtype): not tensors
	case method && g.cpuFactory(pf, fn.ChildByFieldName("object"), name, args):
		return anyArg() // torch.tensor(list(vals)): on the CPU, unless made of a CUDA tensor
	case method:
		obj := fn.ChildByFieldName("object")
		if cls := g.classOf(pf, obj); cls != nil {
			if def := cls.method(name); def != nil {
				return g.returnsMaybeGPU(*def)
			}
		}
		if !toDevice[name] && !g.isModule(pf, obj) && g.classOf(pf, obj) == nil && !g.maybeGPU(pf, obj) {
			return anyArg() // a CPU tensor's method (`.median()`, `.mean()`): on the CPU too
		}
	case !method:
		if def := g.prog.function(name); def != nil {
			return g.returnsMaybeGPU(*def)
		}
		if g.prog.isRecord(name) {
			return anyArg() // a namedtuple's or dataclass's fields: what it was handed (pyrecord.go)
		}
		if g.prog.class(name) != nil {
			return false // an instance of the program's own class: its attributes are followed apart
		}
	}
	return true
}

// returnsMaybeGPU answers for what a program function returns.
func (g *gpuTyper) returnsMaybeGPU(def programDef) bool {
	return g.keyed("return:"+def.file.path+":"+itoa(int(def.node.StartByte())), func() bool {
		found := false
		walkOwn(def.node, func(n *sitter.Node) {
			if !found && n.Kind() == "return_statement" && n.NamedChildCount() > 0 && g.maybeGPU(def.file, n.NamedChild(0)) {
				found = true
			}
		})
		return found
	})
}

// nameMaybeGPU answers for a variable: every value bound to it in its scope
// (assignments, loop targets, values appended or stored into it).
func (g *gpuTyper) nameMaybeGPU(pf *parsedFile, id *sitter.Node) bool {
	name := pf.text(id)
	switch {
	case name == "self" || name == "cls":
		return true
	case strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__"):
		return false // __name__, __file__
	}
	if g.isModule(pf, id) || g.prog.function(name) != nil || pyScalarCalls[name] || passThroughCalls[name] {
		return false
	}
	if g.narrowed(pf, id, name) {
		return false // `if isinstance(v, torch.Tensor): v = v.item()` before it (pynarrow.go)
	}
	scope := bindingScope(pf, id, name)
	if scope == nil {
		if def := paramOf(pf, id, name); def != nil {
			if body := def.ChildByFieldName("body"); body != nil && scopeBinds(pf, body, name) && g.boundMaybeGPU(pf, body, name) {
				return true // a parameter bound again in its function (`n = n.cuda()`)
			}
			return g.paramMaybeGPU(pf, def, name)
		}
		if from, ok := g.importedFrom(pf, name); ok {
			return g.boundMaybeGPU(from, from.root, name) // `from _common import STEPS`: the module's
		}
		return true // a global of another file, a builtin
	}
	return g.boundMaybeGPU(pf, scope, name)
}

// importedFrom is the program's module a name was imported from as is
// (`from _common import STEPS`), when that module binds it at its top.
func (g *gpuTyper) importedFrom(pf *parsedFile, name string) (*parsedFile, bool) {
	full, ok := pf.imports[name]
	mod, field, dotted := strings.Cut(full, ".")
	if !ok || !dotted || field != name {
		return nil, false
	}
	for _, f := range g.prog.files {
		if f != pf && strings.TrimSuffix(path.Base(f.file), ".py") == mod && (scopeBinds(f, f.root, name) || topLevelDef(f, name)) {
			return f, true
		}
	}
	return nil, false
}

// topLevelDef says whether a file defines a function or class named name
// at its top level.
func topLevelDef(pf *parsedFile, name string) bool {
	for i := uint(0); i < pf.root.NamedChildCount(); i++ {
		d := pf.root.NamedChild(i)
		if d.Kind() == "decorated_definition" {
			d = d.ChildByFieldName("definition")
		}
		if d != nil && (d.Kind() == "function_definition" || d.Kind() == "class_definition") &&
			d.ChildByFieldName("name") != nil && pf.text(d.ChildByFieldName("name")) == name {
			return true
		}
	}
	return false
}

// boundMaybeGPU answers for a name bound in scope: every value bound to it
// there.
func (g *gpuTyper) boundMaybeGPU(pf *parsedFile, scope *sitter.Node, name string) bool {
	return g.keyed("name:"+pf.path+":"+itoa(int(scope.StartByte()))+":"+name, func() bool {
		gpu := false
		g.bindings(pf, scope, name, func(value *sitter.Node, loop bool) {
			if !gpu && !(loop && isRangeLike(pf, value)) {
				gpu = value == nil || g.maybeGPU(pf, value)
			}
		})
		return gpu
	})
}

// intIndexCalls make arrays of integers, never a mask and never a 0-d
// value an index would read back: arange(n), argsort(x), randperm(n).
// randint only with a size (a third positional argument or size=):
// NumPy's and CuPy's randint(low, high) is 0-d.
var intIndexCalls = map[string]bool{"arange": true, "argsort": true, "randperm": true}

// maxIntDepth bounds how far intArray follows variables.
const maxIntDepth = 3

// intArray says whether n is an array of integer indices (intIndexCalls,
// randint with a size), or a variable every binding of which is one:
// indexing with it gathers, with no read back.
func (g *gpuTyper) intArray(pf *parsedFile, n *sitter.Node, depth int) bool {
	if n == nil || depth > maxIntDepth {
		return false
	}
	switch n.Kind() {
	case "call":
		name, _ := callNameOf(pf, n.ChildByFieldName("function"))
		return intIndexCalls[name] || name == "randint" && randintSized(pf, n.ChildByFieldName("arguments"))
	case "identifier":
		name := pf.text(n)
		scope := bindingScope(pf, n, name)
		if scope == nil {
			return false
		}
		seen, all := false, true
		g.bindings(pf, scope, name, func(v *sitter.Node, loop bool) {
			seen = true
			all = all && !loop && g.intArray(pf, v, depth+1)
		})
		return seen && all
	}
	return false
}

// randintSized says whether randint's arguments give a size.
func randintSized(pf *parsedFile, args *sitter.Node) bool {
	positional := 0
	for i := uint(0); args != nil && i < args.NamedChildCount(); i++ {
		a := args.NamedChild(i)
		if a.Kind() == "keyword_argument" {
			if name := a.ChildByFieldName("name"); name != nil && pf.text(name) == "size" {
				return true
			}
			continue
		}
		positional++
	}
	return positional >= 3
}

// isModule says whether n names an imported module (torch, math, np).
func (g *gpuTyper) isModule(pf *parsedFile, n *sitter.Node) bool {
	for n != nil && n.Kind() == "attribute" {
		n = n.ChildByFieldName("object")
	}
	return n != nil && n.Kind() == "identifier" && pf.imports[pf.text(n)] != "" && !pf.fromLocal[pf.text(n)]
}

// isStdlibModule says whether n names a module of Python's standard library.
func (g *gpuTyper) isStdlibModule(pf *parsedFile, n *sitter.Node) bool {
	for n != nil && n.Kind() == "attribute" {
		n = n.ChildByFieldName("object")
	}
	return n != nil && n.Kind() == "identifier" && stdlibModules[rootModule(pf.imports[pf.text(n)])]
}

// isRangeLike says whether a loop iterates Python numbers: range(...), or
// enumerate(...) (its first target; the second is followed apart).
func isRangeLike(pf *parsedFile, iter *sitter.Node) bool {
	if iter == nil || iter.Kind() != "call" {
		return false
	}
	name, method := callNameOf(pf, iter.ChildByFieldName("function"))
	return !method && name == "range"
}
