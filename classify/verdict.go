package classify

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nsyssync/nsyssync/program"
	"github.com/nsyssync/nsyssync/trace"
)

// Options tune the classifier.
type Options struct {
	// SourceRoot is a directory holding the profiled program's sources.
	// When set, a Python frame's file is looked up under it first, by
	// trying the path's suffixes (see Resolve), and the program's own line
	// decides what a value read back is used for.
	SourceRoot string
	// FindSources looks for the program's files without a SourceRoot too
	// (after it, when one is set): at the path each frame recorded, then by
	// the path's suffixes under the current directory and under the
	// export's directory (Trace.Path's). Only regular *.py files long
	// enough to hold the frame's line are read. nsyssync's commands set
	// it; with neither field set no file is read.
	FindSources bool
	// Program is the profiled program (package program): fixes are
	// phrased in its words. Nil: detected from the trace.
	Program *program.Program
}

// Verdict is the classifier's judgement of one sync.
type Verdict struct {
	Dependency Dependency
	Category   string
	Confidence float64
	Evidence   []string // facts, strongest first
	Fix        string
	Rule       string // the deciding rule's Name; "" when none matched
	// SourceFile is the file the program's line was read from (its
	// evidence says "source read from PATH:LINE"); "" when none was read.
	SourceFile string
	// Basis is the kind of evidence that matched the rule; BasisNone when
	// none did. Basis.Decided tells decided verdicts from likely ones.
	Basis Basis
}

// maxSiteEvidence bounds a site's evidence list.
const maxSiteEvidence = 6

// Verdicts classifies every sync of the trace, in the order of t.Syncs.
// Syncs are visited in time order per thread, so a rule may look at what
// the thread's previous sync was. Syncs with the same facts (the syncs of
// one site, mostly) share one Verdict, Evidence slice included: treat the
// verdicts as read-only.
func (o Options) Verdicts(t *trace.Trace) []Verdict {
	nm := newNames()
	ids, _, table := o.verdicts(t, nm, newSampledSites(t, nm, newPhaser(t)))
	out := make([]Verdict, len(ids))
	for i, id := range ids {
		out[i] = table[id]
	}
	return out
}

// verdicts classifies every sync once per distinct set of facts: table
// holds the distinct verdicts and ids, per sync of t.Syncs, its verdict's
// index in table. A sync costs no allocation unless its facts are new;
// nm bounds the names in the facts' keys.
//
// With sampledOf (CPU samples inside syncs), a sync without native frames
// of its own is classified with its site's sampled ones, and keyIDs gives,
// per sync, the verdict it gets without any sample, in a pass of its own
// (thread state included): the rule that names a site in its key, so that
// samples, which differ from run to run, never change a site's key, its
// syncs or its fingerprint. keyIDs is nil without sampledOf (then ids
// name the sites).
func (o Options) verdicts(t *trace.Trace, nm *names, sampledOf *sampledSites) (ids, keyIDs []int32, table []Verdict) {
	src := newSourceReader(o, t.Path)
	d := o.dialect(t)
	var lean *leanReads // the program matcher reads PyTorch and CuPy programs (leanmatch.go)
	if d == dTorch || d == dCuPy {
		lean = newLeanReads(src, t.Hints.Command)
		if src != nil {
			src.program = lean
		}
		defer lean.close()
	}
	type decided struct {
		id       int32
		printing bool
	}
	memo := map[string]decided{}
	// decide classifies a sync under the facts key, once per key.
	decide := func(key []byte, f func() *facts, s *trace.Sync) decided {
		m, ok := memo[string(key)]
		if !ok {
			v, rule := classifySync(f())
			v.Fix = phrase(d, &v, s)
			m = decided{id: int32(len(table)), printing: rule != nil && rule.Printing}
			table = append(table, v)
			memo[string(key)] = m
		}
		return m
	}
	states, plainStates := threadStates{}, threadStates{}
	symbols := newSymbolIndex()
	var key []byte
	var frameBuf []trace.Frame
	var atBuf []int
	var gpuBuf []trace.GPUOpRef
	ids = make([]int32, len(t.Syncs))
	if sampledOf != nil {
		keyIDs = make([]int32, len(t.Syncs))
	}
	order := timeOrder(t.Syncs)
	for n := range t.Syncs {
		i := n
		if order != nil {
			i = int(order[n])
		}
		s := &t.Syncs[i]
		st := states.of(s.GlobalTid)
		var native []trace.Frame
		var nativeAt []int
		if len(s.Native()) > 0 { // scratch: facts do not outlive the sync
			frameBuf = appendUserFrames(frameBuf[:0], s.Native())
			native = frameBuf
			if len(native) > 0 {
				atBuf = symbols.nativeMatches(atBuf, native)
				nativeAt = atBuf
			}
		}
		if sampledOf != nil {
			pst := plainStates.of(s.GlobalTid)
			key, gpuBuf = factsKey(key, gpuBuf, nm, s, native, nativeAt, pst.printing)
			m := decide(key, func() *facts {
				f := newFacts(nm, s, native, nativeAt, src, pst)
				f.lean = lean
				return f
			}, s)
			pst.printing = m.printing
			keyIDs[i] = m.id
		}
		// Without a backtrace of its own, the CPU samples inside its
		// site's syncs give the native frames (sampled.go).
		sampled := sampledOf.of(i)
		if len(native) == 0 && sampled != nil {
			native = sampled.frames
			atBuf = symbols.nativeMatches(atBuf, native)
			nativeAt = atBuf
		} else {
			sampled = nil
		}
		key, gpuBuf = factsKey(key, gpuBuf, nm, s, native, nativeAt, st.printing)
		if sampled != nil {
			key = sampledOf.appendKey(key, i)
		}
		m := decide(key, func() *facts {
			f := newFacts(nm, s, native, nativeAt, src, st)
			f.sampled = sampled
			f.lean = lean
			return f
		}, s)
		st.printing = m.printing
		ids[i] = m.id
	}
	return ids, keyIDs, table
}

