package classify

import "github.com/nsyssync/nsyssync/trace"

// Categories: the vocabulary of docs/design.md.
const (
	CatLogging         = "logging"
	CatControlFlow     = "control-flow"
	CatDynamicShape    = "dynamic-shape"
	CatDeviceToHost    = "device-to-host-copy"
	CatHostToDevice    = "host-to-device-pageable"
	CatExplicitSync    = "explicit-sync"
	CatStreamSync      = "stream-sync"
	CatEventSync       = "event-sync"
	CatMemory          = "memory-management"
	CatUnknown         = "unknown"
	maxScalarBytes     = 8 // a scalar read copies at most 8 bytes (int64, double)
	firstNonScalarSize = maxScalarBytes + 1
)

// Rule is one row of the classifier's table: a pattern and the verdict it
// gives. A rule matches a sync when one of its signatures is present — a
// torch Python frame (Python), an enclosing aten NVTX range (ATen), a native
// frame (Native), or the special condition When — and its Use and Pattern
// conditions, where set, hold too. With no signature at all, Use and Pattern
// alone decide. Rules are tried in order; the first that matches decides.
type Rule struct {
	Name string
	// Python: torch frames between the call and the program, "file.py" or
	// "file.py:function", matched as path suffixes.
	Python []string
	// ATen: names of enclosing aten ops (--pytorch=autograd-nvtx).
	ATen []string
	// Native: substrings of native frame symbols (--cudabacktrace).
	Native []string
	// When is a condition on the ops before the sync; WhenDoc says it in
	// words.
	When    func(*facts) ([]string, bool)
	WhenDoc string
	// GPU is a condition on the GPU ops enqueued on the sync's stream just
	// before and after it (kernels.go); GPUDoc says it in words.
	GPU    func(*facts) ([]string, bool)
	GPUDoc string
	// Use: what the program's source line does with a scalar it read
	// (needs Python frames and the program's file: Options.SourceRoot or
	// Options.FindSources).
	Use Use
	// Pattern: the CUDA calls and copy behind the sync.
	Pattern Pattern

	Dependency Dependency
	Category   string
	Confidence float64
	// Fix is the sync-free rewrite; {site} becomes the source statement
	// when it is known, else Subject.
	Fix     string
	Subject string
	// Printing marks the rules of a tensor print: the thread's next syncs
	// may continue it (rule "tensor printing continues").
	Printing bool
	// UseGuessed marks a rule whose dependency assumes what the program
	// does with the value (a bool read is tested), not what the operation
	// needs: the program's places, when they all agree (leanmatch.go),
	// decide before it.
	UseGuessed bool
}

// Host memory of a copy's host side.
const (
	AnyHost = iota
	Pageable
	Pinned
)

// Pattern is a condition on the sync's calls. The zero value holds always.
type Pattern struct {
	Call     trace.CallKind // the deciding call's kind (CallOther: any)
	Alone    bool           // no copy or memset with it
	Copy     trace.CopyKind // copy direction, folded (CopyUnknown: any, or none)
	Host     int            // AnyHost, Pageable, Pinned
	MinBytes int64
	MaxBytes int64 // 0: no bound
}

// scalarReads are the native functions of a Python conversion of a tensor
// to a scalar: .item(), bool(t) and truth tests, int(t), float(t).
var scalarReads = []string{"THPVariable_item", "THPVariable_is_nonzero", "THPVariable_bool", "THPVariable_integral_scalar", "THPVariable_float_scalar"}

// formatFrames are the torch frames of formatting a 0-d tensor.
var formatFrames = []string{"torch/_tensor.py:__format__"}

// hostCopies are the native frames of a Python copy to the host
// (`.tolist()`, `.cpu()`, `.numpy()`, `.to("cpu")`).
var hostCopies = []string{"THPVariable_tolist", "THPVariable_cpu", "THPVariable_numpy", "THPVariable_to"}

// copyKeptRule is a rule for a copy to the host whose data the program's
// source shows kept (use UseLog: only kept; UseLater: read once the loop
// that fills its container is over).
func copyKeptRule(name string, use Use, fix string) Rule {
	return Rule{Name: name, Native: hostCopies, Use: use, Pattern: Pattern{Copy: trace.CopyDtoH},
		Dependency: DepFalse, Category: CatDeviceToHost, Confidence: 0.75, Subject: "this line", Fix: fix}
}

