package whatif

import (
	"slices"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// TestClaimReallocs checks which allocations the frees' rewrite (allocate
// once and reuse) removes: the next allocation of the free's thread, first
// in first out, none of another thread's, none before the free.
func TestClaimReallocs(t *testing.T) {
	type call struct {
		alloc bool
		sync  int32 // the free it belongs to (-1: none)
		tid   trace.GlobalTid
	}
	const main, other = trace.GlobalTid(1), trace.GlobalTid(2)
	cases := []struct {
		name  string
		calls []call
		frees []int32
		want  [][]int32 // per free, its calls after the claim
		found []bool
	}{
		{"a free claims the next step's allocation", []call{
			{true, -1, main}, {false, -1, main}, {false, 0, main}, {false, -1, main}, {true, -1, main}, {false, 1, main}, {true, -1, main},
		}, []int32{0, 1}, [][]int32{{2, 4}, {5, 6}}, []bool{true, true}},
		{"two frees, then two allocations: first in, first out", []call{
			{false, 0, main}, {false, 1, main}, {true, -1, main}, {false, -1, main}, {true, -1, main}, {true, -1, main},
		}, []int32{0, 1}, [][]int32{{0, 2}, {1, 4}}, []bool{true, true}},
		{"another thread's allocation and an earlier one stay", []call{
			{true, -1, main}, {false, 0, main}, {true, -1, other}, {false, -1, main},
		}, []int32{0}, [][]int32{{1}}, []bool{false}},
		{"a sync that is not a free claims nothing", []call{
			{false, 0, main}, {true, -1, main},
		}, nil, [][]int32{{0}}, []bool{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHost(len(tc.calls), len(tc.want))
			for i, c := range tc.calls {
				ci := h.Add(c.tid, int64(i*1000), int64(i*1000+500))
				h.Calls[ci].Alloc = c.alloc
				if c.sync >= 0 {
					h.ClaimSyncCall(c.sync, ci)
				}
			}
			found := h.ClaimReallocs(tc.frees)
			if !slices.Equal(found, tc.found) {
				t.Errorf("found %v, want %v", found, tc.found)
			}
			for s, want := range tc.want {
				if !slices.Equal(h.SyncCalls[s], want) {
					t.Errorf("sync %d removes %v, want %v", s, h.SyncCalls[s], want)
				}
			}
		})
	}
}

func TestIsDeviceAllocName(t *testing.T) {
	for name, want := range map[string]bool{
		"cudaMalloc": true, "cudaMalloc_v3020": true, "cuMemAlloc_v2": true, "cudaMallocManaged": true, "cudaMallocPitch": true,
		"cudaMallocHost": false, "cuMemAllocHost_v2": false, "cudaMallocAsync": false, "cuMemAllocAsync": false,
		"cudaMallocFromPoolAsync": false, "cudaFree": false, "cudaLaunchKernel": false,
	} {
		if got := IsDeviceAllocName(name); got != want {
			t.Errorf("IsDeviceAllocName(%q) = %v, want %v", name, got, want)
		}
	}
}
