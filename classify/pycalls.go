package classify

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// What one call or operator does with a value handed to it (pyflow.go
// follows the value from node to node and asks these at each step).

// useThrough: the call's result carries the value on (str, max, round...).
const useThrough = -1

// callUse says what a call does with an argument: UseLog for logging,
// printing, a progress bar or appending to a list, UseShape for a size,
// useThrough for a conversion or pick whose result is followed, UseNone
// for anything else (a function that may branch on it).
func (a *pyAnalysis) callUse(call *sitter.Node) int {
	fn := call.ChildByFieldName("function")
	name, method := a.callName(fn)
	obj := ""
	if method {
		if o := fn.ChildByFieldName("object"); o != nil {
			obj = strings.ToLower(a.text(o))
		}
	}
	switch {
	case !method && (name == "print" || name == "pprint"):
		return int(UseLog)
	case method && logMethods[name]:
		return int(UseLog)
	case method && loggerMethods[name] && (strings.Contains(obj, "log") || loggerObjects[obj]):
		return int(UseLog)
	case method && (name == "append" || name == "extend" || name == "appendleft"), a.dictUpdate(call):
		return int(UseLog)
	case !method && name == "range" && loopHeader(call):
		return int(UseBranch) // how many times a loop runs: control flow, not a size
	case shapeCalls[name]:
		return int(UseShape)
	case method && name == "step" && a.plateauScheduler(fn.ChildByFieldName("object")):
		return int(UseBranch) // the metric decides the learning rate of the steps after it
	case !method && throughCalls[name], method && name == "format", method && mathModules[obj] && mathFunctions[name],
		method && textModules[obj] && name == "dumps", method && name == "join" && a.joinsText(call):
		return useThrough
	}
	return int(UseNone)
}

var (
	// logMethods log, show or write to a file whatever object they are
	// called on or handed.
	logMethods = map[string]bool{"add_scalar": true, "add_scalars": true, "add_histogram": true, "add_text": true,
		"log_metric": true, "log_metrics": true, "set_postfix": true, "set_postfix_str": true, "set_description": true,
		"set_description_str": true, "write": true,
		// written to a file: json.dump(obj, f), csv writers, pickle, yaml
		"dump": true, "writerow": true, "writerows": true}
	// loggerMethods log when called on a logger (an object named *log*, or one of loggerObjects).
	loggerMethods = map[string]bool{"info": true, "debug": true, "warning": true, "warn": true, "error": true,
		"critical": true, "exception": true, "log": true, "log_dict": true}
	loggerObjects = map[string]bool{"self": true, "wandb": true, "pl_module": true, "run": true, "mlflow": true,
		"experiment": true, "fabric": true, "accelerator": true, "trainer": true}
	// shapeCalls take sizes: the value becomes a shape.
	shapeCalls = map[string]bool{"range": true, "empty": true, "zeros": true, "ones": true, "randn": true, "rand": true,
		"randint": true, "arange": true, "new_zeros": true, "new_empty": true, "new_ones": true, "view": true,
		"reshape": true, "expand": true, "repeat": true, "narrow": true, "split": true, "tensor_split": true,
		"chunk": true, "topk": true, "resize_": true, "unflatten": true, "pad": true,
		// NumPy's and CuPy's random arrays of a size
		"random": true, "random_sample": true, "standard_normal": true}
	// keepsData are methods whose result holds the data of the object they
	// are called on, converted or reshaped.
	keepsData = map[string]bool{"numpy": true, "tolist": true, "detach": true, "clone": true, "copy": true, "float": true,
		"double": true, "long": true, "int": true, "half": true, "contiguous": true, "squeeze": true, "flatten": true,
		"ravel": true, "astype": true, "item": true}
	// mathModules and mathFunctions: the math module's and NumPy's functions
	// of a number (math.isnan(v), np.sqrt(v)) return one computed from it:
	// the result is followed.
	// The statistics module's of numbers (statistics.fmean(values)) too.
	mathModules   = map[string]bool{"math": true, "cmath": true, "np": true, "numpy": true, "statistics": true}
	mathFunctions = map[string]bool{"isnan": true, "isinf": true, "isfinite": true, "isclose": true, "sqrt": true,
		"log": true, "log2": true, "log10": true, "log1p": true, "exp": true, "expm1": true, "fabs": true,
		"floor": true, "ceil": true, "trunc": true,
		"mean": true, "fmean": true, "median": true, "stdev": true, "pstdev": true, "variance": true,
		"pvariance": true, "geometric_mean": true, "harmonic_mean": true}
	// textModules: the modules whose dumps(obj) returns obj as text
	// (json.dumps(record)): the result is followed.
	textModules = map[string]bool{"json": true}
	// throughCalls return the value, converted or picked: their result is followed.
	throughCalls = map[string]bool{"int": true, "float": true, "round": true, "abs": true, "max": true, "min": true,
		"sorted": true, "sum": true, "str": true, "repr": true, "format": true, "list": true, "tuple": true, "dict": true,
		"zip": true}
)

