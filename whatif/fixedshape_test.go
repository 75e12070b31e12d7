package whatif

import (
	"slices"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// TestClaimFixedShapes builds one thread's calls as PyTorch issues two
// nonzero calls back to back (passes, the count copy and the sync, the
// passes after) with a foreign thread's call in between, and checks what
// each read's fixed-shape rewrite removes.
func TestClaimFixedShapes(t *testing.T) {
	type call struct {
		role ShapeRole
		ns   int64
		sync int32 // the read it belongs to (-1: none)
		tid  trace.GlobalTid
	}
	const main, other = trace.GlobalTid(1), trace.GlobalTid(2)
	calls := []call{
		{ShapeIndex, 2_000, -1, main}, // 0 a gather that made the input: ends the op before a read
		{ShapeNeutral, 0, -1, main},   // 1 cuKernelGetName
		{ShapePass, 1_900, -1, main},  // 2 DeviceReduceKernel
		{ShapeOther, 0, -1, other},    // 3 another thread's call
		{ShapePass, 1_300, -1, main},  // 4 DeviceReduceSingleTileKernel
		{ShapeOther, 1_400, 0, main},  // 5 count copy (read 0)
		{ShapeOther, 0, 0, main},      // 6 stream sync (read 0)
		{ShapeNeutral, 0, -1, main},   // 7
		{ShapePass, 1_000, -1, main},  // 8 DeviceCompactInitKernel
		{ShapePass, 5_700, -1, main},  // 9 DeviceSelectSweepKernel
		{ShapePass, 1_800, -1, main},  // 10 the second nonzero's DeviceReduceKernel
		{ShapeOther, 1_400, 1, main},  // 11 count copy (read 1)
		{ShapeOther, 0, 1, main},      // 12 stream sync (read 1)
		{ShapeNeutral, 0, -1, main},   // 13
		{ShapeIndex, 4_700, -1, main}, // 14 the gather that applies the indices: the op's
		{ShapeOther, 5_000, -1, main}, // 15 the sum of what it gathered: ends the op
	}
	h := NewHost(len(calls), 2)
	for i, c := range calls {
		h.Add(c.tid, int64(i*1000), int64(i*1000+500))
		if c.sync >= 0 {
			h.ClaimSyncCall(c.sync, int32(i))
		}
	}
	role := func(ci int32) ShapeRole { return calls[ci].role }
	opNs := func(ci int32) int64 { return calls[ci].ns }
	found := h.ClaimFixedShapes([]int32{0, 1}, role, opNs)
	if !slices.Equal(found, []bool{true, true}) {
		t.Fatalf("found %v, want both reads' ops", found)
	}
	// Read 0: its passes before (2, 4; the neutral 1 at the run's far end
	// trimmed; another thread's call 3 skipped), 2 the longest, given back
	// as the fixed-shape op's pass; nothing after: the passes between the
	// two reads (7–10) go to the later one, whose count passes come before
	// it (the earlier op's output passes are not told apart).
	if want := []int32{4, 5, 6}; !slices.Equal(h.SyncCalls[0], want) {
		t.Errorf("read 0 removes %v, want %v", h.SyncCalls[0], want)
	}
	// Read 1: the passes before it (8, 9, 10; the neutral 7 at the far
	// end trimmed) and after it the gather that applies its indices (13,
	// 14), up to the sum; 9 the longest, given back.
	if want := []int32{8, 10, 11, 12, 13, 14}; !slices.Equal(h.SyncCalls[1], want) {
		t.Errorf("read 1 removes %v, want %v", h.SyncCalls[1], want)
	}
	for ci, c := range h.Calls {
		first := ci == 4 || ci == 8
		if c.SyncFirst != first {
			t.Errorf("call %d: SyncFirst %v", ci, c.SyncFirst)
		}
	}
	for _, ci := range []int{0, 1, 2, 3, 7, 9, 15} {
		if h.Calls[ci].Sync != noIndex {
			t.Errorf("call %d claimed by read %d", ci, h.Calls[ci].Sync)
		}
	}

	// A read with no pass before it (a plain .item()) claims nothing.
	roles := []ShapeRole{ShapeOther, ShapeOther, ShapePass} // a kernel, the read, a pass after
	h2 := NewHost(len(roles), 1)
	for i := range roles {
		h2.Add(main, int64(i*1000), int64(i*1000+500))
	}
	h2.ClaimSyncCall(0, 1)
	if f := h2.ClaimFixedShapes([]int32{0}, func(ci int32) ShapeRole { return roles[ci] }, func(int32) int64 { return 1 }); f[0] || len(h2.SyncCalls[0]) != 1 {
		t.Errorf("a read without passes before it: found %v, calls %v", f, h2.SyncCalls[0])
	}
}

func TestShapeRoleOf(t *testing.T) {
	k := func(name string) *trace.Op { return &trace.Op{Kind: trace.OpKernel, Name: name} }
	for _, tc := range []struct {
		name string
		ops  []*trace.Op
		want ShapeRole
	}{
		{"no op", nil, ShapeNeutral},
		{"a memset", []*trace.Op{{Kind: trace.OpMemset}}, ShapeNeutral},
		{"a radix sort pass", []*trace.Op{k("DeviceRadixSortOnesweepKernel")}, ShapePass},
		{"a select pass and its memset", []*trace.Op{{Kind: trace.OpMemset}, k("DeviceSelectSweepKernel")}, ShapePass},
		{"an elementwise kernel", []*trace.Op{k("vectorized_elementwise_kernel")}, ShapeOther},
		{"x[idx]'s gather", []*trace.Op{k("void at::native::index_elementwise_kernel<128, 4, …>(long, …)")}, ShapeIndex},
		{"index_select's gather and a memset", []*trace.Op{{Kind: trace.OpMemset}, k("void at::native::vectorized_gather_kernel<16, long>(…)")}, ShapeIndex},
		{"a gather launched with an elementwise kernel", []*trace.Op{k("vectorized_gather_kernel"), k("vectorized_elementwise_kernel")}, ShapeOther},
		{"PyTorch's own reduction", []*trace.Op{k("reduce_kernel")}, ShapeOther},
		{"a copy", []*trace.Op{{Kind: trace.OpMemcpy, Name: "memcpy DtoH"}}, ShapeOther},
	} {
		if got := ShapeRoleOf(tc.ops); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
