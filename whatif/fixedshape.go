package whatif

import (
	"sort"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// The rewrite the report recommends for a dynamic-shape op (nonzero and
// indexing, masked_select, unique) is a fixed-shape one (torch.where, a
// scatter into a fixed-size table): the count read goes, and so does the
// op's own work around it — the library passes that count before the read
// (cub's reduce, select, scan and radix-sort kernels and their memsets)
// and the ones that write the output after it, with the indexing gather
// that applies it to the data (indexKernels) — replaced by one pass over
// the input. The model removes those calls with the sync and keeps one of
// their launches, the one with the longest GPU op, as the fixed-shape
// op's pass (ClaimFixedShapes). Measured on the GPU machine
// (fixtures/copyspeed/ops.json, no profiler): nonzero + index + sum against
// torch.where + sum, 83–117 µs against 46–83 µs of host time per call at
// 64K–16M elements; unique against a scatter into 1000 bins, 130 µs–1.2 ms
// against 37–47 µs.

// shapeKernels are name parts of the kernels a dynamic-shape op runs to
// count and compact its output (CUB's device-wide passes, as PyTorch's
// nonzero, masked_select and unique launch them).
var shapeKernels = []string{"DeviceReduce", "DeviceSelect", "DeviceCompact", "DeviceScan", "DeviceRadixSort",
	"DeviceSegmentedSort", "DeviceSegmentedRadixSort", "DeviceMergeSort", "DeviceRunLengthEncode", "nonzero", "unique"}

// indexKernels are name parts of the kernels that apply a dynamic-shape
// op's indices or mask to its data: PyTorch's advanced-indexing gathers
// (x[idx], x[mask], masked_select, index_select). The fixed-shape rewrite
// (torch.where, a multiply by the mask) replaces them as well as the
// compaction they follow, so right after a count read they are passes of
// its op (ShapeIndex); before a read they end the op (they made its input).
var indexKernels = []string{"index_elementwise_kernel", "vectorized_gather_kernel", "indexSelectLargeIndex", "indexSelectSmallIndex"}

func isIndexKernel(name string) bool {
	for _, k := range indexKernels {
		if strings.Contains(name, k) {
			return true
		}
	}
	return false
}

// IsShapeKernel reports whether kernel name is one of those passes.
func IsShapeKernel(name string) bool {
	for _, k := range shapeKernels {
		if strings.Contains(name, k) {
			return true
		}
	}
	return false
}

// ShapeRole is what a call is to a dynamic-shape op around a count read.
type ShapeRole int8

const (
	// ShapeOther ends the op: any other call.
	ShapeOther ShapeRole = iota
	// ShapeNeutral may lie inside the op: a memset, or a call that
	// launches nothing (a name or capture query).
	ShapeNeutral
	// ShapePass launches only the op's passes (IsShapeKernel).
	ShapePass
	// ShapeIndex launches an indexing gather (and perhaps passes): a pass
	// after a count read, the end of the op before one.
	ShapeIndex
)

// maxShapeCalls bounds the calls searched on each side of a count read.
const maxShapeCalls = 64

// ClaimFixedShapes claims for each sync of counts, whose own calls are
// claimed already and which reads a count (ReadsCount), the calls of the
// dynamic-shape op around it on the sync's thread: the run of passes and
// neutral calls right before its first call and right after its last,
// each run trimmed of neutral calls at its far end. Every sync's run
// before it is claimed first, so that a run after one read stops at the
// next op's passes: passes between two reads with nothing else between
// them go to the later read (its count passes always come before it; the
// earlier op's output passes are not told apart from them). Nothing is claimed for a read
// with no pass before it. Of a read's claimed passes, the one with the
// longest GPU op (opNs) is given back: the fixed-shape op's pass. Claimed
// calls are removed with the sync, as its own are; SyncCalls stays in
// call order, each sync's first call marked SyncFirst. It reports, by
// position in counts, which reads it found the op of.
func (h *Host) ClaimFixedShapes(counts []int32, role func(ci int32) ShapeRole, opNs func(ci int32) int64) []bool {
	found := make([]bool, len(counts))
	ends := make([][2]int32, len(counts)) // each read's own first and last call
	for k, s := range counts {
		calls := h.SyncCalls[s]
		if len(calls) == 0 {
			continue
		}
		first, last := calls[0], calls[0]
		for _, c := range calls {
			first, last = min(first, c), max(last, c)
		}
		ends[k] = [2]int32{first, last}
		before := h.shapeRun(first, -1, role)
		if hasPass(before, role) {
			found[k] = true
			h.claimAll(s, before)
		}
	}
	for k, s := range counts {
		if found[k] {
			h.claimAll(s, h.shapeRun(ends[k][1], 1, role))
		}
	}
	for k, s := range counts {
		if found[k] {
			h.keepLongestPass(s, ends[k], role, opNs)
		}
	}
	return found
}

// claimAll makes every call of run one of sync s's.
func (h *Host) claimAll(s int32, run []int32) {
	for _, ci := range run {
		if h.Calls[ci].Sync < 0 {
			h.Calls[ci].Sync = s
			h.SyncCalls[s] = append(h.SyncCalls[s], ci)
		}
	}
}

// keepLongestPass gives back, of the passes sync s claimed around its own
// calls (own: its first and last), the one with the longest GPU op, puts
// SyncCalls[s] in call order and marks its first call.
func (h *Host) keepLongestPass(s int32, own [2]int32, role func(ci int32) ShapeRole, opNs func(ci int32) int64) {
	calls := h.SyncCalls[s]
	keep, keepNs := -1, int64(-1)
	for i, ci := range calls {
		if (ci < own[0] || ci > own[1]) && isPass(role(ci)) && opNs(ci) > keepNs {
			keep, keepNs = i, opNs(ci)
		}
	}
	if keep >= 0 {
		h.Calls[calls[keep]].Sync = noIndex
		calls = append(calls[:keep], calls[keep+1:]...)
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i] < calls[j] })
	for _, ci := range calls {
		h.Calls[ci].SyncFirst = false
	}
	h.Calls[calls[0]].SyncFirst = true
	h.SyncCalls[s] = calls
}

