package classify

// Facts of torch's API the program matcher's type questions need
// (leangpu.go). The hyperparameters of an optimizer's parameter groups
// (`opt.param_groups[0]["lr"]`, `for g in opt.param_groups: g["lr"]`)
// are Python numbers, as the optimizer's constructor was handed them,
// unless the program hands it a tensor (`lr=torch.tensor(0.01)`, which
// torch allows) or stores one into a group: reading the learning rate to
// log it or to compute the next one is common in training scripts. And a
// factory (`torch.tensor(list(vals))`, `torch.zeros(n)`) makes its tensor
// on the default device, the CPU, unless handed a device, made of a CUDA
// tensor, or the program changes the default.

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// optimizerHyper are the keys of a param group that hold hyperparameters
// (not "params", the tensors it updates).
var optimizerHyper = map[string]bool{"lr": true, "initial_lr": true, "momentum": true, "dampening": true,
	"weight_decay": true, "nesterov": true, "betas": true, "eps": true, "alpha": true, "rho": true,
	"lr_decay": true, "initial_accumulator_value": true}

// hyperMaybeGPU answers for a subscript that reads a hyperparameter of an
// optimizer's group; ok is false when sub is no such read, or its
// optimizer is not one the program makes with torch.optim.
func (g *gpuTyper) hyperMaybeGPU(pf *parsedFile, sub *sitter.Node) (gpu, ok bool) {
	key := literalString(pf.text, sub.ChildByFieldName("subscript"))
	group := sub.ChildByFieldName("value")
	if !optimizerHyper[key] || group == nil {
		return false, false
	}
	var groups []*sitter.Node // the X.param_groups the group comes from
	switch group.Kind() {
	case "subscript": // opt.param_groups[0]["lr"]
		groups = append(groups, group.ChildByFieldName("value"))
	case "identifier": // for g in opt.param_groups: g["lr"]
		scope := bindingScope(pf, group, pf.text(group))
		if scope == nil {
			return false, false
		}
		all := true
		g.bindings(pf, scope, pf.text(group), func(v *sitter.Node, loop bool) {
			all = all && loop && v != nil
			groups = append(groups, v)
		})
		if !all {
			return false, false
		}
	default:
		return false, false
	}
	for _, pg := range groups {
		if pg == nil || pg.Kind() != "attribute" || pg.ChildByFieldName("attribute") == nil ||
			pf.text(pg.ChildByFieldName("attribute")) != "param_groups" {
			return false, false
		}
		made, known := g.optimizerMade(pf, pg.ChildByFieldName("object"))
		if !known {
			return false, false
		}
		if made {
			return true, true
		}
	}
	return g.keyed("hyper:"+key, func() bool { return g.hyperStored(key) }), true
}

// optimizerMade says, of an object, whether its constructor may have been
// handed a tensor other than its parameters; known is false unless every
// binding of it is a call of a torch.optim class.
func (g *gpuTyper) optimizerMade(pf *parsedFile, obj *sitter.Node) (gpu, known bool) {
	if obj == nil || obj.Kind() != "identifier" {
		return false, false
	}
	scope := bindingScope(pf, obj, pf.text(obj))
	if scope == nil {
		return false, false
	}
	known, seen := true, false
	g.bindings(pf, scope, pf.text(obj), func(v *sitter.Node, loop bool) {
		if !known {
			return
		}
		if loop || v == nil || v.Kind() != "call" || !g.torchOptimizer(pf, v.ChildByFieldName("function")) {
			known = false
			return
		}
		seen = true
		args := v.ChildByFieldName("arguments")
		for i := uint(1); args != nil && i < args.NamedChildCount(); i++ { // the first: the parameters
			if a := args.NamedChild(i); a.Kind() != "keyword_argument" || !strings.Contains(pf.text(a.ChildByFieldName("name")), "param") {
				gpu = gpu || g.maybeGPU(pf, a)
			}
		}
	})
	return gpu, known && seen
}

// torchOptimizer says whether fn names a class of torch.optim
// (`torch.optim.SGD`, `optim.AdamW` with `from torch import optim`, `SGD`
// imported from torch.optim).
func (g *gpuTyper) torchOptimizer(pf *parsedFile, fn *sitter.Node) bool {
	if fn == nil {
		return false
	}
	full := pf.text(fn)
	if fn.Kind() == "identifier" {
		full = pf.imports[full]
	} else if root, rest, ok := strings.Cut(full, "."); ok && pf.imports[root] != "" {
		full = pf.imports[root] + "." + rest
	}
	mod, class, ok := cutLast(full, ".")
	return ok && mod == "torch.optim" && class != "" && class[0] >= 'A' && class[0] <= 'Z'
}

// hyperStored says whether some store of the program into a subscript
// under the constant key (`group["lr"] = new_lr`) may store a tensor.
func (g *gpuTyper) hyperStored(key string) bool {
	gpu := false
	for _, f := range g.prog.files {
		walkAll(f.root, func(n *sitter.Node) {
			if gpu || n.Kind() != "subscript" || !isStoreTarget(n) || literalString(f.text, n.ChildByFieldName("subscript")) != key {
				return
			}
			gpu = g.maybeGPU(f, n.Parent().ChildByFieldName("right"))
		})
	}
	return gpu
}

// cutLast splits s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// cpuFactories are torch's functions that make a tensor on the default
// device, or compute one on their inputs' device.
var cpuFactories = map[string]bool{"tensor": true, "as_tensor": true, "from_numpy": true, "zeros": true, "ones": true,
	"empty": true, "full": true, "arange": true, "linspace": true, "logspace": true, "randn": true, "rand": true,
	"randint": true, "randperm": true, "eye": true, "stack": true, "cat": true}

// toDevice are the tensor methods that may move a tensor to the GPU.
var toDevice = map[string]bool{"cuda": true, "to": true, "type": true, "new_tensor": true, "new_zeros": true,
	"new_ones": true, "new_empty": true, "new_full": true}

// cpuFactory says whether torch.name(args) makes its tensor on the CPU
// when no argument is one on the GPU: obj is the torch module itself, no
// `device=` is given, and no file of the program changes torch's default
// device (set_default_device, set_default_tensor_type, `with
// torch.device(...)`).
func (g *gpuTyper) cpuFactory(pf *parsedFile, obj *sitter.Node, name string, args *sitter.Node) bool {
	if !cpuFactories[name] || obj == nil || obj.Kind() != "identifier" || pf.imports[pf.text(obj)] != "torch" {
		return false
	}
	for i := uint(0); args != nil && i < args.NamedChildCount(); i++ {
		if a := args.NamedChild(i); a.Kind() == "keyword_argument" && a.ChildByFieldName("name") != nil && pf.text(a.ChildByFieldName("name")) == "device" {
			return false
		}
	}
	return !g.defaultDeviceSet()
}

// defaultDeviceSet says whether some file of the program may change the
// device torch makes tensors on by default.
func (g *gpuTyper) defaultDeviceSet() bool {
	for _, f := range g.prog.files {
		src := string(f.src)
		if strings.Contains(src, "set_default_device") || strings.Contains(src, "set_default_tensor_type") ||
			strings.Contains(src, "with torch.device") || strings.Contains(src, "DeviceMode") {
			return true
		}
	}
	return false
}
