package trace

import (
	"slices"
)

// MaxGPUBefore and MaxGPUAfter bound the ops of Sync.GPUBefore and
// Sync.GPUAfter. Four after: a boolean-mask count is followed by CUB's
// compaction (two kernels) and only then by the op that tells a read
// (`index_kernel`) from an assignment (`index_put_kernel`).
const (
	MaxGPUBefore = 3
	MaxGPUAfter  = 4
)

// GPUOpKind is the kind of a GPU op of GPUBefore and GPUAfter.
type GPUOpKind uint8

// GPU op kinds.
const (
	GPUKernel GPUOpKind = iota + 1
	GPUMemcpy
	GPUMemset
	GPUGraph // a graph launch traced at graph level (one row for the graph)
)

func (k GPUOpKind) String() string {
	switch k {
	case GPUKernel:
		return "kernel"
	case GPUMemcpy:
		return "memcpy"
	case GPUMemset:
		return "memset"
	case GPUGraph:
		return "graph"
	}
	return "unknown"
}

// GPUOpRef is a GPU op enqueued on a sync's stream just before or just
// after it (Sync.GPUBefore, Sync.GPUAfter).
type GPUOpRef struct {
	// Name: a kernel's demangled name (the export's demangledName, its
	// shortName when that is absent); for the others a fixed short name:
	// "[memcpy HtoD]", "[memcpy DtoH]", "[memcpy DtoD]", "[memcpy HtoH]",
	// "[memcpy PtoP]" or "[memcpy]" (direction unknown) for a copy,
	// "[memset]", "[graph]". The string is shared by every op of that
	// name: no copy per sync.
	Name          string
	CorrelationID int64 // of the launch (the API call that enqueued it)
	Bytes         int64 // a copy's or memset's size; 0 for kernels and graphs
	Kind          GPUOpKind
	Copy          CopyKind // a copy's direction (normalised: HtoA counts as HtoD, …); 0 otherwise
}

// gpuNeighbours holds the ops of GPUBefore and GPUAfter, with each
// CorrelationID replaced by its distance from the sync (before: the
// sync's first correlation id minus the op's; after: the op's minus the
// sync's last), so that the syncs of a repeated pattern share one.
type gpuNeighbours struct {
	before, after []GPUOpRef
}

// corrWindow returns the correlation ids that bound a sync's windows: the
// ops before it have ids below lo, those after it ids above hi. lo is the
// first call's id, or, for an event sync, the event record's when that
// is earlier (the sync waited only for the work before the record); hi is
// the last call's id.
func (s *Sync) corrWindow() (lo, hi int64) {
	calls := s.Calls()
	if len(calls) == 0 {
		return s.waitCorr, s.waitCorr
	}
	return min(calls[0].CorrelationID, s.waitCorr), calls[len(calls)-1].CorrelationID
}

// GPUBefore returns the GPU ops the sync waited for last: the latest
// MaxGPUBefore ops (kernels, copies, memsets, graphs) enqueued on the
// sync's stream by its process after the previous sync of that stream and
// before this one, in launch (correlation id) order. Exactly: the ops of
// the process on the sync's (device, stream) whose correlation id c has
// prev < c < lo, where lo is the sync's first call's id (for an event
// sync, the event record's id if earlier) and prev the largest last-call
// id below lo among the other syncs of the stream; ops with equal ids (the
// kernels of one graph launch traced at node level) are in an order fixed
// by their kind and name. The sync's own copy or memset is not among
// them (its id is the sync's first call's).
//
// Syncs with a stream have them: stream and event syncs, copies and
// memsets resolved to their activity. A context-scope sync (device or
// context synchronize, cudaFree) is counted as a sync of its thread's
// previous stream-scoped sync's stream (the same device), and has none
// when the thread had no such sync before it. Ops more than 2^32-1
// correlation ids away are not looked at. The result is a new slice; see
// AppendGPUBefore to reuse one.
func (s *Sync) GPUBefore() []GPUOpRef { return s.AppendGPUBefore(nil) }

// GPUAfter returns the first MaxGPUAfter GPU ops enqueued on the sync's
// stream by its process after the sync's last call and before the next
// sync of that stream began, in launch order: the ops with hi < c < next,
// hi the sync's last call's correlation id and next the smallest lo (see
// GPUBefore) above hi among the stream's other syncs. An empty result
// means the program enqueued nothing on the stream before its next sync.
func (s *Sync) GPUAfter() []GPUOpRef { return s.AppendGPUAfter(nil) }

// AppendGPUBefore appends the ops of GPUBefore to dst and returns it.
func (s *Sync) AppendGPUBefore(dst []GPUOpRef) []GPUOpRef {
	if s.detail == nil || s.detail.gpu == nil {
		return dst
	}
	lo, _ := s.corrWindow()
	for _, op := range s.detail.gpu.before {
		op.CorrelationID = lo - op.CorrelationID
		dst = append(dst, op)
	}
	return dst
}

// AppendGPUAfter appends the ops of GPUAfter to dst and returns it.
func (s *Sync) AppendGPUAfter(dst []GPUOpRef) []GPUOpRef {
	if s.detail == nil || s.detail.gpu == nil {
		return dst
	}
	_, hi := s.corrWindow()
	for _, op := range s.detail.gpu.after {
		op.CorrelationID += hi
		dst = append(dst, op)
	}
	return dst
}

// SetGPUOps replaces the ops of GPUBefore and GPUAfter (their correlation
// ids are kept relative to the sync's calls, which should be set first).
// Copies of the Sync made before keep theirs.
func (s *Sync) SetGPUOps(before, after []GPUOpRef) {
	d := s.cloneDetail()
	d.gpu = nil
	if len(before) == 0 && len(after) == 0 {
		return
	}
	lo, hi := s.corrWindow()
	g := &gpuNeighbours{before: slices.Clone(before), after: slices.Clone(after)}
	for i := range g.before {
		g.before[i].CorrelationID = lo - g.before[i].CorrelationID
	}
	for i := range g.after {
		g.after[i].CorrelationID -= hi
	}
	d.gpu = g
}
