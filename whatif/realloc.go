package whatif

import (
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// The rewrite the report recommends for a synchronizing device free in a
// loop (cudaFree, cuMemFree, and PyTorch's empty_cache() or CuPy's
// free_all_blocks(), which call them) is to allocate once and reuse:
// "Allocate once and reuse, or use a caching/stream-ordered allocator".
// Under it the free goes and so does the allocation that the program
// makes again after it: the next step's cudaMalloc of the buffer (or the
// caching allocator's re-allocation of the segment it handed back), a
// host call of tens to hundreds of microseconds. ClaimReallocs pairs each
// such free with the next device allocation of its thread and removes it
// with the free. An export records no allocation's size without
// --cuda-memory-usage, so the pairing is by order, not by size: the
// frees of a thread are matched first in, first out with the allocations
// that follow them (CuPy's free_all_blocks frees two blocks and the next
// step allocates two). A free with no allocation after it in the region
// (the loop's last, a buffer not allocated again) claims none.

// IsDeviceAllocName reports whether an API name allocates device memory
// synchronously: cudaMalloc, cudaMallocPitch, cudaMallocManaged,
// cudaMalloc3D, cuMemAlloc, cuMemAllocPitch, cuMemAllocManaged; not the
// pinned host allocations (cudaMallocHost, cuMemAllocHost) nor the
// stream-ordered ones (cudaMallocAsync, cudaMallocFromPoolAsync,
// cuMemAllocAsync), which a free's rewrite does not remove.
func IsDeviceAllocName(name string) bool {
	if !strings.HasPrefix(name, "cudaMalloc") && !strings.HasPrefix(name, "cuMemAlloc") {
		return false
	}
	return !strings.Contains(name, "Host") && !strings.Contains(name, "Async")
}

// IsDeviceFree reports whether sync s is a free of device memory
// (cudaFree, cuMemFree): a free of pinned host memory (cudaFreeHost) or
// of an array is not re-allocated by cudaMalloc.
func IsDeviceFree(s *trace.Sync) bool {
	for _, c := range s.Calls() {
		if c.Kind == trace.CallFree && (strings.HasPrefix(c.Name, "cudaFree") || strings.HasPrefix(c.Name, "cuMemFree")) &&
			!strings.Contains(c.Name, "Host") && !strings.Contains(c.Name, "Array") && !strings.Contains(c.Name, "Async") {
			return true
		}
	}
	return false
}

// DeviceFrees lists the syncs of syncs that free device memory.
func DeviceFrees(syncs []trace.Sync) []int32 {
	var out []int32
	for i := range syncs {
		if IsDeviceFree(&syncs[i]) {
			out = append(out, int32(i))
		}
	}
	return out
}

// ClaimReallocs claims for each sync of frees, whose own calls are claimed
// already, the device allocation (Call.Alloc) of its thread that its
// rewrite makes unnecessary: walking each thread's calls in order, a free
// joins its thread's queue at its first call and an unclaimed allocation
// goes to the free at the head of the queue. It reports, by position in
// frees, which frees claimed an allocation.
func (h *Host) ClaimReallocs(frees []int32) []bool {
	found := make([]bool, len(frees))
	if len(frees) == 0 {
		return found
	}
	pos := make(map[int32]int, len(frees)) // sync -> position in frees
	for k, s := range frees {
		if len(h.SyncCalls[s]) > 0 {
			pos[s] = k
		}
	}
	queue := make([][]int32, len(h.Threads)) // per thread, frees waiting for an allocation
	for ci := range h.Calls {
		c := &h.Calls[ci]
		if c.Sync >= 0 {
			if _, ok := pos[c.Sync]; ok && c.SyncFirst {
				queue[c.Thread] = append(queue[c.Thread], c.Sync)
			}
			continue
		}
		if !c.Alloc || len(queue[c.Thread]) == 0 {
			continue
		}
		s := queue[c.Thread][0]
		queue[c.Thread] = queue[c.Thread][1:]
		c.Sync = s
		h.SyncCalls[s] = append(h.SyncCalls[s], int32(ci))
		found[pos[s]] = true
	}
	return found
}
