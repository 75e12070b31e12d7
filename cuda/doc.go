// Package cuda measures, on a real NVIDIA GPU, what removing host syncs
// would save: it replays a region of a trace with a bundled spin kernel.
//
// A replay rebuilds the region from the export's own timeline
// (BuildPlan): per host thread, the recorded API calls in order with the
// recorded host time between them; per recorded stream, a real stream on
// which every recorded GPU op becomes the spin kernel (spin.cu) running
// for the op's recorded duration, launched to hold the share of the GPU
// the recorded kernel held (occupancy.go), or a real copy for host-device
// copies;
// the recorded cross-stream waits as events; and the recorded syncs as
// real cuStreamSynchronize, cuEventSynchronize and cuCtxSynchronize calls.
// It runs the region once as recorded and once without each site's syncs
// (replaced by their sync-free rewrite: the host goes on at once, later
// GPU work keeps its order through events), several times in alternation,
// and reports the median saving and its range (Device.Replay). The
// host-side rules (the host code around a removed sync, hand-offs between
// threads, the profiler's per-call overhead) are the simulator's: the
// host graph and its rules come from package whatif, which both use; what
// the replay measures instead of modelling is the GPU and the driver:
// launch latency, queueing, concurrency, wake-ups.
//
// The driver is loaded at run time: libcuda.so.1 through dlopen and dlsym
// (cgo), with the driver API declared in nsd_cuda.h, so building needs no
// CUDA toolkit and a binary runs on machines without a GPU; there Open
// returns an error for which Unavailable is true, and the simulator's
// estimate stands. The GPU is named, with its clocks and throttle
// reasons, through NVML by github.com/NVIDIA/go-nvml, which also opens
// libnvidia-ml.so.1 at run time; without it the CUDA driver's name
// stands and Identity.NVML says why.
//
// Calibrate measures the constants the simulator falls back on: sync
// overhead and wake-up, launch latency, dispatch gap, a scalar
// device-to-host copy and an event record plus stream wait.
package cuda
