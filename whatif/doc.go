// Package whatif holds the what-if model of a region that the simulator
// (package estimate) runs in Go and the GPU replay (package cuda) turns
// into GPU actions: one definition of each modelling rule, so that a fix
// is made once and both sides follow it.
//
// What lives here so far is the host side of the region graph (Host) and
// its rules:
//   - each thread's API calls in recorded start order with the host time
//     between them, which calls belong to which sync, which launch GPU
//     work, and the call a GPU op with no launch call floats after
//     (FloatCall);
//   - the host hand-offs between threads of a process (LinkHandOffs);
//   - the thread's typical gap between two launches (LaunchGaps,
//     TypicalGaps);
//   - the host code cut around a removed sync (HostCode, ShareCut) and
//     when its rewrite keeps it (KeepsHostCode), and the host-to-device
//     copy a removed sync keeps (CopiesToDevice, KeepsCopy);
//   - the host time around a removed sync's calls (GapBeforeRemoved,
//     GapBefore, CutGap, AsyncCopyCallNs) and without the profiler
//     (Unprofiled), the profiler's overhead by kind of call
//     (OverheadKindOf, Overheads) and read off a trace (InferOverheads);
//   - the rewrite models of removed syncs: a pageable copy to the device
//     made from pinned memory (RewritesToPinned, Staged, PinnedCopyNs,
//     PinnedSpeedSample) and a dynamic-shape op made fixed-shape
//     (ClaimFixedShapes, ShapeRoleOf, ReadsCount);
//   - Median, and the names of event record and stream wait calls.
//
// Where the two sides used to compute a rule differently in substance
// (not only in form), both behaviours are kept behind a named option
// (MedianRule), each side passing its own, so that moving the code here
// changed no number; docs/estimator.md lists them. The GPU
// side of the graph (streams, ops and their dependencies, event records
// and waits, the rewrite of a removed sync on the GPU) is still built by
// each side.
package whatif
