package classify

import (
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// Phase is the part of a run a site's syncs belong to. Syncs of set-up,
// tear-down and of the profiler itself are not the program's to remove:
// the estimator leaves them out of every removable total and the CI gate
// does not count them.
type Phase string

// Phases. The empty phase is the program's own work, the repeating part
// every saving is about.
const (
	PhaseSteady   Phase = ""
	PhaseSetup    Phase = "setup"    // context creation, module loading, communicator init
	PhaseTeardown Phase = "teardown" // frees at exit, communicator destroy
	PhaseProfiler Phase = "profiler" // the profiler's own synchronize (emit_nvtx)
)

// Counted reports whether the phase's syncs count in removable totals.
func (p Phase) Counted() bool { return p == PhaseSteady }

// Label names the phase in a sentence ("set-up").
func (p Phase) Label() string {
	switch p {
	case PhaseSetup:
		return "set-up"
	case PhaseTeardown:
		return "tear-down"
	case PhaseProfiler:
		return "profiler"
	}
	return "steady"
}

// phaser says which phase each sync of one trace belongs to (phase).
type phaser struct {
	ev trace.Evidence
	// first: each process's first kernel on each device.
	first map[trace.ProcessDevice]int64
	// later: per process and device, the sizes of the host-to-device
	// copies its syncs make once its first kernel has started.
	later map[trace.ProcessDevice]map[int64]bool
}

func newPhaser(t *trace.Trace) *phaser {
	p := &phaser{ev: t.Evidence, first: t.FirstKernel, later: map[trace.ProcessDevice]map[int64]bool{}}
	for i := range t.Syncs {
		s := &t.Syncs[i]
		c := s.Copy
		if c == nil || c.Memset || c.Direction != trace.CopyHtoD {
			continue
		}
		key := trace.ProcessDevice{Pid: s.GlobalPid, Device: c.Device}
		if first, ok := p.first[key]; ok && s.Start >= first {
			if p.later[key] == nil {
				p.later[key] = map[int64]bool{}
			}
			p.later[key][c.Bytes] = true
		}
	}
	return p
}

// oneOffLoad reports whether s copies data to the device before its
// process's first kernel there, in a size no copy after that kernel
// repeats: the program loading its inputs or model once (a loop's first
// copy comes before the first kernel too, but later iterations copy the
// same size again). A process without a kernel on the device has no
// first kernel to tell set-up from its work, and gets none.
func (p *phaser) oneOffLoad(s *trace.Sync) bool {
	c := s.Copy
	if c == nil || c.Memset || c.Direction != trace.CopyHtoD {
		return false
	}
	key := trace.ProcessDevice{Pid: s.GlobalPid, Device: c.Device}
	first, ok := p.first[key]
	return ok && s.End <= first && !p.later[key][c.Bytes]
}

// phase says which phase sync s belongs to, and why, from the trace
// alone: the names around it (backtrace frames, NVTX ranges), and its
// place relative to its process's GPU work on its device (the GPU gap
// around its return, which Load measured; its first kernel).
func (p *phaser) phase(s *trace.Sync) (Phase, string) {
	ev := p.ev
	if name, ok := profilerFrame(s); ok {
		return PhaseProfiler, "the profiler's own synchronize (" + name + "), not the program's"
	}
	if name, ok := namedAround(s, ncclInit); ok {
		return PhaseSetup, "NCCL communicator set-up (" + name + "): once per communicator, not per step"
	}
	if name, ok := namedAround(s, ncclDestroy); ok {
		return PhaseTeardown, "NCCL communicator tear-down (" + name + "): once, at the end"
	}
	if !ev.GPUActivity {
		return PhaseSteady, ""
	}
	deviceSync := isDeviceSync(s)
	if beforeFirstGPUWork(s) {
		if ev.AutogradNVTX && deviceSync {
			return PhaseProfiler, "the first device synchronize of an autograd-NVTX capture (nsys enters torch.autograd.profiler.emit_nvtx, " +
				"whose __enter__ synchronizes) before any GPU work: it holds CUDA context creation"
		}
		return PhaseSetup, "before the process's first GPU work on the device: it waits for no kernel, only for CUDA set-up " +
			"(context creation, module loading)"
	}
	if p.oneOffLoad(s) {
		return PhaseSetup, "a copy to the device before the process's first kernel there, in a size no later copy repeats: " +
			"the program loading its inputs or model once, not a step's wait"
	}
	// After the last GPU work, outside every NVTX range of the program: the
	// last iteration of a loop is after the last GPU work too, but inside
	// the program's ranges, and it is the same site as the others.
	// A free there is tear-down even when it waits for the last copy (the
	// last GPU work); a device synchronize only when it waits for nothing
	// (the last step's own synchronize waits for its kernels).
	if afterLastGPUWork(s) && len(s.NVTX()) == 0 {
		switch {
		case s.Reason == trace.ReasonFree:
			return PhaseTeardown, "a free after the process's last GPU work on the device, outside every NVTX range: tear-down at exit"
		case s.Waited.Ops == 0 && ev.AutogradNVTX && deviceSync:
			return PhaseProfiler, "a device synchronize after the last GPU work of an autograd-NVTX capture, outside every range (emit_nvtx's __exit__)"
		case s.Waited.Ops == 0 && deviceSync:
			return PhaseTeardown, "a device synchronize after the process's last GPU work that waits for nothing, outside every NVTX range: " +
				"at exit (module unload, context tear-down)"
		}
	}
	return PhaseSteady, ""
}

// beforeFirstGPUWork reports whether no GPU op of the sync's process had
// run on its device when the sync returned: none running, none ended
// before, none waited for.
func beforeFirstGPUWork(s *trace.Sync) bool {
	return !s.Gap.DeviceBusy && s.Gap.IdleBeforeNs == 0 && s.Waited.Ops == 0
}

// afterLastGPUWork reports whether no GPU op of the sync's process ran on
// its device after the sync returned.
func afterLastGPUWork(s *trace.Sync) bool {
	return !s.Gap.DeviceBusy && s.Gap.IdleAfterNs < 0
}

// isDeviceSync reports whether the sync is a device (context)
// synchronize.
func isDeviceSync(s *trace.Sync) bool {
	for _, c := range s.Calls() {
		if strings.HasPrefix(c.Name, "cudaDeviceSynchronize") || strings.HasPrefix(c.Name, "cuCtxSynchronize") ||
			strings.HasPrefix(c.Name, "cudaThreadSynchronize") {
			return true
		}
	}
	return false
}

var (
	ncclInit    = []string{"ncclCommInitRank", "ncclCommInitAll", "ncclCommInitRankConfig", "ncclCommSplit"}
	ncclDestroy = []string{"ncclCommDestroy", "ncclCommAbort", "ncclCommFinalize"}
)

// namedAround returns the first of names that an enclosing NVTX range, a
// native frame or a Python function of the sync contains.
func namedAround(s *trace.Sync, names []string) (string, bool) {
	has := func(text string) (string, bool) {
		for _, n := range names {
			if strings.Contains(text, n) {
				return n, true
			}
		}
		return "", false
	}
	for _, r := range s.NVTX() {
		if n, ok := has(r.Name); ok {
			return n, true
		}
	}
	for _, f := range s.Native() {
		if n, ok := has(f.Symbol); ok {
			return n, true
		}
	}
	for _, f := range s.Python() {
		if n, ok := has(f.Function); ok {
			return n, true
		}
	}
	return "", false
}

// profilerFrame reports whether a frame or range of the sync is the
// PyTorch profiler's NVTX emitter (torch.autograd.profiler.emit_nvtx), and
// names it.
func profilerFrame(s *trace.Sync) (string, bool) {
	for _, f := range s.Python() {
		if strings.Contains(f.File, "torch/autograd/profiler") || strings.Contains(f.Function, "emit_nvtx") {
			return "torch.autograd.profiler " + shownName(f.Function), true
		}
	}
	for _, f := range s.Native() {
		if strings.Contains(f.Symbol, "emit_nvtx") {
			return shownName(f.Symbol), true
		}
	}
	for _, r := range s.NVTX() {
		if strings.Contains(r.Name, "emit_nvtx") {
			return shownName(r.Name), true
		}
	}
	return "", false
}
