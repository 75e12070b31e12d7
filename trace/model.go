package trace

import "unsafe"

// Trace is what Load reads from an export: the context of the run and the
// inventory of host syncs inside the analysed region.
type Trace struct {
	Path   string
	Schema *Schema
	GPUs   []GPU
	// Processes that made CUDA calls, by globalPid.
	Processes map[GlobalPid]Process
	// Threads that blocked, by globalTid.
	Threads map[GlobalTid]Thread
	Region  Region
	// Syncs are the host-blocking events in the region, in time order.
	Syncs []Sync
	// Evidence says which kinds of evidence the export carries.
	Evidence Evidence
	Stats    Stats
	Warnings []string
	// Hints tell what kind of program was profiled (package program).
	Hints ProgramHints
	// HostMapped: the processes (by globalPid) that use memory the host
	// reads without a copy call — managed memory, or host memory the
	// device addresses — each with how the trace shows it. After a sync,
	// such a process may read what the GPU wrote with no copy in the
	// trace to show the read.
	HostMapped map[GlobalPid]string
	// FirstKernel: the start of each process's first kernel (or CUDA
	// graph launch) on each device, over the whole export (not only the
	// region); a process-device pair without a kernel is absent.
	FirstKernel map[ProcessDevice]int64
}

// GPU is one device of TARGET_INFO_GPU.
type GPU struct {
	ID       int64
	CUDAID   DeviceID // CUDA ordinal seen by the process (kernel deviceId)
	Name     string
	SMCount  int64
	Compute  string
	BusLabel string
}

// Process is a traced process.
type Process struct {
	GlobalPid GlobalPid
	Pid       int64
	Name      string
}

// Thread is a host thread that made CUDA calls.
type Thread struct {
	GlobalTid GlobalTid
	Pid, Tid  int64
	Name      string
}

// Region is the analysed part of the trace: the whole CUDA activity, or the
// time of an NVTX range (all its occurrences).
type Region struct {
	Name      string // "" for the whole trace
	Domain    string
	Intervals []Interval
	Start     int64
	End       int64
	// Duration is the summed length of the intervals.
	Duration int64
}

// Interval is a half-open time interval [Start, End) in nanoseconds.
type Interval struct{ Start, End int64 }

// Contains reports whether t lies in any interval of the region.
func (r Region) Contains(t int64) bool {
	for _, iv := range r.Intervals {
		if t >= iv.Start && t < iv.End {
			return true
		}
	}
	return false
}

// Evidence records what the export can tell about each sync.
type Evidence struct {
	Backtraces     bool // CUDA_CALLCHAINS joined through eventClass-67 rows
	PythonFrames   bool // Python backtrace marks with payloads
	PythonMarks    bool // marks present (payload maybe absent)
	NVTX           bool
	AutogradNVTX   bool
	SyncRecords    bool // CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
	CudaEvents     bool // CUPTI_ACTIVITY_KIND_CUDA_EVENT
	GPUActivity    bool // any of KERNEL/MEMCPY/MEMSET
	MemcpyActivity bool
	// OSRT: the export traced OS-runtime calls (OSRT_API has rows, as in
	// a default capture), so Sync.WroteAfter can be true.
	OSRT bool
	// Samples: the export holds CPU samples with their callchains
	// (COMPOSITE_EVENTS, SAMPLING_CALLCHAINS: nsys's default capture), so
	// Sync.Samples can be set. SamplesInSyncs counts the samples that fell
	// inside a sync of their thread, before the caps of Sync.Samples.
	Samples        bool
	SamplesInSyncs int64
	// PythonSamples: the export holds Python periodic samples
	// (--python-sampling=true); PythonSampledSyncs counts the syncs
	// without a backtrace that a sample inside gave Python frames
	// (Sync.PythonSampled).
	PythonSamples      bool
	PythonSampledSyncs int
}

// Stats counts what the reader scanned, for benchmarks and the doctor.
type Stats struct {
	APICalls       int   // loaded API calls (of interest, de-duplicated)
	BacktraceTwins int   // eventClass-67 rows folded into their calls
	GPUOps         int64 // kernel, memcpy and memset rows streamed
	NVTXRanges     int64
	Samples        int64 // CPU sample rows (COMPOSITE_EVENTS) streamed
	RowsScanned    int64
}

// Sync is one host-blocking event: one call, or a device-to-host copy and
// the stream synchronize that follows it (PyTorch's .item()). A trace may
// hold millions: the fields are ordered without padding, the small ones
// packed at the end, and what lean exports lack sits behind one pointer.
type Sync struct {
	// calls: the first of the sync's nCalls calls (Calls), inside the
	// array Load read them into.
	calls *Call

	GlobalTid GlobalTid
	GlobalPid GlobalPid
	// Start and End bound the host's wait: from the first call's start to
	// the last call's end.
	Start, End int64

	Device  DeviceID  // NoDevice when unknown
	Context ContextID // NoContext when unknown
	Stream  StreamID  // NoStream when unknown or for context scope
	EventID int64     // -1 when not an event sync

	Copy *Copy // the copy or memset behind an implicit sync

	Waited Waited
	Gap    Gap

	// nvtx: the enclosing ranges (NVTX), shared by the syncs of a thread
	// inside the same ranges; nil for none.
	nvtx *[]RangeRef

	// detail: native and Python frames, the NVTX and GPU ops around it
	// (Native, Python, OpsBefore, GPUBefore, GPUAfter); nil when the
	// export has none for this sync. Syncs with only GPU ops share one.
	detail *syncDetail

	// waitCorr: GPU work enqueued by the process before this correlation
	// id (in the sync's scope) is what the host waited for.
	waitCorr int64

	Index    int32 // position in Trace.Syncs
	nCalls   uint32
	Kind     SyncKind
	Reason   Reason // e.g. stream-sync, dtoh-copy+stream-sync, pageable-htod-copy, free
	Scope    Scope
	Legacy   bool // waited on the legacy default stream (all blocking streams)
	Resolved bool // the awaited stream/event was found in the trace
}

