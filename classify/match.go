package classify

import (
	"fmt"
	"path"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// facts are what the export says about one sync, in the forms the rules
// read.
type facts struct {
	names    *names
	sync     *trace.Sync
	native   []trace.Frame    // the program's native frames, innermost first
	nativeAt []int            // per native signature (nativeWants), the innermost frame holding it, or -1
	torch    []trace.PyFrame  // Python frames before the program's first one, innermost first
	own      []trace.PyFrame  // the program's Python frames, innermost first
	aten     []string         // enclosing aten ops, outer to inner, without ", seq = …"
	before   []op             // ops that ran since the thread's previous sync
	copy     *trace.Copy      // the copy or memset, if any
	calls    []trace.CallKind // kinds of the calls, in order
	state    *threadState     // what the thread's previous sync was
	src      *sourceReader    // nil without a source root
	stmt     *statement       // the program's statement at its innermost frame
	use      *useResult       // what the line does with the value read
	useSet   bool             // use was worked out
	// viaLibrary: a frame of another library (not torch) sits between the
	// program's line and the sync, so the value read is not the one the
	// line sees (transformers' generate() checks its own flags).
	viaLibrary bool
	// gpuBefore, gpuAfter: the GPU ops enqueued on the sync's stream just
	// before and just after it (trace.Sync.GPUBefore, GPUAfter).
	gpuBefore, gpuAfter []trace.GPUOpRef
	// sampled: native is the sampled stack of the sync's site (CPU
	// samples inside its syncs), not a backtrace of its own; nil otherwise.
	sampled *sampledStack
	// lean: the program's places, for a read without frames that no rule
	// decides (leanmatch.go); nil without a source reader.
	lean *leanReads
}

// op is one NVTX range that ran before the sync.
type op struct {
	name string // without ", seq = …, op_id = …"
	grad bool   // has a "seq =": ran with autograd recording
}

// threadState carries what the previous sync of a thread was.
type threadState struct {
	printing bool
}

func newFacts(nm *names, s *trace.Sync, native []trace.Frame, nativeAt []int, src *sourceReader, st *threadState) *facts {
	f := &facts{names: nm, sync: s, native: native, nativeAt: nativeAt, src: src, state: st, copy: s.Copy,
		gpuBefore: s.GPUBefore(), gpuAfter: s.GPUAfter()}
	for _, c := range s.Calls() {
		f.calls = append(f.calls, c.Kind)
	}
	if py := s.Python(); len(py) > 0 {
		first := -1
		for i, fr := range py {
			if !nm.isLibrary(fr.File) {
				first = i
				break
			}
		}
		if first < 0 {
			f.torch = py
		} else {
			f.torch = py[:first]
			for _, fr := range f.torch {
				if !isTorchFile(nm.cleanFile(fr.File)) {
					f.viaLibrary = true
					break
				}
			}
			for _, fr := range py[first:] {
				if !nm.isLibrary(fr.File) {
					f.own = append(f.own, fr)
				}
			}
		}
	}
	for _, r := range s.NVTX() {
		if name, _, ok := atenName(r.Name); ok {
			f.aten = append(f.aten, name)
		}
	}
	for _, r := range s.OpsBefore() {
		name, grad, _ := atenName(r.Name)
		f.before = append(f.before, op{name: name, grad: grad})
	}
	if src != nil && len(f.own) > 0 {
		if stmt, ok := src.statement(f.own[0].File, f.own[0].Line); ok {
			f.stmt = &stmt
		}
	}
	return f
}

// isTorchFile reports whether a cleaned frame file is torch's own: under
// site-packages/torch/ when installed (a virtualenv in /opt/torch/ holds
// other libraries too), else in a torch/ directory (a checkout).
func isTorchFile(file string) bool {
	for _, dir := range []string{"/site-packages/", "/dist-packages/"} {
		if i := strings.LastIndex(file, dir); i >= 0 {
			return strings.HasPrefix(file[i+len(dir):], "torch/")
		}
	}
	return strings.Contains(file, "/torch/") || strings.HasPrefix(file, "torch/")
}

// atenName strips the ", seq = N, op_id = N" that emit_nvtx appends and
// says whether a seq was there; ok is false for ranges that are no aten op.
func atenName(raw string) (name string, grad, ok bool) {
	name = raw
	if i := strings.Index(raw, ", "); i >= 0 {
		name = raw[:i]
		grad = strings.Contains(raw[i:], "seq =")
	}
	return name, grad, strings.HasPrefix(name, "aten::")
}

// match applies one rule to a sync's facts: the evidence that matched and
// its basis.
func (r *Rule) match(f *facts) ([]string, Basis, bool) {
	var ev []string
	basis := BasisPattern
	hasSignature := len(r.Python) > 0 || len(r.ATen) > 0 || len(r.Native) > 0 || r.When != nil || r.GPU != nil
	if hasSignature {
		e, b, ok := r.signature(f)
		if !ok {
			return nil, BasisNone, false
		}
		ev, basis = append(ev, e...), b
	}
	if r.Use != UseNone {
		if f.viaLibrary {
			return nil, BasisNone, false // the line does not use this value
		}
		u := f.useOfValue()
		if u == nil || u.use != r.Use {
			return nil, BasisNone, false
		}
		ev, basis = append(ev, u.evidence...), BasisSource
	}
	if !r.Pattern.holds(f) {
		return nil, BasisNone, false
	}
	return ev, basis, true
}

// signature tries the rule's signatures, strongest evidence first.
func (r *Rule) signature(f *facts) ([]string, Basis, bool) {
	for _, want := range r.Python {
		file, fn, _ := strings.Cut(want, ":")
		for _, fr := range f.torch {
			if strings.HasSuffix(f.names.cleanFile(fr.File), file) && (fn == "" || fr.Function == fn) {
				return []string{fmt.Sprintf("Python frame `%s:%d %s`", shortFile(fr.File), fr.Line, shownName(fr.Function))}, BasisBacktrace, true
			}
		}
	}
	if r.When != nil {
		if ev, ok := r.When(f); ok {
			return ev, BasisNVTX, true
		}
	}
	for _, want := range r.ATen {
		if contains(f.aten, want) {
			return []string{fmt.Sprintf("NVTX range `%s`", want)}, BasisNVTX, true
		}
	}
	if r.GPU != nil {
		if ev, ok := r.GPU(f); ok {
			return ev, BasisKernels, true
		}
	}
	for _, want := range r.Native { // the most telling name first
		if j := f.nativeFrame(want); j >= 0 {
			if f.sampled != nil {
				return []string{fmt.Sprintf("native frame `%s` in %s inside this site's syncs", shortSymbol(f.native[j].Symbol), f.sampled.count())}, BasisSamples, true
			}
			return []string{fmt.Sprintf("native frame `%s`", shortSymbol(f.native[j].Symbol))}, BasisBacktrace, true
		}
	}
	return nil, BasisNone, false
}

// nativeFrame returns the innermost native frame holding a signature of
// the table, -1 when none does.
func (f *facts) nativeFrame(want string) int {
	if w, ok := nativeWants[want]; ok && w < len(f.nativeAt) {
		return f.nativeAt[w]
	}
	return -1
}

// holds checks the call pattern.
func (p Pattern) holds(f *facts) bool {
	if p.Call != trace.CallOther {
		if len(f.calls) == 0 || f.calls[len(f.calls)-1] != p.Call {
			return false
		}
	}
	if p.Alone && f.copy != nil {
		return false
	}
	if p.Copy == trace.CopyUnknown {
		return true
	}
	c := f.copy
	if c == nil || c.Memset || foldDirection(c.Direction) != p.Copy {
		return false
	}
	host := c.DstKind
	if p.Copy == trace.CopyHtoD {
		host = c.SrcKind
	}
	switch p.Host {
	case Pageable:
		if host != trace.MemPageable || !c.FromActivity {
			return false
		}
	case Pinned:
		if host != trace.MemPinned {
			return false
		}
	}
	if (p.MinBytes > 0 || p.MaxBytes > 0) && !c.FromActivity {
		return false // size unknown
	}
	return c.Bytes >= p.MinBytes && (p.MaxBytes == 0 || c.Bytes <= p.MaxBytes)
}

// foldDirection folds array and unified copies into host/device directions.
func foldDirection(k trace.CopyKind) trace.CopyKind {
	switch k {
	case 4, 12: // AtoH, unified DtoH
		return trace.CopyDtoH
	case 3, 11: // HtoA, unified HtoD
		return trace.CopyHtoD
	case 5, 6, 7, 13: // AtoA, AtoD, DtoA, unified DtoD
		return trace.CopyDtoD
	}
	return k
}

// callFact describes the sync's calls in words: the call-pattern evidence.
func callFact(s *trace.Sync) string {
	names := s.APIs()
	for i, n := range names {
		names[i] = shownName(n)
	}
	apis := strings.Join(names, " + ")
	if c := s.Copy; c != nil && !c.Memset && c.FromActivity {
		switch foldDirection(c.Direction) {
		case trace.CopyDtoH:
			return fmt.Sprintf("%s D2H copy of %s (%s)", memWord(c.DstKind), bytesWord(c.Bytes), apis)
		case trace.CopyHtoD:
			return fmt.Sprintf("H2D copy of %s from %s memory (%s)", bytesWord(c.Bytes), memWord(c.SrcKind), apis)
		}
	}
	switch {
	case s.Scope == trace.ScopeContext:
		return apis + ": waits for every stream of the device"
	case s.Scope == trace.ScopeEvent:
		return fmt.Sprintf("%s: waits for the work before an event record on stream %d", apis, s.Stream)
	case s.Stream >= 0 && s.Legacy:
		return fmt.Sprintf("%s of the legacy default stream %d", apis, s.Stream)
	case s.Stream >= 0:
		return fmt.Sprintf("%s of stream %d", apis, s.Stream)
	}
	return apis
}

func bytesWord(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

func memWord(k trace.MemKind) string {
	if k == trace.MemUnknown {
		return "unknown-memory"
	}
	return k.String()
}

// shortSymbol drops a C++ symbol's return type and parameter list. Of a
// symbol longer than maxNameBytes only the head is read, and shown.
func shortSymbol(sym string) string {
	const anon, placeholder = "(anonymous namespace)", "\x00anon\x00"
	clipped := len(sym) > maxNameBytes
	if clipped {
		sym = headClip(sym, maxNameBytes)
	}
	sym = strings.ReplaceAll(sym, anon, placeholder)
	sym = strings.ReplaceAll(cutSymbol(sym), placeholder, anon)
	if clipped && !strings.HasSuffix(sym, "…") {
		sym += "…"
	}
	return sym
}

func cutSymbol(sym string) string {
	depth := 0
	cut := len(sym)
	for i, r := range sym {
		switch r {
		case '<':
			depth++
		case '>':
			depth--
		case '(':
			if depth == 0 && i > 0 {
				cut = i
			}
		}
		if cut != len(sym) {
			break
		}
	}
	s := sym[:cut]
	depth = 0
	start := 0
	for i, r := range s {
		switch r {
		case '<':
			depth++
		case '>':
			depth--
		case ' ':
			if depth == 0 {
				start = i + 1
			}
		}
	}
	return s[start:]
}

// displayFile names a frame's file in evidence: an installed library by
// its package path, the program's own file by its base name; at most
// maxNameBytes of its end.
func displayFile(file string) string {
	if isLibraryFile(file) {
		return shortFile(file)
	}
	return path.Base(strings.ReplaceAll(shownFile(file), `\`, "/"))
}

// shortFile shortens an installed library path to its package path; at
// most maxNameBytes of its end.
func shortFile(file string) string {
	file = strings.ReplaceAll(shownFile(file), `\`, "/")
	for _, marker := range []string{"/site-packages/", "/dist-packages/"} {
		if i := strings.LastIndex(file, marker); i >= 0 {
			return file[i+len(marker):]
		}
	}
	// the standard library: /usr/lib/python3.12/logging/__init__.py
	if i := strings.LastIndex(file, "/lib/python"); i >= 0 {
		if j := strings.IndexByte(file[i+len("/lib/python"):], '/'); j >= 0 {
			return file[i+len("/lib/python")+j+1:]
		}
	}
	return file
}
