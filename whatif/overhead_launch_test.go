package whatif

import "testing"

func TestOverheadFromLaunches(t *testing.T) {
	repeat := func(ns int64, n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = ns
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		launches []int64
		want     int64
		ok       bool
	}{
		{"too few launches: the fallback", repeat(9_000, LaunchOverheadMinLaunches-1), 3_700, false},
		{"at the base: nothing", repeat(LaunchOverheadBaseNs, 20), 0, true},
		{"below the base: nothing", repeat(4_000, 20), 0, true},
		{"2 µs over the base", repeat(LaunchOverheadBaseNs+2_000, 20), int64(LaunchOverheadSlope * 2_000), true},
		{"bounded", repeat(100_000, 20), LaunchOverheadMaxNs, true},
		{"the median, not the mean: a few blocked launches do not count",
			append(repeat(LaunchOverheadBaseNs+1_000, 17), 500_000, 500_000, 500_000), int64(LaunchOverheadSlope * 1_000), true},
		{"even count: the mean of the middles",
			append(repeat(LaunchOverheadBaseNs, 8), repeat(LaunchOverheadBaseNs+2_000, 8)...), int64(LaunchOverheadSlope * 1_000), true},
	} {
		got := OverheadFromLaunches(tc.launches, 3_700)
		if got.Ns != tc.want || got.Ok != tc.ok || got.Launches != len(tc.launches) {
			t.Errorf("%s: %+v, want %d ns (ok %v) from %d launches", tc.name, got, tc.want, tc.ok, len(tc.launches))
		}
	}
}

func TestIsKernelLaunchName(t *testing.T) {
	for name, want := range map[string]bool{
		"cudaLaunchKernel_v7000": true, "cudaLaunchKernelExC_v11060": true, "cuLaunchKernel": true, "cuLaunchKernelEx": true,
		"cudaLaunchCooperativeKernel_v9000": true, "cudaGraphLaunch_v10000": false, "cuGraphLaunch": false,
		"cudaLaunchHostFunc_v10000": false, "cudaMemcpyAsync_v3020": false,
	} {
		if got := IsKernelLaunchName(name); got != want {
			t.Errorf("IsKernelLaunchName(%q) = %v, want %v", name, got, want)
		}
	}
}