// threadStates holds each thread's state, by globalTid.
type threadStates map[trace.GlobalTid]*threadState

// of returns the thread's state, made when it has none.
func (ts threadStates) of(tid trace.GlobalTid) *threadState {
	st := ts[tid]
	if st == nil {
		st = &threadState{}
		ts[tid] = st
	}
	return st
}

// timeOrder returns the indices of syncs sorted by start time, ties in
// index order; nil when syncs already are in that order.
func timeOrder(syncs []trace.Sync) []int32 {
	sorted := true
	for i := 1; i < len(syncs); i++ {
		if syncs[i].Start < syncs[i-1].Start {
			sorted = false
			break
		}
	}
	if sorted {
		return nil
	}
	order := make([]int32, len(syncs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(syncs[a].Start, syncs[b].Start) })
	return order
}

// factsKey identifies everything the rules and the evidence read of a
// sync, so that the syncs of one site are classified once. buf is reused.
// Names enter it in their key form (names.key): a long name costs a sync
// a few kilobytes of copying, and a distinct key its bounded size.
func factsKey(buf []byte, gpuBuf []trace.GPUOpRef, nm *names, s *trace.Sync, native []trace.Frame, nativeAt []int, printing bool) ([]byte, []trace.GPUOpRef) {
	b := strconv.AppendBool(buf[:0], printing)
	b = append(b, '|')
	b = append(b, s.Scope.String()...)
	b = strconv.AppendInt(append(b, '|'), int64(s.Stream), 10)
	b = strconv.AppendBool(append(b, '|'), s.Legacy)
	for _, c := range s.Calls() {
		b = append(append(b, '|'), nm.key(c.Name)...)
		b = strconv.AppendInt(append(b, ','), int64(c.Kind), 10)
	}
	if c := s.Copy; c != nil {
		b = strconv.AppendBool(append(b, "|copy "...), c.Memset)
		for _, n := range []int64{int64(c.Direction), int64(c.SrcKind), int64(c.DstKind), c.Bytes} {
			b = strconv.AppendInt(append(b, ' '), n, 10)
		}
		b = strconv.AppendBool(append(b, ' '), c.FromActivity)
	}
	b = appendNativeKey(append(b, "|native "...), nm, native, nativeAt)
	b = strconv.AppendBool(append(b, "|python "...), s.PythonSampled())
	for _, f := range s.Python() {
		b = append(append(b, nm.key(f.File)...), ':')
		b = strconv.AppendInt(b, f.Line, 10)
		b = append(append(append(b, ':'), nm.key(f.Function)...), 0)
	}
	b = append(b, "|nvtx "...)
	for _, r := range s.NVTX() {
		b = append(append(b, nm.key(r.Name)...), 0)
	}
	b = append(b, "|before "...)
	for _, r := range s.OpsBefore() {
		b = append(append(b, nm.key(r.Name)...), 0)
	}
	// The GPU ops around a copy decide the rules of kernels.go.
	if s.Copy != nil {
		b = append(b, "|gpu "...)
		gpuBuf = s.AppendGPUBefore(gpuBuf[:0])
		before := len(gpuBuf)
		gpuBuf = s.AppendGPUAfter(gpuBuf)
		for _, op := range gpuBuf {
			b = strconv.AppendInt(b, int64(op.Kind), 10)
			b = append(append(b, nm.key(op.Name)...), 0)
		}
		b = strconv.AppendInt(append(b, '/'), int64(before), 10)
	}
	return b, gpuBuf
}