// shapeRun is the run of passes and neutral calls on call from's thread
// going from it in direction dir (-1 earlier, +1 later), trimmed of
// neutral calls at its far end; calls another sync claimed end it.
func (h *Host) shapeRun(from int32, dir int, role func(ci int32) ShapeRole) []int32 {
	th := h.Calls[from].Thread
	var run []int32
	for ci := int(from) + dir; ci >= 0 && ci < len(h.Calls) && len(run) < maxShapeCalls; ci += dir {
		c := &h.Calls[ci]
		if c.Thread != th {
			continue
		}
		r := role(int32(ci))
		if c.Sync >= 0 || r == ShapeOther || (r == ShapeIndex && dir < 0) {
			break
		}
		run = append(run, int32(ci))
	}
	for len(run) > 0 && !isPass(role(run[len(run)-1])) {
		run = run[:len(run)-1]
	}
	return run
}

// isPass: the call launches a pass of the op (a gather only counts after
// the read, where shapeRun lets it in).
func isPass(r ShapeRole) bool { return r == ShapePass || r == ShapeIndex }

func hasPass(run []int32, role func(ci int32) ShapeRole) bool {
	for _, ci := range run {
		if role(ci) == ShapePass {
			return true
		}
	}
	return false
}

// ReadsCount reports whether sync s reads a count: a device-to-host copy
// of at most 8 bytes.
func ReadsCount(s *trace.Sync) bool {
	return s.Copy != nil && !s.Copy.Memset && s.Copy.Direction == trace.CopyDtoH && s.Copy.Bytes > 0 && s.Copy.Bytes <= 8
}

// ShapeRoleOf is a call's role from its GPU ops' kinds and names: no op,
// a neutral call; only memsets, neutral; only passes (with memsets),
// a pass; an indexing gather among passes and memsets, an index call;
// anything else, other.
func ShapeRoleOf(ops []*trace.Op) ShapeRole {
	role := ShapeNeutral
	for _, op := range ops {
		switch {
		case op.Kind == trace.OpMemset:
		case op.Kind == trace.OpKernel && isIndexKernel(op.Name):
			role = ShapeIndex
		case op.Kind == trace.OpKernel && IsShapeKernel(op.Name):
			role = max(role, ShapePass)
		default:
			return ShapeOther
		}
	}
	return role
}
