package classify

// The hyperparameters of a torch optimizer's parameter groups
// (`opt.param_groups[0]["lr"]`, `for g in opt.param_groups: g["lr"]`):
// Python numbers, as the optimizer's constructor was handed them, unless
// the program hands it a tensor (`lr=torch.tensor(0.01)`, which torch
// allows) or stores one into a group. Reading the learning rate to log it
// or to compute the next one is common in training scripts; without this
// every such read "may be a CUDA tensor" to the program matcher.

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
