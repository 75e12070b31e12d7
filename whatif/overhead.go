package whatif

import (
	"fmt"
	"slices"

	"github.com/nsyssync/nsyssync/trace"
)

// The profiler's per-call overhead. Every traced API call costs the
// profiled program host time that it does not cost unprofiled (CUPTI's
// callbacks on entry and exit, nsys's buffers), which shows as host time
// between the call and the thread's previous one. How much depends on
// the kind of call (a launch's callback records more than a stream
// query's), so it is kept per kind (OverheadKind) and, without a
// measurement, read off the trace (InferOverheads): the gap the profiler
// cannot avoid adding before a call is about the shortest host time
// between it and the thread's previous traced call, when the program does
// next to nothing between them. (The previous call may be of any kind:
// PyTorch and cuBLAS interleave each launch with a traced
// cuKernelGetName, so two launches are seldom consecutive.)

// OverheadKind is the kind of API call the profiler's overhead is kept
// for.
type OverheadKind uint8

// The kinds, in the order of Overheads.
const (
	// OverheadLaunch: a call that launched GPU work (kernel or graph).
	OverheadLaunch OverheadKind = iota
	// OverheadAsyncCopy: a memcpy or memset call that is not a sync.
	OverheadAsyncCopy
	// OverheadSync: a call of a sync (blocking copies included).
	OverheadSync
	// OverheadOther: any other traced call (event record, stream wait,
	// allocation, query…).
	OverheadOther
	// NumOverheadKinds is the number of kinds.
	NumOverheadKinds
)

// String is the kind's name in JSON (constants' keys).
func (k OverheadKind) String() string {
	switch k {
	case OverheadLaunch:
		return "launch"
	case OverheadAsyncCopy:
		return "async_copy"
	case OverheadSync:
		return "sync"
	}
	return "other"
}

// IsCopyCall reports whether a call of that API kind is a copy for
// OverheadKindOf (Call.Copy): a memcpy or memset.
func IsCopyCall(k trace.CallKind) bool { return k == trace.CallMemcpy || k == trace.CallMemset }

// OverheadKindOf says which kind call c is: a sync's call is a sync
// whatever its API, then a copy, then a launch.
func OverheadKindOf(c *Call) OverheadKind {
	switch {
	case c.Sync >= 0:
		return OverheadSync
	case c.Copy:
		return OverheadAsyncCopy
	case c.Launch:
		return OverheadLaunch
	}
	return OverheadOther
}

// Overheads is the profiler's host time per traced call, by OverheadKind;
// a value <= 0 takes nothing off.
type Overheads [NumOverheadKinds]int64

// Flat is the same overhead for every kind.
func Flat(ns int64) Overheads {
	var o Overheads
	for k := range o {
		o[k] = ns
	}
	return o
}

// Of is the overhead before call c.
func (o *Overheads) Of(c *Call) int64 { return o[OverheadKindOf(c)] }

// Inference bounds: a kind needs OverheadMinPairs calls that follow
// another on their thread; the estimate is the OverheadPercentile-th percentile of
// their gaps, clamped to [OverheadMinNs, OverheadMaxNs] (below, a clock's
// resolution; above, the program's own code between the calls, not the
// profiler's).
const (
	OverheadMinPairs   = 16
	OverheadPercentile = 5
	OverheadMinNs      = 500
	OverheadMaxNs      = 10_000
)

// OverheadSamples holds, per kind, the host gaps before calls of that
// kind since their thread's previous call.
type OverheadSamples [NumOverheadKinds][]int64

// AddOverheadSamples appends to s, per kind, the gap before each call
// that follows another on its thread, the call in the region (in[i]; nil:
// every call). Overlapping calls (a negative gap) are left out.
func (h *Host) AddOverheadSamples(in []bool, s *OverheadSamples) {
	for i := range h.Calls {
		c := &h.Calls[i]
		if !c.First && c.Gap >= 0 && (in == nil || in[i]) {
			k := OverheadKindOf(c)
			s[k] = append(s[k], c.Gap)
		}
	}
}

// InferredOverhead is one kind's overhead read off a trace.
type InferredOverhead struct {
	Ns int64
	// Pairs is the number of gaps it was read from; with Ok false, too
	// few (Ns is then the fallback).
	Pairs int
	Ok    bool
	// Clamped: the percentile fell outside the bounds.
	Clamped bool
}

// Source says where the value came from, for a result's constants.
func (v InferredOverhead) Source() string {
	switch {
	case !v.Ok:
		return fmt.Sprintf("default (trace: %d pairs)", v.Pairs)
	case v.Clamped:
		return fmt.Sprintf("trace (p%d of %d gaps, clamped)", OverheadPercentile, v.Pairs)
	}
	return fmt.Sprintf("trace (p%d of %d gaps)", OverheadPercentile, v.Pairs)
}

// InferOverheads reads each kind's overhead off the samples: the low
// percentile of its gaps, bounded, or fallback where it has fewer than
// OverheadMinPairs. It sorts the samples in place.
func InferOverheads(s *OverheadSamples, fallback int64) [NumOverheadKinds]InferredOverhead {
	var out [NumOverheadKinds]InferredOverhead
	for k, xs := range s {
		v := InferredOverhead{Ns: fallback, Pairs: len(xs)}
		if len(xs) >= OverheadMinPairs {
			slices.Sort(xs)
			p := xs[(len(xs)-1)*OverheadPercentile/100]
			v.Ns = min(max(p, OverheadMinNs), OverheadMaxNs)
			v.Ok, v.Clamped = true, v.Ns != p
		}
		out[k] = v
	}
	return out
}
