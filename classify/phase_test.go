package classify

import (
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// TestOneOffLoads: a copy to the device before its process's first kernel
// is set-up only when no later copy repeats its size — a loop's first
// copy comes before the first kernel too.
func TestOneOffLoads(t *testing.T) {
	const pid = trace.GlobalPid(9 << 24)
	copyAt := func(start, bytes int64) trace.Sync {
		s := trace.Sync{GlobalPid: pid, Start: start, End: start + 10,
			Copy: &trace.Copy{Direction: trace.CopyHtoD, Bytes: bytes, Device: 0}}
		s.Gap.IdleBeforeNs, s.Waited.Ops = 1, 1 // not before all GPU work
		return s
	}
	for _, tc := range []struct {
		name   string
		syncs  []trace.Sync
		kernel bool   // the process has a first kernel at 1000
		setup  []bool // per sync
	}{
		{"inputs loaded once, then steps", []trace.Sync{copyAt(100, 4<<20), copyAt(200, 4<<20), copyAt(2000, 512)}, true, []bool{true, true, false}},
		{"a loop whose first copy precedes the first kernel", []trace.Sync{copyAt(100, 4096), copyAt(2000, 4096), copyAt(3000, 4096)}, true, []bool{false, false, false}},
		{"no kernel at all: nothing tells set-up apart", []trace.Sync{copyAt(100, 4<<20)}, false, []bool{false}},
		{"after the first kernel", []trace.Sync{copyAt(1500, 4<<20)}, true, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace.Trace{Syncs: tc.syncs, Evidence: trace.Evidence{GPUActivity: true}}
			if tc.kernel {
				tr.FirstKernel = map[trace.ProcessDevice]int64{{Pid: pid, Device: 0}: 1000}
			}
			p := newPhaser(tr)
			for i := range tr.Syncs {
				got, why := p.phase(&tr.Syncs[i])
				if (got == PhaseSetup) != tc.setup[i] {
					t.Errorf("sync %d: phase %q (%s), want set-up %v", i, got, why, tc.setup[i])
				}
			}
		})
	}
}
