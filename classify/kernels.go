package classify

import (
	"fmt"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// The GPU ops around a small read tell what it reads where no frame or
// aten range does (a lean capture): the kernels enqueued on the copy's
// stream just before it computed the value, and those just after show
// what the program did with it. Each family below is named by what
// PyTorch's kernels do, from their demangled names (ATen's
// at::native::… and the CUB it bundles as at_cuda_detail::cub::…), not by
// any one program.

// gpuFamily is a kind of kernel recognised by substrings of its demangled
// name: all of all, and one of any when any is set.
type gpuFamily struct {
	all, any []string
}

func (g gpuFamily) has(name string) bool {
	for _, s := range g.all {
		if !strings.Contains(name, s) {
			return false
		}
	}
	if len(g.any) == 0 {
		return true
	}
	for _, s := range g.any {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

var (
	// boolReduce: `.all()` / `.any()` (ReduceOp<bool, … and_kernel_cuda /
	// or_kernel_cuda …>), the reductions torch.equal and allclose end in.
	boolReduce = gpuFamily{all: []string{"ReduceOp<bool"}, any: []string{"and_kernel_cuda", "or_kernel_cuda"}}
	// boolElementwise: comparisons and logical operators, whose output is
	// a bool tensor: `a < b`, `x == 0`, `isnan`, `a & b`.
	boolElementwise = gpuFamily{any: []string{"CompareEqFunctor", "CompareFunctor", "compare_scalar_kernel", "logical_and_kernel",
		"logical_or_kernel", "logical_xor_kernel", "logical_not_kernel", "BitwiseAndFunctor<bool>", "BitwiseOrFunctor<bool>", "isnan_kernel", "isinf_kernel"}}
	// doubleCompare: a comparison in float64. torch's tensor printer
	// (torch/_tensor_str.py) compares in double; so may a program. Its
	// bool reads stay unknown.
	doubleCompare = gpuFamily{any: []string{"compare_scalar_kernel<double>", "CompareEqFunctor<double>", "CompareFunctor<double>", "BinaryFunctor<double, double, bool"}}
	// maskCount: the CUB reduction that counts a mask's true values before
	// nonzero / masked_select / x[mask] compact it.
	maskCount = gpuFamily{all: []string{"cub::", "DeviceReduce"}}
	// compaction: CUB's select and compaction kernels — after a mask count
	// (nonzero), or before the read of the number selected (unique).
	compaction = gpuFamily{all: []string{"cub::"}, any: []string{"DeviceSelectSweepKernel", "DeviceCompactInitKernel"}}
	// prefixSum: a CUB scan (cumsum), which repeat_interleave sums its
	// repeats with before reading the total.
	prefixSum = gpuFamily{all: []string{"cub::", "DeviceScanKernel"}}
	// indexPut: an assignment through indices (x[mask] = v, index_put_).
	indexPut = gpuFamily{any: []string{"index_put_kernel", "index_put_with_sort_kernel", "index_put_accumulate"}}
	// ampUnscale: GradScaler's unscale, which writes found_inf
	// (_amp_foreach_non_finite_check_and_unscale_cuda_, or the one-tensor
	// _amp_non_finite_check_and_unscale_cuda_).
	ampUnscale = gpuFamily{any: []string{"_amp_foreach_non_finite_check_and_unscale", "_amp_non_finite_check_and_unscale"}}
)

// lastBefore is the last GPU op enqueued on the sync's stream before it,
// "" when none is known.
func (f *facts) lastBefore() string {
	if n := len(f.gpuBefore); n > 0 {
		return f.gpuBefore[n-1].Name
	}
	return ""
}

// anyAfter reports whether one of the ops enqueued just after the sync is
// of the family.
func (f *facts) anyAfter(g gpuFamily) (string, bool) {
	for _, op := range f.gpuAfter {
		if op.Kind == trace.GPUKernel && g.has(op.Name) {
			return op.Name, true
		}
	}
	return "", false
}

// gpuEvidence says which kernel a rule read.
func gpuEvidence(where, name string) string {
	return fmt.Sprintf("GPU op %s: `%s`", where, shortSymbol(name))
}

// readsTruthValue: a 1-byte read right after a bool reduction or a
// comparison is a Python truth value (`if t.any():`, `while not done:`,
// `assert`, `a < b` in Python) — not in float64, where it may be torch's
// tensor printer.
func readsTruthValue(f *facts) ([]string, bool) {
	if f.copy == nil || !f.copy.FromActivity || f.copy.Bytes != 1 {
		return nil, false
	}
	last := f.lastBefore()
	if (!boolReduce.has(last) && !boolElementwise.has(last)) || doubleCompare.has(last) {
		return nil, false
	}
	return []string{gpuEvidence("just before", last), "reads 1 byte: a bool"}, true
}

// readsInfCheck: a read of at most 8 bytes right after GradScaler's
// unscale kernel, the last GPU op before it: found_inf read back to decide
// whether optimizer.step() runs (torch/amp/grad_scaler.py _maybe_opt_step).
// With clipping or any other work between unscale_() and step(), the
// unscale is no longer the last op and the read stays unknown.
func readsInfCheck(f *facts) ([]string, bool) {
	if f.copy == nil || !f.copy.FromActivity || f.copy.Bytes > maxScalarBytes || !ampUnscale.has(f.lastBefore()) {
		return nil, false
	}
	return []string{gpuEvidence("just before", f.lastBefore())}, true
}

// readsMaskCountForAssignment: a mask count read, then the compaction
// and an indexed assignment (x[mask] = v turned into index_put_).
func readsMaskCountForAssignment(f *facts) ([]string, bool) {
	if !maskCount.has(f.lastBefore()) {
		return nil, false
	}
	put, ok := f.anyAfter(indexPut)
	if !ok {
		return nil, false
	}
	return []string{gpuEvidence("just before", f.lastBefore()), gpuEvidence("just after", put)}, true
}

// readsOutputSize: the count of a mask (nonzero, masked_select, x[mask]),
// the number of values a CUB select kept (unique) or a prefix sum's total
// (repeat_interleave): the size of the next op's output.
func readsOutputSize(f *facts) ([]string, bool) {
	last := f.lastBefore()
	switch {
	case maskCount.has(last):
		if next, ok := f.anyAfter(compaction); ok {
			return []string{gpuEvidence("just before", last), gpuEvidence("just after", next)}, true
		}
	case compaction.has(last), prefixSum.has(last):
		return []string{gpuEvidence("just before", last)}, true
	}
	return nil, false
}
