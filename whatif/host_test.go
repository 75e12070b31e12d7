package whatif

import (
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// call is a synthetic call: thread (a globalTid of process 1), recorded
// times, whether it launches, and its sync (-1: none).
type call struct {
	tid        trace.GlobalTid
	start, end int64
	launch     bool
	sync       int32
}

const pid1 = trace.GlobalTid(1) << 24 // globalTid = pid<<24 | tid

func build(t testing.TB, calls []call, nsyncs int) *Host {
	t.Helper()
	h := NewHost(len(calls), nsyncs)
	for _, c := range calls {
		i := h.Add(pid1|c.tid, c.start, c.end)
		h.Calls[i].Launch = c.launch
		if c.sync >= 0 && !h.ClaimSyncCall(c.sync, i) {
			t.Fatalf("call %d claimed twice", i)
		}
	}
	return h
}

func TestAddGaps(t *testing.T) {
	h := build(t, []call{
		{1, 0, 10, true, -1},
		{2, 5, 50, true, -1},
		{1, 30, 40, true, -1},
		{1, 35, 45, false, -1}, // overlaps the previous call
		{1, 60, 70, true, -1},
	}, 0)
	if len(h.Threads) != 2 || h.Threads[0].Tid != pid1|1 || h.Threads[1].Pid != (pid1|2).Process() {
		t.Fatalf("threads %+v", h.Threads)
	}
	want := []struct {
		gap    int64
		first  bool
		thread int32
	}{{0, true, 0}, {0, true, 1}, {20, false, 0}, {-5, false, 0}, {15, false, 0}}
	for i, w := range want {
		c := h.Calls[i]
		if c.Gap != w.gap || c.First != w.first || c.Thread != w.thread || c.Sync != -1 || c.Dep != -1 {
			t.Errorf("call %d: %+v, want gap %d first %v thread %d", i, c, w.gap, w.first, w.thread)
		}
	}
}

func TestHostCode(t *testing.T) {
	// One thread launching every 10 µs (gap 10 µs between launches); a
	// sync of two calls with 25 µs before it and 14 µs after it, a sync
	// with 100 µs on each side (clamped to one typical gap), and a sync
	// right after another (no launch between: the second's gap before is
	// measured from the first's last call).
	calls := []call{
		{1, 0, 1_000, true, -1},
		{1, 11_000, 12_000, true, -1},
		{1, 22_000, 23_000, true, -1},
		{1, 33_000, 34_000, true, -1},
		{1, 59_000, 60_000, false, 0}, // 25 µs after the last launch
		{1, 61_000, 62_000, false, 0},
		{1, 76_000, 77_000, true, -1}, // 14 µs after the sync
		{1, 87_000, 88_000, true, -1},
		{1, 188_000, 189_000, false, 1},
		{1, 289_000, 290_000, true, -1},
		{1, 300_000, 301_000, false, 2},
		{1, 330_000, 331_000, false, 3},
		{1, 341_000, 342_000, true, -1},
	}
	h := build(t, calls, 4)
	byTid := map[trace.GlobalTid][]int64{}
	h.LaunchGaps(nil, byTid)
	gaps := byTid[pid1|1]
	if len(gaps) != 4 {
		t.Fatalf("launch gaps %v, want the 4 between launches with no sync between", gaps)
	}
	typical := TypicalGaps(byTid, LowerMiddle)
	if typical[pid1|1] != 10_000 {
		t.Fatalf("typical gap %d, want 10 µs", typical[pid1|1])
	}
	got := h.HostCode(typical)
	want := []Cut{
		{Before: 10_000, After: 4_000},  // 25-10 clamped to 10; 14-10
		{Before: 10_000, After: 10_000}, // 99-10, 99-10: clamped
		{Before: 0, After: 10_000},      // 10-10; 29 µs to the next sync's first call
		{Before: 10_000, After: 0},      // 29-10 clamped; 10-10
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sync %d: cut %+v, want %+v", i, got[i], want[i])
		}
	}
	if c := ShareCut([]int64{1, 9, 5, 3}, []int64{4, 2}, LowerMiddle); c != (Cut{Before: 3, After: 2}) {
		t.Errorf("ShareCut %+v", c)
	}
	if !KeepsHostCode(true, false) || !KeepsHostCode(false, true) || KeepsHostCode(false, false) {
		t.Error("KeepsHostCode: the host code stays when the rewrite orders streams or copies, else goes")
	}
}

