package whatif

// Host time around a removed sync. Removing a sync, the host goes on at
// once: the sync's calls take no time, the gaps between its own calls go,
// the gap before its first call loses the host code before it
// (GapBeforeRemoved) and the gap before the thread's next call the host
// code after it (CutGap). A host-to-device copy the rewrite keeps costs a
// launch call (AsyncCopyCallNs). Without the profiler, each gap loses the
// per-call overhead (Unprofiled).
//
// The host code after a removed sync is cut from the gap before the
// thread's next call, whatever that gap (the simulator used to keep it
// pending past a gap that was not positive, a call overlapping the one
// before: on every fixture and shared-corpus export no number changed).

// GapBeforeRemoved is the host time left before a removed sync's first
// call: the recorded gap less the host code before the sync (never below
// the gap's negative part).
func GapBeforeRemoved(gap, before int64) int64 {
	return gap - min(max(gap, 0), before)
}

// GapBefore is the host time before a call, from the recorded gap: the
// host code still to cut after a removed sync on its thread comes off
// (CutGap), then the profiler's per-call overhead (Unprofiled).
func GapBefore(gap, cut, overheadNs int64) int64 {
	return Unprofiled(CutGap(gap, cut), overheadNs)
}

// CutGap takes host code still to cut (after a removed sync) off a
// positive gap, at most all of it.
func CutGap(gap, cut int64) int64 {
	if cut > 0 && gap > 0 {
		return gap - min(gap, cut)
	}
	return gap
}

// Unprofiled takes the profiler's per-call overhead off a positive gap
// before a call, at most all of it (overheadNs <= 0: none).
func Unprofiled(gap, overheadNs int64) int64 {
	if overheadNs > 0 && gap > 0 {
		return gap - min(gap, overheadNs)
	}
	return gap
}

// AsyncCopyCallNs is the host time of a removed sync's host-to-device
// copy call made asynchronous: what a launch call costs (launchCallNs; 0:
// unknown, the recorded time), never more than recorded.
func AsyncCopyCallNs(recorded, launchCallNs int64) int64 {
	if launchCallNs > 0 {
		return min(recorded, launchCallNs)
	}
	return recorded
}
