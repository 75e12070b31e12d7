package classify

import (
	"fmt"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// sampledLineConfidence is the confidence of a verdict from the program's
// places on a sampled line: the line is observed, which read on it made
// the copy is not (no native frame names it).
const sampledLineConfidence = 0.7

// onSampledLine decides a copy to the host whose Python frames come from
// a periodic sample taken while it waited (--python-sampling) and that no
// native frame or aten range names: the program's places (leanplaces.go)
// in the sampled line's statement that can make a read of its size, when
// there is one and all agree. It is the program matcher narrowed to the
// one line a sample saw, so a program whose other places disagree (a
// value logged here, another tested there) is still decided, and a line
// whose places disagree or are opaque is not. A sample inside torch's own
// Python code (f.torch) or another library is left to the rules; a program
// that imports other libraries is read all the same (unlike the whole-
// program matcher): the sample's innermost frame is the program's line,
// so that line made the read.
func (l *leanReads) onSampledLine(f *facts) (Verdict, bool) {
	if l == nil || !f.sync.PythonSampled() || f.stmt == nil || len(f.torch) > 0 || f.viaLibrary ||
		len(f.native) > 0 || len(f.aten) > 0 {
		return Verdict{}, false
	}
	c := f.copy
	if c == nil || c.Memset || foldDirection(c.Direction) != trace.CopyDtoH || c.Bytes <= 0 {
		return Verdict{}, false
	}
	fit, why := l.onStatement(f.stmt, c.Bytes)
	if why != "" {
		return Verdict{}, false
	}
	shown := make([]string, 0, len(fit))
	for _, p := range fit {
		shown = append(shown, p.what)
	}
	st := f.stmt
	ev := []string{
		sampledEvidence,
		fmt.Sprintf("the program's reading of that line: %s", strings.Join(shown, "; ")),
		callFact(f.sync), lineEvidence(st), sourceEvidence(st),
	}
	subject := fmt.Sprintf("`%s` (%s:%d)", clip(st.text), displayFile(st.file), st.line)
	return Verdict{Dependency: fit[0].dep, Category: fit[0].cat, Confidence: sampledLineConfidence, Evidence: ev,
		Rule: ruleSampledLine, Basis: BasisSource, SourceFile: st.path,
		Fix: capitalize(strings.ReplaceAll(fixOf(fit[0]), "{site}", subject))}, true
}

// ruleSampledLine names verdicts of onSampledLine.
const ruleSampledLine = "the sampled line's reads agree"

// onStatement returns the program's places inside st that can make a read
// of n bytes, when there is one, none is opaque and all agree; else why
// says why not.
func (l *leanReads) onStatement(st *statement, n int64) (fit []readPlace, why string) {
	l.load()
	if !l.listed {
		return nil, l.why
	}
	for _, p := range l.places {
		switch {
		case p.path != st.path || p.line < st.first+1 || p.line > st.last+1 || !p.fits(n):
		case p.kind == placeOpaque:
			return nil, p.what
		case len(fit) > 0 && (p.dep != fit[0].dep || p.cat != fit[0].cat):
			return nil, "its places disagree"
		default:
			fit = append(fit, p)
		}
	}
	if len(fit) == 0 {
		return nil, "no place on the line reads " + bytesWord(n) + " back"
	}
	return fit, ""
}

// sampledEvidence says where the frames of a sync came from when a
// periodic sample gave them.
const sampledEvidence = "a Python periodic sample taken on the thread while it waited (--python-sampling) names its line"