func TestLaunchGapsInRegion(t *testing.T) {
	h := build(t, []call{
		{1, 0, 1_000, true, -1},
		{1, 3_000, 4_000, true, -1},
		{1, 9_000, 10_000, true, -1},
		{1, 20_000, 21_000, true, -1},
	}, 0)
	byTid := map[trace.GlobalTid][]int64{}
	h.LaunchGaps([]bool{true, false, true, true}, byTid)
	if g := byTid[pid1|1]; len(g) != 2 || g[0] != 5_000 || g[1] != 10_000 {
		t.Errorf("gaps %v, want those ending in the region: [5000 10000]", g)
	}
	if typ := TypicalGaps(byTid, LowerMiddle); len(typ) != 0 {
		t.Errorf("typical %v from 2 samples, want none", typ)
	}
}

func TestLinkHandOffs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		calls []call
		dep   []int32 // per call
	}{
		{"autograd hand-off both ways", []call{
			{1, 0, 1_000, true, -1},
			{1, 2_000, 3_000, true, -1}, // main hands off, then waits
			{2, 4_000, 5_000, true, -1}, // autograd thread (first call: no hand-off)
			{2, 50_000, 51_000, true, -1},
			{1, 52_000, 53_000, true, -1}, // main resumes after 49 µs: from call 3
			{2, 90_000, 91_000, true, -1}, // autograd resumes after 39 µs: from call 4
		}, []int32{-1, -1, -1, -1, 3, 4}},
		{"the other thread went on working", []call{
			{1, 0, 1_000, true, -1},
			{2, 2_000, 3_000, true, -1},
			{2, 25_000, 26_000, true, -1}, // thread 2 goes on before thread 1 resumes
			{1, 25_500, 26_500, true, -1}, // call 1 ended last in its gap, but thread 2 went on
		}, []int32{-1, -1, -1, -1}},
		{"gap too short", []call{
			{1, 0, 1_000, true, -1},
			{2, 2_000, 3_000, true, -1},
			{1, 19_000, 20_000, true, -1}, // 18 µs idle
		}, []int32{-1, -1, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := build(t, tc.calls, 0)
			h.LinkHandOffs()
			for i, want := range tc.dep {
				c := h.Calls[i]
				if c.Dep != want {
					t.Errorf("call %d: dep %d, want %d", i, c.Dep, want)
				}
				if c.Dep >= 0 && c.Lag != c.Start-h.Calls[c.Dep].End {
					t.Errorf("call %d: lag %d, want %d", i, c.Lag, c.Start-h.Calls[c.Dep].End)
				}
			}
		})
	}
}

func TestFloatCall(t *testing.T) {
	const pid2 = trace.GlobalTid(2) << 24
	h := NewHost(4, 0)
	h.Add(pid1|1, 0, 1_000)
	h.Add(pid2|1, 2_000, 3_000)
	h.Add(pid1|1, 4_000, 5_000)
	h.Add(pid2|1, 6_000, 7_000)
	for _, tc := range []struct {
		name  string
		start int64
		pid   trace.GlobalPid
		want  int32
	}{
		{"before every call", -1, (pid1 | 1).Process(), -1},
		{"at a call's start", 4_000, (pid1 | 1).Process(), 2},
		{"after another process's call", 6_500, (pid1 | 1).Process(), 2},
		{"its own process's call", 6_500, (pid2 | 1).Process(), 3},
		{"no call of its process before it", 1_500, (pid2 | 1).Process(), -1},
	} {
		if got := h.FloatCall(tc.start, tc.pid); got != tc.want {
			t.Errorf("%s: call %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestClaimSyncCall(t *testing.T) {
	h := NewHost(3, 2)
	for i := range 3 {
		h.Add(pid1|1, int64(i)*1_000, int64(i)*1_000+500)
	}
	for _, tc := range []struct {
		sync, call int32
		want       bool
	}{{0, 1, true}, {0, 2, true}, {1, 1, false}, {1, 0, true}} {
		if got := h.ClaimSyncCall(tc.sync, tc.call); got != tc.want {
			t.Errorf("sync %d claims call %d: %v, want %v", tc.sync, tc.call, got, tc.want)
		}
	}
	if h.Calls[1].Sync != 0 || !h.Calls[1].SyncFirst || h.Calls[2].SyncFirst || !h.Calls[0].SyncFirst || h.Calls[0].Sync != 1 {
		t.Errorf("calls %+v", h.Calls)
	}
	if len(h.SyncCalls[0]) != 2 || len(h.SyncCalls[1]) != 1 {
		t.Errorf("sync calls %v: a call claimed twice belongs to the first sync", h.SyncCalls)
	}
}
