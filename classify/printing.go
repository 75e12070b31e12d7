package classify

import "strings"

// Printing a CUDA tensor (print(t), str(t), f"{t}") runs torch's
// torch/_tensor_str.py: _Formatter takes masked_select(t, isfinite(t) &
// t.ne(0)), compares its min and max on the GPU (each comparison an `if` on
// a tensor: is_nonzero), and formats elements with Tensor.__format__, whose
// self.detach().item() reads each value. All of it runs under no_grad, so
// --pytorch=autograd-nvtx writes its ops without "seq =". With Python
// backtraces the frames in torch/_tensor_str.py say so directly; with aten
// ranges alone these conditions recognise it from the ops before each sync.

// printerOps are the aten ops torch/_tensor_str.py runs between the syncs
// of one print.
var printerOps = map[string]bool{
	"aten::reshape": true, "aten::view": true, "aten::isfinite": true, "aten::abs": true, "aten::empty": true,
	"aten::empty_strided": true, "aten::resize_": true, "aten::ne": true, "aten::eq": true, "aten::mul": true,
	"aten::__and__": true, "aten::bitwise_and": true, "aten::masked_select": true, "aten::nonzero": true,
	"aten::t": true, "aten::transpose": true, "aten::as_strided": true, "aten::set_": true, "aten::select": true,
	"aten::slice": true, "aten::to": true, "aten::_to_copy": true, "aten::copy_": true, "aten::min": true,
	"aten::max": true, "aten::unbind": true, "aten::ceil": true, "aten::div": true, "aten::gt": true,
	"aten::lt": true, "aten::detach": true, "aten::item": true, "aten::_local_scalar_dense": true,
	"aten::is_nonzero": true, "aten::cat": true, "aten::stack": true, "aten::resolve_conj": true, "aten::resolve_neg": true,
}

// printerSyncOps are the outermost aten ops of a print's syncs.
var printerSyncOps = map[string]bool{"aten::item": true, "aten::is_nonzero": true, "aten::masked_select": true, "aten::to": true}

// formatsScalar: the sync is an aten::item right after aten::detach —
// Tensor.__format__ reading a 0-d tensor for an f-string or a print.
func formatsScalar(f *facts) ([]string, bool) {
	if len(f.aten) == 0 || f.aten[0] != "aten::item" || len(f.before) == 0 || f.before[len(f.before)-1].name != "aten::detach" {
		return nil, false
	}
	return []string{"NVTX range `aten::item` right after `aten::detach` (Tensor.__format__ reads `self.detach().item()`)"}, true
}

// printingOpens: the sync is _Formatter's masked_select of
// isfinite(t) & t.ne(0).
func printingOpens(f *facts) ([]string, bool) {
	if !contains(f.aten, "aten::masked_select") {
		return nil, false
	}
	var isfinite, ne, and bool
	for _, o := range f.before {
		switch o.name {
		case "aten::isfinite":
			isfinite = true
		case "aten::ne":
			ne = true
		case "aten::__and__", "aten::bitwise_and":
			and = true
		}
	}
	if !isfinite || !ne || !and {
		return nil, false
	}
	return []string{"NVTX range `aten::masked_select` after `aten::isfinite`, `aten::ne`, `aten::__and__`: torch/_tensor_str.py's " +
		"`masked_select(t, isfinite(t) & t.ne(0))`"}, true
}

// printingContinues: the thread's previous sync was part of a tensor
// print and only the printer's ops, all without autograd, ran since.
func printingContinues(f *facts) ([]string, bool) {
	if f.state == nil || !f.state.printing || len(f.aten) == 0 || !printerSyncOps[f.aten[0]] {
		return nil, false
	}
	for _, o := range f.before {
		if o.grad || !(printerOps[o.name] || strings.HasPrefix(o.name, "cub::")) {
			return nil, false
		}
	}
	return []string{"the thread's previous sync was a tensor print, and only printer ops without autograd ran since (then `" +
		f.aten[0] + "`)"}, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