// displayFrames are the Python frames of library code that reads a value
// only to show it (path suffixes, "file.py:function" where the file does
// more than display).
var displayFrames = []string{
	"/logging/__init__.py",
	"tqdm/std.py:format_meter", "tqdm/std.py:format_dict", "tqdm/std.py:__str__", "tqdm/std.py:set_postfix",
	"tqdm/std.py:set_description", "tqdm/std.py:display",
	"lightning/pytorch/callbacks/progress/progress_bar.py", "lightning/pytorch/callbacks/progress/tqdm_progress.py",
	"lightning/pytorch/callbacks/progress/rich_progress.py",
	"lightning/pytorch/trainer/connectors/logger_connector/logger_connector.py",
	"pytorch_lightning/callbacks/progress/progress_bar.py", "pytorch_lightning/callbacks/progress/tqdm_progress.py",
	"pytorch_lightning/callbacks/progress/rich_progress.py",
	"pytorch_lightning/trainer/connectors/logger_connector/logger_connector.py",
	"torch/utils/tensorboard/summary.py", "torch/utils/tensorboard/writer.py",
	"tensorboardX/summary.py", "tensorboardX/writer.py",
}

// Rules is the classifier's table, strongest and most specific first.
var Rules = []Rule{
	// --- Python frames of torch itself (--python-backtrace=cuda) -----------
	{Name: "tensor printing", Printing: true, Python: []string{"torch/_tensor_str.py", "torch/_tensor.py:__repr__", "torch/_tensor.py:__str__"},
		Dependency: DepFalse, Category: CatLogging, Confidence: 0.9, Subject: "this print",
		Fix: "{site} formats a CUDA tensor, so torch reads it back (one print makes several syncs: masked_select, comparisons, .item()). " +
			"Keep the value on the GPU (`history.append(t.detach())`) and print once every N steps."},
	// Tensor.__format__ (an f-string or format() of a 0-d tensor) outside a
	// tensor print (whose element formatting calls it too) reads
	// the value into a string, which the program may log or test: the
	// program's line decides, else the verdict stays open (held-out round
	// 9: a log line a monitor parses and compares).
	{Name: "formatted value is logged", Python: formatFrames, Use: UseLog,
		Dependency: DepFalse, Category: CatLogging, Confidence: 0.85, Subject: "this f-string or format",
		Fix: "{site} formats a 0-d CUDA tensor into text that is only shown or kept: torch reads it back with `.item()`. " +
			"Keep the value on the GPU (`history.append(t.detach())`) and format once every N steps."},
	{Name: "formatted value decides a branch", Python: formatFrames, Use: UseBranch,
		Dependency: DepTrue, Category: CatControlFlow, Confidence: 0.85, Subject: "this f-string or format",
		Fix: "{site} formats a 0-d CUDA tensor into text that the program then tests: the host needs the value. " +
			"Decide on the GPU (`torch.where`) and format only what is shown, or check every N steps."},
	{Name: "formatted value sizes a tensor", Python: formatFrames, Use: UseShape,
		Dependency: DepTrue, Category: CatDynamicShape, Confidence: 0.85, Subject: "this f-string or format",
		Fix: "{site} formats a 0-d CUDA tensor into text that ends up as a size: the host needs the value. " +
			"Use a fixed upper bound and mask, or compute the size less often."},
	{Name: "formatting a 0-d tensor (frames)", Python: formatFrames,
		Dependency: DepUnknown, Category: CatUnknown, Subject: "this f-string or format",
		Fix: "{site} formats a 0-d CUDA tensor (`f\"{t:.4f}\"`, `format(t)`): torch reads it back with `.item()`. If the text is " +
			"only shown, format a value kept on the GPU once every N steps; if the program parses or tests it, decide on the GPU " +
			"or check less often. (The program's line, once its file is found, says which.)"},
	{Name: "CUDA graph capture set-up (synchronize)", Python: []string{"torch/cuda/graphs.py"}, Pattern: Pattern{Call: trace.CallContextSync},
		Dependency: DepFalse, Category: CatExplicitSync, Confidence: 0.85, Subject: "`torch.cuda.graph()`",
		Fix: "{site} synchronizes once before capturing a CUDA graph: harmless if the capture runs once; keep captures out of the loop."},
	{Name: "CUDA graph capture set-up (empty_cache)", Python: []string{"torch/cuda/graphs.py"}, Pattern: Pattern{Call: trace.CallFree},
		Dependency: DepFalse, Category: CatMemory, Confidence: 0.85, Subject: "`torch.cuda.graph()`",
		Fix: "{site} empties the allocator cache (cudaFree) once before capturing a CUDA graph: harmless if the capture runs once; keep captures out of the loop."},
	{Name: "profiler synchronize (emit_nvtx)", Python: []string{"torch/autograd/profiler.py"},
		Dependency: DepFalse, Category: CatExplicitSync, Confidence: 0.8, Subject: "this sync",
		Fix: "{site} is the profiler's own synchronize (nsys --pytorch=autograd-nvtx enters emit_nvtx): not part of the program, nothing to change."},

	// A library reading a value only to show it: a log record formatted
	// (the standard library's logging), a progress bar's postfix,
	// Lightning's progress bars and logger connector, TensorBoard's
	// writer. The value read stays inside the library's formatting.
	{Name: "read by a library to display it", Python: displayFrames, Pattern: Pattern{Copy: trace.CopyDtoH},
		Dependency: DepFalse, Category: CatLogging, Confidence: 0.8, Subject: "the library's display code",
		Fix: "the library reads the value back only to show or log it (a log record, a progress bar, a metrics logger). " +
			"Log less often (Lightning: `log_every_n_steps`, `self.log(..., prog_bar=False)` for per-step values; " +
			"a progress bar: update its postfix every N steps), or log values kept on the GPU and read them together."},

	// torch's own code that reads a GPU value to decide what to do next
	{Name: "GradScaler's inf check", Python: []string{"torch/amp/grad_scaler.py:_maybe_opt_step", "torch/cuda/amp/grad_scaler.py:_maybe_opt_step"},
		GPU: readsInfCheck, GPUDoc: "a read of at most 8 bytes right after GradScaler's unscale kernel (`_amp_foreach_non_finite_check_and_unscale_`)",
		Dependency: DepTrue, Category: CatControlFlow, Confidence: 0.85, Subject: "`scaler.step(optimizer)`",
		Fix: "{site}: GradScaler reads whether the gradients hold inf/NaN to decide whether to skip `optimizer.step()` — one small read a step, inherent to " +
			"dynamic loss scaling. Train in bf16 autocast without a scaler where the GPU supports it, or keep it."},
	{Name: "ReduceLROnPlateau reads its metric", Python: []string{"torch/optim/lr_scheduler.py:step"}, Pattern: Pattern{Copy: trace.CopyDtoH, MaxBytes: maxScalarBytes},
		Dependency: DepTrue, Category: CatControlFlow, Confidence: 0.8, Subject: "`scheduler.step(metric)`",
		Fix: "{site} converts the metric to a Python float (`float(metrics)`) to compare it with the best so far. Step the scheduler once an epoch, " +
			"not every iteration, or pass a value already on the host."},
	{Name: "clip_grad_norm_ checks for non-finite norms", Python: []string{"torch/nn/utils/clip_grad.py"}, Pattern: Pattern{Copy: trace.CopyDtoH, MaxBytes: maxScalarBytes},
		Dependency: DepTrue, Category: CatControlFlow, Confidence: 0.8, Subject: "`clip_grad_norm_(..., error_if_nonfinite=True)`",
		Fix: "{site} reads whether the total norm is finite to raise an error (`error_if_nonfinite=True`). Leave it False in the loop " +
			"(clipping then needs no sync) and check `torch.isfinite(norm)` every N steps."},

	// --- the program's own line (Python frames + --source-root) ------------
	{Name: "scalar read decides a branch", Native: scalarReads, Use: UseBranch,
		Dependency: DepTrue, Category: CatControlFlow, Confidence: 0.9, Subject: "this line",
		Fix: "{site} needs the value on the host to choose a branch. Decide on the GPU instead (`torch.where(cond, a, b)`, masking), " +
			"or check only every N steps."},
	{Name: "scalar read sizes a tensor", Native: append([]string{"THPVariable_tolist"}, scalarReads...), Use: UseShape,
		Dependency: DepTrue, Category: CatDynamicShape, Confidence: 0.85, Subject: "this line",
		Fix: "{site} needs the value on the host as a size (a tensor's shape, a slice, a loop's range, split sizes). " +
			"Use a fixed upper bound and mask, or compute the size less often."},
	{Name: "scalar read is logged", Native: scalarReads, Use: UseLog,
		Dependency: DepFalse, Category: CatLogging, Confidence: 0.85, Subject: "this line",
		Fix: "{site} reads a value only to log or accumulate it. Keep it on the GPU (`vals.append(t.detach())`, `total += t.detach()`) " +
			"and read once every N steps (`torch.stack(vals).tolist()`)."},

	{Name: ruleScalarReadAfterLoop, Native: scalarReads, Use: UseLater,
		Dependency: DepFalse, Category: CatLogging, Confidence: 0.8, Subject: "this line",
		Fix: "{site} reads a value into a container that the program reads only once the loop that fills it is over. Keep the values " +
			"on the GPU (`vals.append(t.detach())`) and read them together after the loop (`torch.stack(vals).tolist()`): one wait " +
			"instead of one per step."},
	{Name: "copy to the host is tested in its loop", Native: hostCopies, Use: UseBranch, Pattern: Pattern{Copy: trace.CopyDtoH},
		Dependency: DepTrue, Category: CatControlFlow, Confidence: 0.8, Subject: "this line",
		Fix: "{site} copies data into a container that the same loop tests before it goes on: the host needs it to choose a branch. " +
			"Test on the GPU instead (keep the values there, `torch.where`, masking) and read back only the decision, or test every N steps."},
	copyKeptRule(ruleCopyReadAfterLoop, UseLater,
		"{site} copies data into a container that the program reads only once the loop that fills it is over: the data is "+
			"needed, the wait here is not. Copy into pinned buffers with `non_blocking=True` (or keep the tensors on the GPU and copy "+
			"them together with `torch.cat(kept).cpu()`), and synchronize once, after the loop, before the first read."),
	copyKeptRule(ruleCopyOnlyKept, UseLog,
		"{site} copies data the program only stores or logs: nothing reads it before the loop goes on. Keep the tensors on the GPU "+
			"and copy them together once (`torch.cat(kept).cpu()` after the loop), or copy into a pinned buffer with `non_blocking=True` "+
			"and synchronize on an event before the data is read."),

	// --- aten ops and the ops just before (--pytorch=autograd-nvtx) -------
	// Tensor.__format__ reads self.detach().item(); so does a program
	// that detaches a value and reads it to test it (held-out round 6:
	// `"%.3f" % loss.detach()` compared with the last line, `t.detach().item()`
	// sizing a slice). The ops say a 0-d tensor was read, not what for.
	{Name: "formatting a 0-d tensor", When: formatsScalar, WhenDoc: "aten::item right after aten::detach (Tensor.__format__ does self.detach().item(), and so may the program)",
		Dependency: DepUnknown, Category: CatUnknown, Confidence: 0, Subject: "this f-string, print or read",
		Fix: "{site} reads a 0-d CUDA tensor (`f\"{t:.4f}\"` and `\"%.3f\" % t` call `t.detach().item()`, and so may the program). " +
			"If the value is only shown, log a value kept on the GPU once every N steps; if it decides what the program does next, decide on the GPU or check less often."},
	{Name: "tensor printing (aten ops)", Printing: true, When: printingOpens, WhenDoc: "aten::masked_select after aten::isfinite, aten::ne and aten::__and__ (torch/_tensor_str.py's _Formatter)",
		Dependency: DepFalse, Category: CatLogging, Confidence: 0.7, Subject: "this sync",
		Fix: "{site} is torch printing a CUDA tensor (`print(t)`, `str(t)`): it reads the tensor back with several syncs. " +
			"Keep the value on the GPU and print once every N steps."},
	{Name: "tensor printing continues", Printing: true, When: printingContinues, WhenDoc: "the thread's previous sync was tensor printing and only printer ops, all without `seq` (torch prints under no_grad), ran since",
		Dependency: DepFalse, Category: CatLogging, Confidence: 0.5, Subject: "this sync",
		Fix: "{site} looks like the rest of a tensor print (comparisons and .item() of torch/_tensor_str.py). Print less often, from values kept on the GPU."},

	// --- operations, named by aten ranges or native frames -----------------
	{Name: "masked_select", ATen: []string{"aten::masked_select"}, Native: []string{"masked_select_cuda", "masked_select"},
		Dependency: DepTrue, Category: CatDynamicShape, Confidence: 0.9, Subject: "`masked_select`",
		Fix: "{site} sizes its output from the mask, so the host waits for the count. Keep the shape fixed: `torch.where(mask, x, 0)` " +
			"(and reduce with the mask), or `torch.nonzero_static(mask, size=K)` when a bound is known."},
	// An assignment through a boolean mask keeps x's shape: torch counts
	// the mask (nonzero) only to turn it into indices, which
	// masked_fill_/torch.where do without. Its count is a read of at most
	// 8 bytes; a host-to-device copy under the same frames is an index
	// built on the CPU (below).
	{Name: "boolean-mask assignment", ATen: []string{"aten::index_put_", "aten::_index_put_impl_"}, Native: []string{"THPVariable_setitem", "index_put"},
		Pattern:    Pattern{Copy: trace.CopyDtoH, MaxBytes: maxScalarBytes},
		Dependency: DepFalse, Category: CatDynamicShape, Confidence: 0.8, Subject: "`x[mask] = v`",
		Fix: "{site} assigns through a boolean mask: torch counts the mask on the host only to build indices, though x keeps its shape. " +
			"Use `x.masked_fill_(mask, v)` or `x = torch.where(mask, v, x)`: no sync."},
	{Name: "boolean-mask indexing", ATen: []string{"aten::index"}, Native: []string{"THPVariable_getitem", "index_Tensor"},
		Pattern:    Pattern{Copy: trace.CopyDtoH, MaxBytes: maxScalarBytes},
		Dependency: DepTrue, Category: CatDynamicShape, Confidence: 0.9, Subject: "`x[mask]`",
		Fix: "{site} indexes with a boolean mask: the result's size depends on the mask, so the host waits for the count. " +
			"Use `torch.where(mask, x, 0)` / `x * mask` for reads and `x.masked_fill_(mask, v)` / `torch.where` for writes."},
	{Name: "unique", Python: []string{"torch/functional.py:_unique_impl", "torch/functional.py:_consecutive_return_output"}, ATen: []string{"aten::_unique2", "aten::_unique", "aten::unique_dim", "aten::unique_consecutive"}, Native: []string{"_unique2_cuda", "unique_cuda", "_unique2", "unique_dim", "unique_consecutive"},
		Dependency: DepTrue, Category: CatDynamicShape, Confidence: 0.9, Subject: "`torch.unique`",
		Fix: "{site}: the number of unique values decides the output size, so the host waits for it. With a known value range use " +
			"`torch.bincount(x, minlength=K)` or a fixed-size one-hot; otherwise move it out of the hot loop."},
	{Name: "repeat_interleave", ATen: []string{"aten::repeat_interleave"}, Native: []string{"repeat_interleave"},
		Dependency: DepTrue, Category: CatDynamicShape, Confidence: 0.9, Subject: "`repeat_interleave`",
		Fix: "{site} sums the repeats on the GPU to size its output: pass `output_size=` when the total is known."},
	{Name: "nonzero", ATen: []string{"aten::nonzero", "aten::argwhere"}, Native: []string{"nonzero_cuda", "THPVariable_nonzero", "argwhere"},
		Dependency: DepTrue, Category: CatDynamicShape, Confidence: 0.9, Subject: "`nonzero`",
		Fix: "{site} sizes its output from GPU data, so the host waits for the count. Use `torch.nonzero_static(x, size=K)` (fixed size, padded) " +
			"or avoid indices with `torch.where(mask, a, b)`."},
	{Name: "truth value of a tensor", ATen: []string{"aten::is_nonzero"}, Native: []string{"at::native::is_nonzero", "THPVariable_bool", "is_nonzero"},
		Dependency: DepTrue, Category: CatControlFlow, Confidence: 0.85, Subject: "`if t:` / `if t.any():`",
		Fix: "{site} reads a GPU bool for Python control flow. Decide on the GPU instead (`torch.where(cond, a, b)`), or check only every N steps."},
	{Name: "equal / allclose", ATen: []string{"aten::equal", "aten::allclose"}, Native: []string{"cuda_equal", "at::native::equal", "allclose"},
		Dependency: DepTrue, Category: CatControlFlow, Confidence: 0.8, Subject: "`torch.equal` / `allclose`",
		Fix: "{site} returns a Python bool computed on the GPU. Keep the comparison as a tensor (`(a == b).all()`) and branch on it rarely."},
	{Name: "tolist", Native: []string{"THPVariable_tolist", "tensor_to_list"},
		Dependency: DepUnknown, Category: CatDeviceToHost, Confidence: 0, Subject: "`.tolist()`",
		Fix: "{site} copies into pageable memory and waits. Whether the host needs the list at once decides: sizes or a branch taken from it " +
			"(`torch.split(x, counts.tolist())`) do; a list only logged or stored does not — read it once for many steps " +
			"(`torch.stack(vals).tolist()` every N steps), or copy into a pinned buffer with `non_blocking=True` and read it after an event."},
	// --- the GPU ops around a read: what computed it, what used it --------
	{Name: "truth value of a tensor (GPU ops)", GPU: readsTruthValue, GPUDoc: "a 1-byte read right after a bool reduction (`.all()`/`.any()`) or a comparison kernel, not in float64",
		Pattern: Pattern{Copy: trace.CopyDtoH, MaxBytes: maxScalarBytes}, UseGuessed: true,
		Dependency: DepTrue, Category: CatControlFlow, Confidence: 0.6, Subject: "this bool read",
		Fix: "{site} reads a GPU bool for Python control flow (`if t.any():`, `while not done.all():`, `assert`, a comparison of tensors). " +
			"Decide on the GPU instead (`torch.where(cond, a, b)`), or check only every N steps."},
	{Name: "boolean-mask assignment (GPU ops)", GPU: readsMaskCountForAssignment, GPUDoc: "a mask count (CUB reduce) read, then an indexed assignment (`index_put`) on the stream",
		Pattern:    Pattern{Copy: trace.CopyDtoH, MaxBytes: maxScalarBytes},
		Dependency: DepFalse, Category: CatDynamicShape, Confidence: 0.5, Subject: "this mask count",
		Fix: "{site} counts a boolean mask only to assign through it (`x[mask] = v`): x keeps its shape. " +
			"Use `x.masked_fill_(mask, v)` or `x = torch.where(mask, v, x)`: no sync."},
	{Name: "output size read back (GPU ops)", GPU: readsOutputSize, GPUDoc: "a read right after a mask count followed by CUB compaction (nonzero, masked_select, `x[mask]`), after a CUB select (unique) or after a CUB scan (repeat_interleave)",
		Pattern:    Pattern{Copy: trace.CopyDtoH, MaxBytes: maxScalarBytes},
		Dependency: DepTrue, Category: CatDynamicShape, Confidence: 0.6, Subject: "this count",
		Fix: "{site} reads the size of an output computed on the GPU (nonzero, masked_select, `x[mask]`, unique, repeat_interleave). " +
			"Keep shapes fixed: `torch.where(mask, x, 0)`, `torch.nonzero_static(x, size=K)`, `repeat_interleave(..., output_size=N)`, " +
			"`torch.bincount(x, minlength=K)`."},
	{Name: "scalar read (use unknown)", ATen: []string{"aten::item", "aten::_local_scalar_dense"}, Native: []string{"THPVariable_item", "_local_scalar_dense"},
		Dependency: DepUnknown, Category: CatUnknown, Confidence: 0, Subject: "this `.item()`",
		Fix: "{site} reads a GPU scalar into Python. If it is only logged, keep it on the GPU and read every N steps; if it decides a branch, " +
			"decide on the GPU (`torch.where`) or check less often. (With Python backtraces, the program's line decides which once its file is found.)"},
	{Name: "tensor from Python data", Native: []string{"THPVariable_tensor", "THPVariable_as_tensor", "internal_new_from_data", "tensor_ctor"}, Pattern: Pattern{Copy: trace.CopyHtoD},
		Dependency: DepFalse, Category: CatHostToDevice, Confidence: 0.9, Subject: "`torch.tensor(data, device='cuda')`",
		Fix: "{site} builds the tensor in pageable memory and copies it synchronously. Build it on the CPU, pin it and copy asynchronously: " +
			"`torch.tensor(data).pin_memory().to('cuda', non_blocking=True)`, or create it on the GPU."},
	{Name: "copy to the GPU from pageable memory", ATen: []string{"aten::to", "aten::_to_copy", "aten::copy_"}, Native: []string{"THPVariable_to", "THPVariable_cuda", "_to_copy", "copy_"},
		Pattern:    Pattern{Copy: trace.CopyHtoD, Host: Pageable},
		Dependency: DepFalse, Category: CatHostToDevice, Confidence: 0.85, Subject: "`.to('cuda')`",
		Fix: "{site} copies from pageable memory, which waits. Pin the source once (`t.pin_memory()`, `DataLoader(pin_memory=True)`) " +
			"and use `.to('cuda', non_blocking=True)`."},
	{Name: "copy to the host", ATen: []string{"aten::to", "aten::_to_copy", "aten::copy_"}, Native: []string{"THPVariable_cpu", "THPVariable_numpy", "THPVariable_to", "_to_copy", "copy_"},
		Pattern:    Pattern{Copy: trace.CopyDtoH},
		Dependency: DepUnknown, Category: CatDeviceToHost, Confidence: 0, Subject: "`.cpu()`",
		Fix: "{site} waits for the GPU to finish and copy. The host may need the data at once (a result it uses); if not, copy into a pinned buffer with " +
			"`non_blocking=True` and wait on an event later, or gather several results and copy once."},
	{Name: "torch.cuda.synchronize()", Python: []string{"torch/cuda/__init__.py:synchronize"}, Native: []string{"device_synchronize", "THCPModule_cudaSynchronize"}, Pattern: Pattern{Call: trace.CallContextSync},
		Dependency: DepFalse, Category: CatExplicitSync, Confidence: 0.8, Subject: "`torch.cuda.synchronize()`",
		Fix: "{site} waits for every stream of the device. Remove it from the loop; order streams with `wait_stream`/`wait_event`; " +
			"to time GPU work, record `torch.cuda.Event(enable_timing=True)` pairs and read them once at the end."},
	{Name: "Stream.synchronize()", Python: []string{"torch/cuda/streams.py:synchronize"}, Native: []string{"CUDAStream::synchronize", "THCPStream_synchronize"}, Pattern: Pattern{Call: trace.CallStreamSync, Alone: true},
		Dependency: DepFalse, Category: CatStreamSync, Confidence: 0.8, Subject: "`stream.synchronize()`",
		Fix: "{site} blocks the host until the stream drains. For GPU-side ordering use `torch.cuda.current_stream().wait_stream(s)`; " +
			"keep host waits for results the host really reads."},
	{Name: "Event.synchronize()", Python: []string{"torch/cuda/streams.py:synchronize"}, Native: []string{"THCPEvent_synchronize", "CUDAEvent::synchronize"}, Pattern: Pattern{Call: trace.CallEventSync},
		Dependency: DepFalse, Category: CatEventSync, Confidence: 0.75, Subject: "`event.synchronize()`",
		Fix: "{site} blocks the host on an event. For GPU-side ordering use `stream.wait_event(ev)`; for timing, read " +
			"`elapsed_time` once after the loop instead of every step."},
	{Name: "torch.cuda.empty_cache()", Python: []string{"torch/cuda/memory.py:empty_cache"}, Native: []string{"emptyCache", "THCPModule_emptyCache"},
		Dependency: DepFalse, Category: CatMemory, Confidence: 0.9, Subject: "`torch.cuda.empty_cache()`",
		Fix: "{site} returns cached blocks with cudaFree, a device-wide sync, and the next allocations pay cudaMalloc again. Remove it from the loop."},
	{Name: "allocator frees its cache to retry", Native: []string{"release_cached_blocks", "garbage_collect_cached_blocks"}, Pattern: Pattern{Call: trace.CallFree},
		Dependency: DepFalse, Category: CatMemory, Confidence: 0.8, Subject: "this cudaFree",
		Fix: "{site} comes from the caching allocator: an allocation did not fit, so it freed its cache (cudaFree syncs the device) and retried. " +
			"Lower peak memory, reuse buffers, or set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`."},

	// --- the call pattern alone ------------------------------------------
	{Name: "device-wide synchronize", Pattern: Pattern{Call: trace.CallContextSync},
		Dependency: DepFalse, Category: CatExplicitSync, Confidence: 0.6, Subject: "this device synchronize",
		Fix: "{site} waits for every stream of the device. Unless it times GPU work or guards a host read, remove it; order streams " +
			"with `wait_stream`/`wait_event` and time with CUDA events."},
	{Name: "event synchronize", Pattern: Pattern{Call: trace.CallEventSync},
		Dependency: DepFalse, Category: CatEventSync, Confidence: 0.6, Subject: "this event synchronize",
		Fix: "{site} blocks the host on an event. For GPU-side ordering use `cudaStreamWaitEvent` (`stream.wait_event`); for timing, read events once at the end."},
	{Name: "stream synchronize", Pattern: Pattern{Call: trace.CallStreamSync, Alone: true},
		Dependency: DepFalse, Category: CatStreamSync, Confidence: 0.5, Subject: "this stream synchronize",
		Fix: "{site} blocks the host until the stream drains. If the host reads nothing produced there, order streams on the GPU " +
			"(`cudaStreamWaitEvent`) instead."},
	{Name: "free (implicit device sync)", Pattern: Pattern{Call: trace.CallFree},
		Dependency: DepFalse, Category: CatMemory, Confidence: 0.7, Subject: "this free",
		Fix: "{site} waits for the whole device (cudaFree). Allocate once and reuse, or use a caching/stream-ordered allocator (`cudaFreeAsync`)."},
	{Name: "copy from pageable memory to the GPU", Pattern: Pattern{Copy: trace.CopyHtoD, Host: Pageable},
		Dependency: DepFalse, Category: CatHostToDevice, Confidence: 0.75, Subject: "this host-to-device copy",
		Fix: "{site} copies from pageable memory, which waits. Copy from pinned memory with `non_blocking=True` (`cudaMemcpyAsync` from `cudaHostAlloc` memory)."},
	{Name: "scalar read (call pattern)", Pattern: Pattern{Copy: trace.CopyDtoH, MaxBytes: maxScalarBytes},
		Dependency: DepUnknown, Category: CatUnknown, Confidence: 0, Subject: "this copy",
		Fix: "{site} reads at most 8 bytes back: a `.item()`, `bool(t)`/`if t.any():`, or the count of `nonzero`/`x[mask]`/`unique`. " +
			"Profile with --python-backtrace=cuda (or --pytorch=autograd-nvtx) to tell which."},
	{Name: "copy from the GPU to pageable memory", Pattern: Pattern{Copy: trace.CopyDtoH, Host: Pageable, MinBytes: firstNonScalarSize},
		Dependency: DepUnknown, Category: CatDeviceToHost, Confidence: 0, Subject: "this device-to-host copy",
		Fix: "{site} copies into pageable memory and waits. If the data is not needed at once, copy into pinned memory with " +
			"`non_blocking=True` and wait on an event later, or gather several results and copy once."},
	{Name: "blocking copy from the GPU to pinned memory", Pattern: Pattern{Copy: trace.CopyDtoH, Host: Pinned, MinBytes: firstNonScalarSize},
		Dependency: DepUnknown, Category: CatDeviceToHost, Confidence: 0, Subject: "this device-to-host copy",
		Fix: "{site} copies into pinned memory and then waits for the stream. Use `non_blocking=True` and wait on an event only when the host reads the data."},
}

// Names of the rules other code asks about.
const (
	ruleCopyOnlyKept        = "copy to the host is only kept"
	ruleCopyReadAfterLoop   = "copy to the host is read after the loop"
	ruleScalarReadAfterLoop = "scalar read is kept until after the loop"
)
