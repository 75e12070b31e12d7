// Package estimate answers "how much wall time would removing these syncs
// save?" by replaying a region of a trace as a discrete-event simulation.
//
// The replay rebuilds, from the export's own timeline, each host thread's
// API calls and the CPU time between them, each stream's GPU ops in order
// with their durations, the cross-stream event waits, the launch latency
// of each op and the wake-up of each sync. Replayed unchanged it
// reproduces the recording (Result.SelfCheckError); replayed with syncs
// removed, the host goes on at once where it waited (a removed .item()
// loses its copy too), later launches move earlier, and each GPU op starts
// when its launch has arrived and its stream is ready. A removed sync of
// another stream keeps its ordering on the GPU, as the sync-free rewrite
// (wait_stream, wait_event) does, and costs that rewrite's calls.
//
// The host side of the model (threads, gaps, syncs' calls, hand-offs,
// the host code cut around a removed sync) is package whatif's, shared
// with the GPU replay (package cuda).
//
// Constants (launch latency, sync overhead and wake-up, dispatch gap) come
// from the trace where it shows them, else from a Calibration profile,
// else from DefaultCalibration. docs/estimator.md scores the estimates
// against measured ground truth.
//
// A region of more than Options.MaxEvents calls and ops is not read whole:
// Run replays windows of it, each read by rowid and cut where host and GPU
// are back in step, with constants pooled over them, and extrapolates
// (Result.Sampled; docs/estimator.md, "Large traces").
package estimate
