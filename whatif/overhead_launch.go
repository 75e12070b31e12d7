package whatif

import (
	"fmt"
	"strings"
)

// The profiler's cost per traced call, read off the recorded launches.
//
// How much host time the profiler adds to each traced call is not a
// constant of the machine: on one H200, programs captured one after the
// other in the same way cost 1.4 to 23 µs a call (the step with the
// profiler against the same step without it, divided by the calls a step
// makes; docs/estimator.md, "The profiler's cost, read off the launches").
// What moves with it is the recorded duration of a kernel launch: the
// launch does the same work in every program, so a launch recorded
// longer is the profiler costing more in that capture — in the launch and,
// several times over, around it (the callbacks of every other call, the
// Python code between them). Over the 25 labelled programs the per-call
// cost is close to LaunchOverheadSlope × (median launch −
// LaunchOverheadBaseNs); fitted there (H200). Where it was not fitted (the
// PyTorch ground truth on H100s, a held-out set on H200s) it orders the
// captures by cost but says about twice the cost where launches are
// long, so the estimator takes it only when asked
// (estimate.Options.LaunchProfilerOverhead, --overhead-from-launches).
const (
	// LaunchOverheadBaseNs is the median recorded launch at which the
	// profiler's cost comes out nothing.
	LaunchOverheadBaseNs = 5_500
	// LaunchOverheadSlope is the per-call cost per ns of median launch
	// above the base.
	LaunchOverheadSlope = 3.5
	// LaunchOverheadMinLaunches is the fewest launches the median is
	// read from; LaunchOverheadMaxNs bounds the result.
	LaunchOverheadMinLaunches = 16
	LaunchOverheadMaxNs       = 60_000
)

// IsKernelLaunchName reports whether an API call of that name launches a
// kernel: cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel,
// cuLaunchKernelEx, cudaLaunchCooperativeKernel… (not a graph launch).
func IsKernelLaunchName(name string) bool {
	return (strings.HasPrefix(name, "cudaLaunch") || strings.HasPrefix(name, "cuLaunch")) && strings.Contains(name, "Kernel")
}

// LaunchOverhead is the profiler's cost per call read off a trace's
// launches.
type LaunchOverhead struct {
	Ns int64
	// MedianLaunchNs is the median recorded launch it was read from;
	// Launches how many there were (Ok false: too few, Ns is then the
	// fallback).
	MedianLaunchNs int64
	Launches       int
	Ok             bool
}

// Source says where the value came from, for a result's constants.
func (v LaunchOverhead) Source() string {
	if !v.Ok {
		return fmt.Sprintf("default (trace: %d launches)", v.Launches)
	}
	return fmt.Sprintf("trace (median launch %.1f µs of %d)", float64(v.MedianLaunchNs)/1e3, v.Launches)
}

// OverheadFromLaunches reads the profiler's cost per call off the
// recorded durations of the region's kernel launches (see above), or
// gives fallback when there are fewer than LaunchOverheadMinLaunches. It
// sorts launchNs in place.
func OverheadFromLaunches(launchNs []int64, fallback int64) LaunchOverhead {
	v := LaunchOverhead{Ns: fallback, Launches: len(launchNs)}
	if len(launchNs) < LaunchOverheadMinLaunches {
		return v
	}
	med := Median(launchNs, MeanOfMiddles)
	v.MedianLaunchNs, v.Ok = med, true
	v.Ns = min(max(int64(LaunchOverheadSlope*float64(med-LaunchOverheadBaseNs)), 0), LaunchOverheadMaxNs)
	return v
}
