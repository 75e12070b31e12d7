package trace

// syncDetail holds the evidence of a sync that lean exports lack: native
// and Python frames, the aten ops before it. A Sync points to one only when
// some of it was found, so that the millions of syncs of an export without
// backtraces carry one nil pointer instead of three empty slices.
type syncDetail struct {
	native    []Frame
	python    []PyFrame
	opsBefore []RangeRef
	gpu       *gpuNeighbours
	host      *hostAfter // the OS-runtime write after it (WroteAfter)
	samples   [][]Frame  // stacks of the CPU samples inside it (Samples)
	pySampled bool       // python came from a Python periodic sample inside it
	// shared: the detail is shared by several syncs (only gpu is set);
	// ownDetail and cloneDetail copy it before changing it.
	shared bool
}

// Native returns the native frames of the sync's deciding call (its CUDA
// callchain), innermost first; nil without --cudabacktrace.
func (s *Sync) Native() []Frame {
	if s.detail == nil {
		return nil
	}
	return s.detail.native
}

// Python returns the Python frames of the sync, innermost first; nil
// without Python backtraces.
func (s *Sync) Python() []PyFrame {
	if s.detail == nil {
		return nil
	}
	return s.detail.python
}

// OpsBefore returns the push/pop NVTX ranges of the sync's thread that ran
// after the thread's previous sync returned and ended before this one
// began — with --pytorch=autograd-nvtx, the aten ops that led up to it —
// outermost only, the latest MaxOpsBefore, in time order. Read only from
// exports whose syncs lie inside aten ranges.
func (s *Sync) OpsBefore() []RangeRef {
	if s.detail == nil {
		return nil
	}
	return s.detail.opsBefore
}

// SetNative replaces the sync's native frames. Copies of the Sync made
// before keep theirs.
func (s *Sync) SetNative(f []Frame) { s.cloneDetail().native = f }

// SetPython replaces the sync's Python frames. Copies of the Sync made
// before keep theirs.
func (s *Sync) SetPython(f []PyFrame) { s.cloneDetail().python = f }

// SetOpsBefore replaces the ranges of OpsBefore. Copies of the Sync made
// before keep theirs.
func (s *Sync) SetOpsBefore(r []RangeRef) { s.cloneDetail().opsBefore = r }

// cloneDetail gives the sync a detail of its own, which copies of the Sync
// do not share, and returns it.
func (s *Sync) cloneDetail() *syncDetail {
	d := &syncDetail{}
	if s.detail != nil {
		*d = *s.detail
		d.shared = false
	}
	s.detail = d
	return d
}

// ownDetail returns the sync's detail, allocated when it has none, for
// Load to fill: its syncs are not copied yet, so none shares a detail.
func (s *Sync) ownDetail() *syncDetail {
	if s.detail == nil || s.detail.shared {
		return s.cloneDetail()
	}
	return s.detail
}
