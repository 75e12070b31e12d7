package whatif

import "github.com/nsyssync/nsyssync/trace"

// noIndex marks a missing call, sync or thread.
const noIndex = int32(-1)

// Call is one host API call of a region graph.
type Call struct {
	Start, End int64 // recorded
	// Gap is the recorded host time since the thread's previous call
	// ended (the latest end of its earlier calls); 0 for its first.
	Gap    int64
	Thread int32
	First  bool // first call of its thread in the graph
	// Launch: the call launched at least one GPU op (its correlation id);
	// an op with no launch call floating after it does not count. Set by
	// the side that attaches the ops.
	Launch bool
	// Copy: a memcpy or memset call (IsCopyCall, for OverheadKindOf).
	// Alloc: a synchronous device allocation (IsDeviceAllocName, for
	// ClaimReallocs). KernelLaunch: a kernel launch call
	// (IsKernelLaunchName, for LaunchDurations). Set by the side that
	// reads the API names.
	Copy, Alloc, KernelLaunch bool
	// Sync is the graph's index of the sync the call belongs to, -1;
	// SyncFirst marks the sync's first call.
	Sync      int32
	SyncFirst bool
	// Dep is a call of another thread of the process that this one
	// waited for on the host (a hand-off such as PyTorch's autograd
	// thread), Lag after its end; -1 when none (LinkHandOffs).
	Dep int32
	Lag int64
}

// Thread is one host thread of the graph.
type Thread struct {
	Tid trace.GlobalTid
	Pid trace.GlobalPid // its process
}

// Host is the host side of a region graph: the calls in recorded start
// order across threads, the threads, and each sync's calls.
type Host struct {
	Calls   []Call
	Threads []Thread
	// SyncCalls lists, per graph sync, its calls in the order added.
	SyncCalls [][]int32
	threadIdx map[trace.GlobalTid]int32
	lastEnd   []int64
}

// LaunchDurations appends to out the recorded durations of the kernel
// launch calls that launched GPU work and are no sync's, those in the
// region (in[i]; nil: every call). A graph launch is left out: it does
// more than one launch's work.
func (h *Host) LaunchDurations(in []bool, out []int64) []int64 {
	for i := range h.Calls {
		if c := &h.Calls[i]; c.Launch && c.KernelLaunch && c.Sync < 0 && (in == nil || in[i]) {
			out = append(out, c.End-c.Start)
		}
	}
	return out
}

// NewHost returns an empty graph of nsyncs syncs, room made for n calls.
func NewHost(n, nsyncs int) *Host {
	return &Host{Calls: make([]Call, 0, n), SyncCalls: make([][]int32, nsyncs), threadIdx: map[trace.GlobalTid]int32{}}
}

// Add appends a call of thread tid, recorded over [start, end); calls
// come in recorded start order. It returns the call's index.
func (h *Host) Add(tid trace.GlobalTid, start, end int64) int32 {
	c := Call{Start: start, End: end, Sync: noIndex, Dep: noIndex}
	th, ok := h.threadIdx[tid]
	if !ok {
		th = int32(len(h.Threads))
		h.threadIdx[tid] = th
		h.Threads = append(h.Threads, Thread{Tid: tid, Pid: tid.Process()})
		h.lastEnd = append(h.lastEnd, end)
		c.First = true
	} else {
		c.Gap = start - h.lastEnd[th]
		h.lastEnd[th] = max(h.lastEnd[th], end)
	}
	c.Thread = th
	h.Calls = append(h.Calls, c)
	return int32(len(h.Calls) - 1)
}

// ClaimSyncCall makes call ci one of sync s's, unless a sync claimed it
// first (it returns false then: a call belongs to one sync). The first
// call claimed is the sync's first call. (The replay used to give a call
// two syncs claim to the last: on every fixture and shared-corpus export
// no plan changed with the first.)
func (h *Host) ClaimSyncCall(s, ci int32) bool {
	if h.Calls[ci].Sync >= 0 {
		return false
	}
	if len(h.SyncCalls[s]) == 0 {
		h.Calls[ci].SyncFirst = true
	}
	h.SyncCalls[s] = append(h.SyncCalls[s], ci)
	h.Calls[ci].Sync = s
	return true
}