// lookupKey says whether v is the key of a lookup, `d.get(v)` or
// `d.get(v, default)`: the entry it picks carries the value on.
func (a *pyAnalysis) lookupKey(call, v *sitter.Node) bool {
	name, method := a.callName(call.ChildByFieldName("function"))
	args := call.ChildByFieldName("arguments")
	if !method || name != "get" || args == nil || args.NamedChildCount() == 0 || args.NamedChildCount() > 2 {
		return false
	}
	first := args.NamedChild(0)
	return sameNode(first, v) && first.Kind() != "keyword_argument" && (args.NamedChildCount() == 1 || args.NamedChild(1).Kind() != "keyword_argument")
}

// arithmeticKeepsScalar says whether a binary operation on v gives a value
// that is still the read value's (a number with a literal, a module
// constant or a parameter that only ever holds numbers, or a string
// formatted with %): the other operand of anything else may be a tensor.
func (a *pyAnalysis) arithmeticKeepsScalar(op, v *sitter.Node) bool {
	left, right := op.ChildByFieldName("left"), op.ChildByFieldName("right")
	other := left
	if sameNode(left, v) {
		other = right
	}
	if other == nil {
		return false
	}
	if sameNode(right, v) && left != nil && left.Kind() == "string" {
		return true // "%.3f" % v
	}
	return a.isNumber(other) || other.Kind() == "identifier" && a.isNumberName(other) || a.hostValue(other)
}

// hostValue says whether the program's type questions (leangpu.go) find
// that n, in one of the program's files, holds no CUDA tensor
// (`scale = scaler.loss_scale`, a number its class keeps): arithmetic with
// it keeps a value read back on the host.
func (a *pyAnalysis) hostValue(n *sitter.Node) bool {
	p, pf := a.others.prog, a.others.self
	if p == nil || pf == nil || pf.root == nil || !sameNode(pf.root, a.root) {
		return false
	}
	return !p.typer().maybeGPU(pf, n)
}

// constantString returns the text of a plain string literal ("loss",
// 'step'), "" for anything else (an f-string, a name, a number).
func (a *pyAnalysis) constantString(n *sitter.Node) string { return literalString(a.text, n) }

// literalString is constantString over any file's text.
func literalString(text func(*sitter.Node) string, n *sitter.Node) string {
	if n == nil || n.Kind() != "string" {
		return ""
	}
	t := text(n)
	if len(t) < 2 || (t[0] != '"' && t[0] != '\'') || t[len(t)-1] != t[0] {
		return ""
	}
	inner := t[1 : len(t)-1]
	if inner == "" || strings.ContainsAny(inner, "\"'\\{}") {
		return ""
	}
	return inner
}

// plateauScheduler says whether obj is a variable every binding of which
// is torch's ReduceLROnPlateau: its step(metric) compares the metric with
// its best and lowers the learning rate the optimizer's later steps use.
func (a *pyAnalysis) plateauScheduler(obj *sitter.Node) bool {
	if obj == nil || obj.Kind() != "identifier" {
		return false
	}
	name := a.text(obj)
	values, ok := a.boundValues(a.definingScope(obj, name), name)
	for _, v := range values {
		if v == nil || v.Kind() != "call" {
			return false
		}
		if fn, _ := a.callName(v.ChildByFieldName("function")); fn != "ReduceLROnPlateau" {
			return false
		}
	}
	return ok && len(values) > 0
}

// joinsText says whether call is a join of one argument (`sep.join(parts)`,
// `" ".join(f"{k}={v}" for …)`): text (or a path) made from what it is
// handed. A thread's or process's join takes a timeout, and its result
// (None) carries nothing on.
func (a *pyAnalysis) joinsText(call *sitter.Node) bool {
	args := call.ChildByFieldName("arguments")
	if args != nil && args.Kind() == "generator_expression" {
		return true // `sep.join(… for …)`
	}
	return args != nil && args.NamedChildCount() == 1 && args.NamedChild(0).Kind() != "keyword_argument"
}

// loopHeader says whether call is what a for statement iterates
// (`for k in range(n):`).
func loopHeader(call *sitter.Node) bool {
	p := call.Parent()
	return p != nil && p.Kind() == "for_statement" && sameNode(p.ChildByFieldName("right"), call)
}