// classifySync applies the first rule that matches.
func classifySync(f *facts) (Verdict, *Rule) {
	v, r := firstRule(f)
	if !v.Basis.Decided() {
		// A line a Python sample saw comes before what the kernels or
		// the call pattern suggest.
		if sv, ok := f.lean.onSampledLine(f); ok {
			v, r = sv, nil
		}
	}
	if f.sync.PythonSampled() && r != nil {
		v.Evidence = appendNew(v.Evidence, sampledEvidence)
	}
	if v.Dependency == DepUnknown || r != nil && r.UseGuessed {
		if lv, ok := f.lean.decide(f); ok {
			v, r = lv, nil
		} else if why := f.lean.abstention(f); why != "" && v.Dependency == DepUnknown {
			v.Evidence = append(v.Evidence, why)
		}
	}
	if f.sampled != nil { // the site's sampled call path, after what decided
		at := min(len(v.Evidence), 1)
		v.Evidence = append(v.Evidence[:at:at], append([]string{f.sampled.evidence()}, v.Evidence[at:]...)...)
	}
	// A sync inside another library is phrased at the program's call
	// into it (issue 15, item 5): the line itself did not read the value.
	if f.viaLibrary {
		if lc, ok := libraryOf(f.names, f.torch); ok {
			v.Evidence = append([]string{lc.evidence()}, v.Evidence...)
			if v.Fix != "" {
				v.Fix = lc.fix() + " What it does: " + lowerFirst(v.Fix)
			} else {
				v.Fix = lc.fix()
			}
		}
	}
	return v, r
}

// lowerFirst lower-cases the first letter of a sentence.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsUpper(r) {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

// firstRule applies the first rule that matches.
func firstRule(f *facts) (Verdict, *Rule) {
	for i := range Rules {
		r := &Rules[i]
		if ev, basis, ok := r.match(f); ok {
			v := r.verdict(f, ev)
			v.Basis = basis
			return v, r
		}
	}
	v := Verdict{Dependency: DepUnknown, Category: CatUnknown, Evidence: []string{callFact(f.sync)}, Basis: BasisNone}
	if f.stmt != nil {
		v.Evidence = append(v.Evidence, lineEvidence(f.stmt), sourceEvidence(f.stmt))
		v.SourceFile = f.stmt.path
	}
	return v, nil
}

// verdict builds the verdict of a matched rule: its evidence, the call
// pattern and the program's line, and the fix phrased for the site.
func (r *Rule) verdict(f *facts, ev []string) Verdict {
	ev = appendNew(ev, callFact(f.sync))
	subject, source := r.Subject, ""
	if f.viaLibrary {
		// The program's line called a library that made the read: the
		// rule's rewrite is the library's to make (classifySync says so).
		subject = "the library's code"
	} else if f.stmt != nil {
		ev = appendNew(appendNew(ev, lineEvidence(f.stmt)), sourceEvidence(f.stmt))
		subject = fmt.Sprintf("`%s` (%s:%d)", clip(f.stmt.text), displayFile(f.stmt.file), f.stmt.line)
		source = f.stmt.path
	}
	return Verdict{Dependency: r.Dependency, Category: r.Category, Confidence: r.Confidence, Evidence: ev,
		Fix: capitalize(strings.ReplaceAll(r.Fix, "{site}", subject)), Rule: r.Name, SourceFile: source}
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
