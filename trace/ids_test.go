package trace

import "testing"

// TestGlobalIDs checks the conversions against the encodings of
// shared/nsys/NOTES.md: tid in bits 0–23, pid in 24–47, VM id in 48–55,
// and globalPid = globalTid & 0xFFFFFFFFFF000000.
func TestGlobalIDs(t *testing.T) {
	for _, tc := range []struct {
		vm, pid, tid int64
	}{{0, 0, 0}, {0, 4242, 4242}, {0, 4242, 4250}, {3, 0xFFFFFF, 0xFFFFFF}, {0xFF, 1, 0xABCDEF}} {
		g := GlobalTid(tc.vm<<48 | tc.pid<<24 | tc.tid)
		if got := g.Pid(); got != tc.pid {
			t.Errorf("%#x.Pid() = %d, want %d", int64(g), got, tc.pid)
		}
		if got := g.Tid(); got != tc.tid {
			t.Errorf("%#x.Tid() = %d, want %d", int64(g), got, tc.tid)
		}
		want := GlobalPid(uint64(g) & 0xFFFFFFFFFF000000)
		if got := g.Process(); got != want {
			t.Errorf("%#x.Process() = %#x, want %#x", int64(g), int64(got), int64(want))
		}
		if got := g.Process().Pid(); got != tc.pid {
			t.Errorf("%#x.Process().Pid() = %d, want %d", int64(g), got, tc.pid)
		}
	}
	if NoThread.Process() != NoProcess {
		t.Errorf("NoThread.Process() = %d, want NoProcess", NoThread.Process())
	}
}