// Duration is the host's blocked time.
func (s *Sync) Duration() int64 { return s.End - s.Start }

// Calls returns the sync's calls in time order: one, or the copy and the
// stream synchronize that completed it. The slice shares the trace's
// memory: its capacity is its length, so appending copies it.
func (s *Sync) Calls() []Call {
	if s.nCalls == 0 {
		return nil
	}
	return unsafe.Slice(s.calls, s.nCalls)
}

// SetCalls makes calls the sync's calls; the sync refers to them, it does
// not copy them.
func (s *Sync) SetCalls(calls []Call) {
	s.calls, s.nCalls = nil, uint32(len(calls))
	if len(calls) > 0 {
		s.calls = &calls[0]
	}
}

// NVTX returns the NVTX ranges that enclose the sync, outer to inner. The
// syncs of a thread inside the same ranges share the slice Load built:
// its capacity is its length, so appending copies it, and its elements
// are not to be changed.
func (s *Sync) NVTX() []RangeRef {
	if s.nvtx == nil {
		return nil
	}
	return *s.nvtx
}

// SetNVTX makes r the ranges that enclose the sync; the sync refers to
// them, it does not copy them.
func (s *Sync) SetNVTX(r []RangeRef) {
	s.nvtx = nil
	if r != nil {
		s.nvtx = &r
	}
}

// APIs lists the normalised names of the sync's calls.
func (s *Sync) APIs() []string {
	calls := s.Calls()
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Name
	}
	return out
}

// Call is one CUDA API call (the CUPTI row, with its backtrace twin folded
// in).
type Call struct {
	Name          string // normalised
	Start, End    int64
	GlobalTid     GlobalTid
	CorrelationID int64
	CallchainID   int64 // -1 when none; 0 is a valid id
	TwinStart     int64 // start of the eventClass-67 row, -1 when none
	Kind          CallKind
	// Blocking: the call blocks the host on its own (a pinned .item() copy
	// does not; its stream synchronize does).
	Blocking bool

	async, peer bool // from the API name: an Async variant, a peer copy
}

// CopyKind is a memcpy direction (ENUM_CUDA_MEMCPY_OPER). Two bytes: with
// the memory kinds and the flags, eight bytes of a Copy.
type CopyKind int16

// Copy directions.
const (
	CopyUnknown CopyKind = 0
	CopyHtoD    CopyKind = 1
	CopyDtoH    CopyKind = 2
	CopyDtoD    CopyKind = 8
	CopyHtoH    CopyKind = 9
	CopyPtoP    CopyKind = 10
	// Unified memory migrating (managed memory, pages moved on demand).
	CopyUnifiedHtoD CopyKind = 11
	CopyUnifiedDtoH CopyKind = 12
)

// MemKind is a memory kind (ENUM_CUDA_MEM_KIND), in two bytes.
type MemKind int16

// Memory kinds.
const (
	MemPageable MemKind = 0
	MemPinned   MemKind = 1
	MemDevice   MemKind = 2
	MemManaged  MemKind = 4
	MemUnknown  MemKind = -1
)

// Copy is the GPU activity of a memcpy or memset call.
type Copy struct {
	Memset        bool
	FromActivity  bool // false: direction guessed from the API name
	Direction     CopyKind
	SrcKind       MemKind
	DstKind       MemKind // for a memset: the memory kind set
	Bytes         int64
	Start, End    int64 // on the GPU; 0 when the activity is absent
	Device        DeviceID
	Context       ContextID
	Stream        StreamID
	CorrelationID int64
}

// Waited is the GPU work the host waited for: ops in the sync's scope that
// were enqueued before it and still running when it began.
type Waited struct {
	Ops        int
	BusyNs     int64 // summed op time inside the wait
	FirstStart int64
	LastEnd    int64
}

// Gap is the GPU idle time around the sync's return on its device.
type Gap struct {
	// DeviceBusy: some op of the process ran on the device when the host
	// returned, so no bubble opened.
	DeviceBusy bool
	// IdleBeforeNs: from the last op's end to the host's return.
	IdleBeforeNs int64
	// IdleAfterNs: from the host's return to the next op's start; -1 when
	// no op followed.
	IdleAfterNs int64
}

// Frame is one native frame of a CUDA callchain, innermost first.
type Frame struct {
	Symbol     string
	Module     string
	Unresolved bool
}

// PyFrame is one Python frame, innermost first.
type PyFrame struct {
	Function string
	File     string
	Line     int64
}

// RangeRef names an NVTX range that encloses a sync.
type RangeRef struct {
	Name   string
	Domain string
	Start  int64
	End    int64
}

// ProcessDevice names one process's work on one device.
type ProcessDevice struct {
	Pid    GlobalPid
	Device DeviceID
}
