package classify

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// maxSampledShown bounds the frames a sampled call path shows in its
// evidence line.
const maxSampledShown = 4

// sampledStack is what the CPU samples inside a site's syncs say of its
// native stack (issue 15, item 2: nsys's default capture samples the CPU
// but records no CUDA backtrace).
type sampledStack struct {
	// frames: the program's frames of the site's most common sampled
	// stack that a majority of its samples hold, innermost first.
	frames []trace.Frame
	// samples: the samples whose stacks reached the program (past the
	// CUDA libraries' frames), of which frames is the majority.
	samples int
}

// sampledSites gives each sync without a CUDA backtrace of its own the
// sampled stack of its site; nil when no sync holds a sample.
type sampledSites struct {
	group  []int32 // per sync of the trace, its stack in stacks; -1 for none
	stacks []sampledStack
}

// newSampledSites aggregates the CPU samples (trace.Sync.Samples) over
// the sites of the syncs that have no native user frame of their own,
// site by site as Sites groups them before the rules split them (the site
// key and the phase): samples add evidence to a site, they never change
// which syncs it holds.
//
// A sample's stack is its thread's stack while it waited: CUDA's own
// frames on top (libcuda, libcudart, or cudart linked into the program,
// with the C library's clock and lock calls of a spin-wait above them),
// then the call that synchronised and its callers. sampleUserFrames keeps
// the part below CUDA's frames. The site's stack is then its most common
// one, cut to the frames that more than half of its samples hold: one
// call path of a site that several reach (a synchronising helper called
// from many places) does not speak for the others, but their common
// callers do.
func newSampledSites(t *trace.Trace, nm *names, phases *phaser) *sampledSites {
	if !anySamples(t.Syncs) {
		return nil
	}
	ss := &sampledSites{group: make([]int32, len(t.Syncs))}
	type acc struct {
		n      int
		symbol map[string]int // samples holding each symbol
		stack  map[string]int // samples of each stack, by its symbols
		first  map[string][]trace.Frame
		order  []string // stacks in the order first seen
	}
	byKey := map[string]int32{}
	var accs []*acc
	var key []byte
	var user []trace.Frame
	for i := range t.Syncs {
		s := &t.Syncs[i]
		ss.group[i] = -1
		if hasUserFrame(s.Native()) {
			continue
		}
		key = appendSiteKey(key[:0], nm, s)
		if phase, _ := phases.phase(s); phase != PhaseSteady {
			key = append(append(key, "|phase "...), phase...)
		}
		g, ok := byKey[string(key)]
		if !ok {
			g = int32(len(accs))
			byKey[string(key)] = g
			accs = append(accs, &acc{symbol: map[string]int{}, stack: map[string]int{}, first: map[string][]trace.Frame{}})
		}
		ss.group[i] = g
		a := accs[g]
		for _, st := range s.Samples() {
			user = sampleUserFrames(user[:0], st)
			if len(user) == 0 {
				continue
			}
			a.n++
			var sk strings.Builder
			seen := map[string]bool{}
			for _, f := range user {
				sk.WriteString(nm.key(f.Symbol))
				sk.WriteByte(0)
				if !seen[f.Symbol] {
					seen[f.Symbol] = true
					a.symbol[f.Symbol]++
				}
			}
			k := sk.String()
			if a.stack[k] == 0 {
				a.order = append(a.order, k)
				a.first[k] = append([]trace.Frame(nil), user...)
			}
			a.stack[k]++
		}
	}
	ss.stacks = make([]sampledStack, len(accs))
	for g, a := range accs {
		best := ""
		for _, k := range a.order {
			if best == "" || a.stack[k] > a.stack[best] {
				best = k
			}
		}
		var frames []trace.Frame
		for _, f := range a.first[best] {
			if 2*a.symbol[f.Symbol] > a.n {
				frames = append(frames, f)
			}
		}
		if len(frames) > 0 {
			ss.stacks[g] = sampledStack{frames: frames, samples: a.n}
		}
	}
	return ss
}

// anySamples reports whether a sync holds a CPU sample.
func anySamples(syncs []trace.Sync) bool {
	for i := range syncs {
		if len(syncs[i].Samples()) > 0 {
			return true
		}
	}
	return false
}

// of returns the sampled stack of sync i's site; nil when it has none.
func (ss *sampledSites) of(i int) *sampledStack {
	if ss == nil || ss.group[i] < 0 || len(ss.stacks[ss.group[i]].frames) == 0 {
		return nil
	}
	return &ss.stacks[ss.group[i]]
}

// appendKey appends what of the sampled stack the verdict reads: the
// site's group, which fixes its frames and count.
func (ss *sampledSites) appendKey(b []byte, i int) []byte {
	return strconv.AppendInt(append(b, "|sampled "...), int64(ss.group[i]), 10)
}

// sampleUserFrames appends to dst the program's frames of a sampled
// stack: those past its first run of CUDA frames from the top (frames
// above that run, such as the C library's clock_gettime of a spin-wait,
// are inside the wait too), resolved ones only; none when the stack holds
// no CUDA frame (cut short, or not in the CUDA call after all).
func sampleUserFrames(dst, stack []trace.Frame) []trace.Frame {
	i := 0
	for i < len(stack) && !isCUDAFrame(stack[i]) {
		i++
	}
	if i == len(stack) {
		return dst
	}
	for i < len(stack) && (isCUDAFrame(stack[i]) || stack[i].Unresolved) {
		i++
	}
	for _, f := range stack[i:] {
		if !f.Unresolved {
			dst = append(dst, f)
		}
	}
	return dst
}

// isCUDAFrame reports a frame of CUDA's own libraries (the driver, the
// runtime, CUPTI), or of the runtime linked into the program: its API
// entry points (cudaDeviceSynchronize, cuStreamSynchronize) and internal
// functions (__cudart1050).
func isCUDAFrame(f trace.Frame) bool {
	m := f.Module
	if strings.Contains(m, "libcuda.so") || strings.Contains(m, "libcudart") || strings.Contains(m, "libcupti") {
		return true
	}
	sym := f.Symbol
	if strings.HasPrefix(sym, "__cudart") {
		return true
	}
	upperAt := func(n int) bool { return len(sym) > n && sym[n] >= 'A' && sym[n] <= 'Z' }
	return !strings.ContainsAny(sym, ":( ") && ((strings.HasPrefix(sym, "cuda") && upperAt(4)) || (strings.HasPrefix(sym, "cu") && upperAt(2)))
}

// evidence is the sampled stack's evidence line: its count and its
// innermost frames.
func (st *sampledStack) evidence() string {
	var shown []string
	for _, f := range st.frames[:min(len(st.frames), maxSampledShown)] {
		shown = append(shown, "`"+shortSymbol(f.Symbol)+"`")
	}
	more := ""
	if len(st.frames) > maxSampledShown {
		more = " ←…"
	}
	return fmt.Sprintf("native frames from %s inside this site's syncs: %s%s", st.count(), strings.Join(shown, " ← "), more)
}

// count says how many samples the stack rests on.
func (st *sampledStack) count() string {
	if st.samples == 1 {
		return "1 CPU sample"
	}
	return fmt.Sprintf("%d CPU samples", st.samples)
}

// location is the site's place in the program as the samples show it.
func (st *sampledStack) location() Location {
	frames := make([]string, len(st.frames))
	for i, f := range st.frames {
		frames[i] = f.Symbol
	}
	return Location{Function: st.frames[0].Symbol, Frames: frames}
}
