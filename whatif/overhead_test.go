package whatif

import (
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

func TestIsCopyCall(t *testing.T) {
	for k, want := range map[trace.CallKind]bool{trace.CallMemcpy: true, trace.CallMemset: true,
		trace.CallStreamSync: false, trace.CallFree: false, trace.CallOther: false} {
		if got := IsCopyCall(k); got != want {
			t.Errorf("IsCopyCall(%v) = %v, want %v", k, got, want)
		}
	}
}

func TestOverheadKindOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Call
		want OverheadKind
	}{
		{"launch", Call{Sync: noIndex, Launch: true}, OverheadLaunch},
		{"async copy", Call{Sync: noIndex, Copy: true, Launch: true}, OverheadAsyncCopy},
		{"a sync's copy is a sync", Call{Sync: 2, Copy: true}, OverheadSync},
		{"other", Call{Sync: noIndex}, OverheadOther},
	} {
		if got := OverheadKindOf(&tc.c); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// gaps returns n gaps lo, lo+step, ….
func gaps(n int, lo, step int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = lo + int64(i)*step
	}
	return out
}

func TestInferOverheads(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gaps    []int64
		want    InferredOverhead
		wantSrc string
	}{
		{"too few pairs: fallback", gaps(OverheadMinPairs-1, 1_000, 10), InferredOverhead{Ns: 3_700, Pairs: OverheadMinPairs - 1}, "default (trace: 15 pairs)"},
		// 100 gaps 1,000…10,900 ns: the 5th percentile is the 5th (index 4).
		{"low percentile", gaps(100, 1_000, 100), InferredOverhead{Ns: 1_400, Pairs: 100, Ok: true}, "trace (p5 of 100 gaps)"},
		{"clamped up", gaps(20, 10, 1), InferredOverhead{Ns: OverheadMinNs, Pairs: 20, Ok: true, Clamped: true}, "trace (p5 of 20 gaps, clamped)"},
		{"clamped down", gaps(20, 50_000, 1), InferredOverhead{Ns: OverheadMaxNs, Pairs: 20, Ok: true, Clamped: true}, "trace (p5 of 20 gaps, clamped)"},
	} {
		var s OverheadSamples
		s[OverheadSync] = tc.gaps
		got := InferOverheads(&s, 3_700)
		if got[OverheadSync] != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got[OverheadSync], tc.want)
		}
		if src := got[OverheadSync].Source(); src != tc.wantSrc {
			t.Errorf("%s: source %q, want %q", tc.name, src, tc.wantSrc)
		}
		if got[OverheadLaunch].Ok || got[OverheadLaunch].Ns != 3_700 {
			t.Errorf("%s: a kind with no gaps: %+v, want the fallback", tc.name, got[OverheadLaunch])
		}
	}
}

func TestAddOverheadSamples(t *testing.T) {
	h := NewHost(4, 1)
	h.Add(1, 0, 100)   // first call of its thread: no gap
	h.Add(1, 300, 400) // launch, gap 200
	h.Add(2, 350, 360) // first of thread 2
	h.Add(1, 390, 900) // overlaps the call before it: left out
	h.Add(1, 1_000, 1_100)
	h.Calls[1].Launch = true
	h.ClaimSyncCall(0, 4) // a sync, gap 100
	var s OverheadSamples
	h.AddOverheadSamples(nil, &s)
	if len(s[OverheadLaunch]) != 1 || s[OverheadLaunch][0] != 200 || len(s[OverheadSync]) != 1 || s[OverheadSync][0] != 100 || len(s[OverheadOther]) != 0 {
		t.Errorf("samples %v", s)
	}
	var in OverheadSamples
	h.AddOverheadSamples([]bool{true, false, true, true, true}, &in)
	if len(in[OverheadLaunch]) != 0 || len(in[OverheadSync]) != 1 {
		t.Errorf("samples of the region's calls %v", in)
	}
}
