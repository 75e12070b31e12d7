package trace

import (
	"context"
	"fmt"
)

// LoadOptions choose what Load analyses.
type LoadOptions struct {
	// NVTX limits the analysis to the time of an NVTX range, NAME or
	// NAME@DOMAIN; every occurrence counts. Empty: the whole trace.
	NVTX string
}

// Load reads the export and builds the inventory of host syncs: it runs
// the loaders, each of which reads one part of the trace through the
// export's source, in the order their results feed each other.
func (x *Export) Load(ctx context.Context, opt LoadOptions) (*Trace, error) {
	ld := newLoaders(x.src)
	t := &Trace{Path: x.Path, Schema: x.Schema}
	s := x.Schema
	t.Evidence.SyncRecords = s.Has(tableSync)
	t.Evidence.CudaEvents = s.Has(tableCudaEvent)
	t.Evidence.MemcpyActivity = s.Has(tableMemcpy)
	t.Evidence.GPUActivity = s.Has(tableKernel) || s.Has(tableMemcpy) || s.Has(tableMemset) || s.Has(tableGraphTrace)

	span, hasRows, err := ld.calls.cudaSpan(ctx)
	if err != nil {
		return nil, err
	}
	if !hasRows {
		return nil, inputErr(x.Path, ErrNoCUDATrace, "no CUDA trace: %s is empty", tableRuntime)
	}
	names, err := ld.calls.loadAPINames(ctx)
	if err != nil {
		return nil, err
	}
	act, err := ld.activity.loadCopies(ctx, &t.Stats)
	if err != nil {
		return nil, err
	}
	if err := ld.activity.loadHostMappedCalls(ctx, act.mapped); err != nil {
		return nil, err
	}
	t.HostMapped = act.mapped
	writes, err := ld.writes.loadHostWrites(ctx, &t.Evidence)
	if err != nil {
		return nil, err
	}
	calls, err := ld.calls.loadCalls(ctx, names, act.keepCall, writes, &t.Stats)
	if err != nil {
		return nil, err
	}
	if err := ld.activity.loadSyncRecords(ctx, act, &t.Stats); err != nil {
		return nil, err
	}
	si, err := ld.context.loadStreams(ctx)
	if err != nil {
		return nil, err
	}
	syncs := buildSyncs(calls, act, si)

	domains, err := ld.nvtx.loadDomains(ctx)
	if err != nil {
		return nil, err
	}
	if t.Hints, err = ld.hints.loadProgramHints(ctx, domains); err != nil {
		return nil, err
	}
	if opt.NVTX != "" {
		if t.Region, err = ld.nvtx.findRegion(ctx, opt.NVTX, domains); err != nil {
			return nil, err
		}
		syncs = filterSyncs(syncs, t.Region)
	}

	ix := newOpIndex(syncs, si)
	gpu, err := ld.gpu.scanGPU(ctx, ix)
	if err != nil {
		return nil, err
	}
	t.Stats.GPUOps = gpu.ops
	t.FirstKernel = gpu.firstKernels()
	t.Stats.RowsScanned += gpu.ops
	if writes != nil { // after the GPU scan, which gives syncs their first detail
		writes.attach(syncs)
		t.Stats.RowsScanned += writes.rows
	}
	if opt.NVTX == "" {
		start, end := span.Start, span.End
		if gpu.ops > 0 {
			start, end = min(start, gpu.start), max(end, gpu.end)
		}
		if len(calls) > 0 {
			start = min(start, calls[0].Start)
			for _, c := range calls {
				end = max(end, c.End)
			}
		}
		t.Region = Region{Intervals: []Interval{{start, end}}, Start: start, End: end, Duration: end - start}
	}

	if err := ld.nvtx.attachRanges(ctx, syncs, domains, &t.Stats, &t.Evidence); err != nil {
		return nil, err
	}
	if t.Evidence.AutogradNVTX {
		if err := ld.nvtx.attachOpsBefore(ctx, syncs, domains, t.Region.Start); err != nil {
			return nil, err
		}
	}
	if err := ld.frames.attachNativeFrames(ctx, syncs, &t.Evidence); err != nil {
		return nil, err
	}
	if err := ld.frames.attachPythonFrames(ctx, syncs, domains, &t.Evidence); err != nil {
		return nil, err
	}
	if err := ld.frames.attachPythonSamples(ctx, syncs, domains, &t.Evidence); err != nil {
		return nil, err
	}
	if err := ld.samples.attachSamples(ctx, syncs, t); err != nil {
		return nil, err
	}
	if t.Evidence.Backtraces && s.SchemaVersion != "" && versionLess(s.SchemaVersion, "3.9.0") {
		t.Warnings = append(t.Warnings, fmt.Sprintf("export schema %s predates 3.9.0, whose callchainId was off by one: native frames may belong to the neighbouring call", s.SchemaVersion))
	}

	// Only exports that name a host-function launch API are scanned for
	// them (hostfunc.go).
	n, err := ld.calls.countHostFuncs(ctx, names.hostFuncs, t.Region)
	if err != nil {
		return nil, err
	}
	if w := hostFuncWarning(n, len(syncs)); w != "" {
		t.Warnings = append(t.Warnings, w)
	}

	tids := map[GlobalTid]bool{}
	for _, sy := range syncs {
		tids[sy.GlobalTid] = true
	}
	if t.Processes, t.Threads, err = ld.context.loadProcessesAndThreads(ctx, tids); err != nil {
		return nil, err
	}
	if t.GPUs, err = ld.context.loadGPUs(ctx); err != nil {
		return nil, err
	}
	for i := range syncs {
		syncs[i].Index = int32(i)
	}
	t.Syncs = syncs
	return t, nil
}

// loaders are the readers of the parts of a Trace, all over one source.
type loaders struct {
	calls    callLoader
	activity activityLoader
	context  contextLoader
	nvtx     nvtxLoader
	frames   frameLoader
	gpu      gpuLoader
	writes   writeLoader
	samples  sampleLoader
	hints    hintLoader
}

func newLoaders(src *source) loaders {
	return loaders{
		calls: callLoader{src}, activity: activityLoader{src}, context: contextLoader{src},
		nvtx: nvtxLoader{src}, frames: frameLoader{src}, gpu: gpuLoader{src},
		writes: writeLoader{src}, samples: sampleLoader{src}, hints: hintLoader{src},
	}
}

// filterSyncs keeps the syncs that begin inside the region.
func filterSyncs(syncs []Sync, r Region) []Sync {
	out := syncs[:0]
	for _, s := range syncs {
		if r.Contains(s.Start) {
			out = append(out, s)
		}
	}
	return out
}

// versionLess compares dotted version strings numerically.
func versionLess(a, b string) bool {
	var x, y [3]int
	fmt.Sscanf(a, "%d.%d.%d", &x[0], &x[1], &x[2])
	fmt.Sscanf(b, "%d.%d.%d", &y[0], &y[1], &y[2])
	for i := range x {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return false
}

// BlockedNs sums the host's blocked time over the syncs.
func (t *Trace) BlockedNs() int64 {
	var n int64
	for i := range t.Syncs {
		n += t.Syncs[i].Duration()
	}
	return n
}

// UsedGPUs returns the GPUs the syncs ran against, or all when unknown.
func (t *Trace) UsedGPUs() []GPU {
	used := map[DeviceID]bool{}
	for _, s := range t.Syncs {
		if s.Device >= 0 {
			used[s.Device] = true
		}
	}
	var out []GPU
	for _, g := range t.GPUs {
		if used[g.CUDAID] {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return t.GPUs
	}
	return out
}
