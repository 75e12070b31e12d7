package whatif

import "testing"

func TestRemovalHostTime(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want int64
	}{
		{"before: host code off the gap", GapBeforeRemoved(30_000, 12_000), 18_000},
		{"before: at most the gap", GapBeforeRemoved(5_000, 12_000), 0},
		{"before: a negative gap stays", GapBeforeRemoved(-2_000, 12_000), -2_000},
		{"after: host code off the gap", CutGap(30_000, 12_000), 18_000},
		{"after: at most the gap", CutGap(5_000, 12_000), 0},
		{"after: nothing to cut", CutGap(5_000, 0), 5_000},
		{"after: a negative gap stays", CutGap(-2_000, 12_000), -2_000},
		{"profiler overhead off the gap", Unprofiled(10_000, 3_700), 6_300},
		{"profiler overhead: at most the gap", Unprofiled(2_000, 3_700), 0},
		{"no profiler correction", Unprofiled(2_000, 0), 2_000},
		{"negative correction: none", Unprofiled(2_000, -1), 2_000},
		{"gap: host code, then the profiler's overhead", GapBefore(30_000, 12_000, 3_700), 14_300},
		{"gap: nothing left", GapBefore(10_000, 8_000, 3_700), 0},
		{"copy call: a launch call's cost", AsyncCopyCallNs(40_000, 5_000), 5_000},
		{"copy call: never more than recorded", AsyncCopyCallNs(3_000, 5_000), 3_000},
		{"copy call: launch cost unknown", AsyncCopyCallNs(40_000, 0), 40_000},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}
