package report

import (
	"fmt"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/contract"
	"github.com/nsyssync/nsyssync/program"
	"github.com/nsyssync/nsyssync/trace"
	"github.com/nsyssync/nsyssync/whatif"
)

// Kinds of rewrite a site's estimated saving assumes (contract.RewriteJSON).
const (
	RewritePinnedCopy  = "pinned-async-copy"
	RewriteAsyncCopy   = "async-copy"
	RewriteCopyOverlap = "copy-overlap"
	RewriteGPUOrdering = "gpu-side-ordering"
	RewriteKeepOnGPU   = "keep-on-gpu"
	RewriteWaitRemoved = "wait-removed"
	RewriteNotModelled = "wait-removed-only"
	RewriteFixedShape  = "fixed-shape-op"
	RewriteReuseAlloc  = "reuse-allocation"
)

// rewriteWords are the API names a rewrite's text uses: PyTorch's where the
// program uses PyTorch, CUDA's elsewhere.
type rewriteWords struct {
	async, pinned, ordering, fixedShape, onGPU, counted string
}

func (a *Analysis) rewriteWords() rewriteWords {
	if a.Program.Uses(program.PyTorch) {
		return rewriteWords{async: "non_blocking=True", pinned: "pinned memory (pin_memory())", ordering: "wait_stream / wait_event",
			fixedShape: "torch.where, a scatter into a fixed-size table", onGPU: "torch.where, a masked update", counted: " (a masked_select's in a print, say)"}
	}
	return rewriteWords{async: "cudaMemcpyAsync", pinned: "pinned memory (cudaHostAlloc)", ordering: "cudaEventRecord + cudaStreamWaitEvent",
		fixedShape: "an output of fixed size with a mask", onGPU: "a masked update"}
}

// RewriteAssumed says which rewrite site s's estimated saving models: the
// one its fix recommends where the simulator and the replay model it
// (docs/estimator.md, "Rewrite models"), else the deletion of the wait,
// saying what the recommended rewrite would change beyond it. ok is
// false without estimates or for a site no total counts.
func (a *Analysis) RewriteAssumed(s *classify.Site) (contract.RewriteJSON, bool) {
	e, ok := a.siteEstimate(s)
	if !ok || !s.Phase.Counted() || s.HostRead != "" {
		return contract.RewriteJSON{}, false
	}
	w := a.rewriteWords()
	pinned, toDevice, toHost, frees := false, false, false, len(s.Syncs) > 0
	for _, i := range s.Syncs {
		if i < 0 || i >= len(a.Trace.Syncs) {
			continue
		}
		sy := &a.Trace.Syncs[i]
		frees = frees && whatif.IsDeviceFree(sy)
		pinned = pinned || whatif.RewritesToPinned(sy)
		toDevice = toDevice || whatif.CopiesToDevice(sy)
		toHost = toHost || sy.Copy != nil && !sy.Copy.Memset && sy.Copy.Direction == trace.CopyDtoH
	}
	switch {
	case s.NeededCopyBytes > 0:
		return contract.RewriteJSON{Kind: RewriteCopyOverlap, Assumes: "the copy stays (the host uses the data): made asynchronous into a pinned double buffer, the host using each step's data while the GPU runs the next step and its copy"}, true
	case pinned:
		return contract.RewriteJSON{Kind: RewritePinnedCopy, Assumes: "the source in " + w.pinned + " and the copy made with " + w.async + ": the host's staging copy goes, the copy runs at pinned speed (" +
			a.pinnedSpeedText() + ") and later work no longer waits for it on the host"}, true
	case toDevice:
		return contract.RewriteJSON{Kind: RewriteAsyncCopy, Assumes: "the copy made asynchronous (" + w.async + "): it stays on the GPU at its recorded speed"}, true
	case e.Parts.RewriteCostNs > 0:
		return contract.RewriteJSON{Kind: RewriteGPUOrdering, Assumes: "the ordering kept on the GPU (" + w.ordering + ") instead of the host's wait"}, true
	}
	passes := ""
	if e.Parts.FixedShapeSyncs > 0 {
		passes = ", and so do the library passes that counted the value it reads" + w.counted
	}
	if e.Parts.FixedShapeSyncs > 0 && s.Category == classify.CatDynamicShape {
		return contract.RewriteJSON{Kind: RewriteFixedShape, Assumes: "a fixed-shape op (" + w.fixedShape + ") in place of the dynamic-shape one: the count read goes, and so do the op's passes around it (counting, compacting, sorting), one pass kept for the fixed-shape op; the consumer of its output (an indexing) is taken as recorded"}, true
	}
	switch s.Category {
	case classify.CatDynamicShape:
		return contract.RewriteJSON{Kind: RewriteNotModelled, Assumes: "the wait deleted; a fixed-shape rewrite (" + w.fixedShape + ") also drops the op's passes around the count, which the trace does not show here (no library pass before the read), so this saving does not count them"}, true
	case classify.CatControlFlow:
		return contract.RewriteJSON{Kind: RewriteNotModelled, Assumes: "the wait deleted; moving the decision onto the GPU (" + w.onGPU + ") changes the kernels too, which this saving does not model"}, true
	case classify.CatLogging, classify.CatDeviceToHost, classify.CatUnknown:
		if !toHost {
			break
		}
		return contract.RewriteJSON{Kind: RewriteKeepOnGPU, Assumes: "the value kept on the GPU and read once later: the read's copy and wait go" + passes}, true
	}
	if frees {
		return contract.RewriteJSON{Kind: RewriteReuseAlloc, Assumes: "the memory allocated once and reused: each free and its wait go, and so does the device allocation its thread makes next (the next step's cudaMalloc, paired in order); later GPU work still runs in stream order"}, true
	}
	return contract.RewriteJSON{Kind: RewriteWaitRemoved, Assumes: "the wait deleted: later GPU work still runs after the work it waited for, in stream order" + passes}, true
}

// pinnedSpeedText is the pinned copy speed the estimate used, with its
// source.
func (a *Analysis) pinnedSpeedText() string {
	ns, src := a.Estimates.PinnedHtoDNsPerMiB, a.Estimates.PinnedHtoDSource
	if ns <= 0 {
		return "taken at its recorded time: this GPU's pinned copy speed is unknown (no pinned copy in the trace; a calibration's pinned_htod_ns_per_mib sets it)"
	}
	if src == "" || src == "default" {
		src = "the default, measured on an H100 80GB HBM3; a calibration's pinned_htod_ns_per_mib sets another machine's"
	}
	return fmt.Sprintf("%.1f GB/s, %s", float64(1<<20)/float64(ns), src)
}
