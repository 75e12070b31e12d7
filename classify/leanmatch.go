package classify

// Reads without frames decided by the program's lines (issue 15): a lean
// or default capture, or aten ranges alone, show a read back (its size,
// its direction) but not the line that made it. The captured command
// line names the program's script; the matcher reads it and the modules
// of its own it imports (leanprogram.go), lists every place that can make
// such a read (leanplaces.go), and gives the read the verdict of those
// places only when
//
//   - the program uses torch or CuPy and is read whole: no import of
//     code it does not read (a library other than torch, CuPy, numpy and
//     the standard library), no relative import, at most maxPlaces places;
//   - no place that fits the read's size is opaque (a read whose use the
//     reading does not follow: an index or a size from a value that may be
//     a tensor, a tensor handed to math or numpy, a device not known);
//   - every place that fits agrees on the dependency and the category.
//
// Anything else leaves the read unknown. The verdict's basis is "lines"
// (not decided: reports say "likely", the CI gate leaves it out unless
// --gate-likely), its confidence 0.5, and its evidence lists the places.

import (
	"fmt"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// ruleProgramReads names the matcher's verdicts.
const ruleProgramReads = "the program's reads agree"

// minMatchedBytes: a read of one byte is a bool, which every comparison of
// tensors makes, `x in tensors` and `max(a, b)` too, with no place of the
// program to show it; the matcher takes a 1-byte read only right after a
// bool reduction (`.all()`/`.any()`, which a program calls by name), and
// leaves the others to the GPU-op rules.
const minMatchedBytes = 2

// maxPlaceEvidence bounds the places a verdict's evidence names.
const maxPlaceEvidence = 4

// leanReads is the program's places, read once per analysis (lazily: a
// trace whose reads all carry frames never reads the program). The
// program's files stay parsed until close, for the use of values read in
// them (useAt) and of attributes read across them (pyelsewhere.go).
type leanReads struct {
	src    *sourceReader
	cmd    []string
	read   bool // the program's files were read (prog, or why)
	loaded bool // the places were looked for (load)
	prog   *programTrees
	places []readPlace
	why    string // why no verdict can come from the program's places as a whole ("" when they may decide)
	// listed: the places were listed (the program was found, parses and
	// uses torch), even where why refuses them as a whole: a program that
	// imports another library may make a read inside it, but a line a
	// sample saw made its read itself (onSampledLine).
	listed bool
	script string // the script's file as read
}

func newLeanReads(src *sourceReader, cmd []string) *leanReads {
	if src == nil {
		return nil
	}
	return &leanReads{src: src, cmd: cmd}
}

// readProgram reads and parses the program's files, once.
func (l *leanReads) readProgram() {
	if l.read {
		return
	}
	l.read = true
	p, why := loadProgram(l.src, l.cmd)
	if p == nil {
		l.why = why
		return
	}
	l.prog, l.script = p, p.files[0].path
}

// load lists the program's places, once.
func (l *leanReads) load() {
	if l.loaded {
		return
	}
	l.loaded = true
	l.readProgram()
	p := l.prog
	if p == nil {
		return
	}
	if !p.importsGPUArrays() {
		l.why = "the program imports neither torch nor CuPy"
		return
	}
	l.places, l.listed = findPlaces(p), true
	switch {
	case len(l.places) > maxPlaces:
		l.places, l.listed, l.why = nil, false, fmt.Sprintf("the program has more than %d places that can read back", maxPlaces)
	case p.foreign != "":
		l.why = "the program imports " + p.foreign + ", whose code is not read"
	}
}

// close frees the program's parse trees.
func (l *leanReads) close() {
	if l != nil && l.prog != nil {
		l.prog.close()
		l.prog = nil
	}
}

// useAt is the use of the value rd read at line of sf (pyUse), on the
// program's own parse of the file where it is one of the program's, with
// what the program's other files say of attributes.
func (l *leanReads) useAt(sf *sourceFile, line int, rd pyRead) (pyOutcome, bool) {
	if l == nil {
		return sf.pyUse(line, rd, otherFiles{})
	}
	l.readProgram()
	others := l.prog.others(sf.path)
	if l.prog != nil {
		if pf := l.prog.file(sf.path); pf != nil {
			return sf.pyUseOn(pf.src, pf.root, line, rd, others), true
		}
	}
	return sf.pyUse(line, rd, others)
}

// importsGPUArrays says whether any of the program's files imports torch
// or CuPy, whose reads back the places know (leanplaces.go).
func (p *programTrees) importsGPUArrays() bool {
	for _, f := range p.files {
		for _, m := range f.imports {
			if gpuArrayModules[rootModule(m)] {
				return true
			}
		}
	}
	return false
}

// gpuArrayModules are the libraries of CUDA arrays whose reads back the
// program's places know: torch's (.item(), .cpu(), .tolist(), …) and
// CuPy's (float(x), x.item(), x.get(), cupy.asnumpy(x), x.tolist()).
var gpuArrayModules = map[string]bool{"torch": true, "cupy": true, "cupyx": true}

// eligible says whether a sync is a read the matcher may decide: a copy to
// the host that no Python frame places, of at least minMatchedBytes or a
// bool read right after a bool reduction.
func eligible(f *facts) bool {
	c := f.copy
	if c == nil || c.Memset || foldDirection(c.Direction) != trace.CopyDtoH || len(f.sync.Python()) != 0 {
		return false
	}
	return c.Bytes >= minMatchedBytes || c.Bytes == 1 && c.FromActivity && boolReduce.has(f.lastBefore())
}

// decide gives an undecided read the verdict of the program's places, when
// they allow one.
func (l *leanReads) decide(f *facts) (Verdict, bool) {
	if l == nil || !eligible(f) {
		return Verdict{}, false
	}
	n := f.copy.Bytes
	fit, why := l.agreeing(n)
	if why != "" {
		return Verdict{}, false
	}
	var shown []string
	for i, p := range fit {
		if i == maxPlaceEvidence {
			shown = append(shown, fmt.Sprintf("and %d more", len(fit)-i))
			break
		}
		shown = append(shown, p.what)
	}
	ev := []string{
		fmt.Sprintf("no frame names the line; every place of the program (%s) that can read %s back agrees: %s",
			displayFile(l.script), bytesWord(n), strings.Join(shown, "; ")),
		callFact(f.sync),
	}
	subject := fmt.Sprintf("the program's line that reads it (%s)", placeLines(fit))
	if len(fit) > 1 {
		subject = fmt.Sprintf("the program's line that reads it (one of %s)", placeLines(fit))
	}
	return Verdict{Dependency: fit[0].dep, Category: fit[0].cat, Confidence: 0.5, Evidence: ev, Rule: ruleProgramReads,
		Basis: BasisLines, SourceFile: l.script, Fix: capitalize(strings.ReplaceAll(fixOf(fit[0]), "{site}", subject))}, true
}

// abstention says why the program's lines leave an eligible read of f
// unknown, for its evidence; "" when the command line names no script.
func (l *leanReads) abstention(f *facts) string {
	if l == nil || !eligible(f) || scriptPath(l.cmd) == "" {
		return ""
	}
	_, why := l.agreeing(f.copy.Bytes)
	return why
}

// agreeing returns the program's places that can make a read of n bytes,
// when there is at least one, none is opaque and all give one verdict;
// else why says why not.
func (l *leanReads) agreeing(n int64) (fit []readPlace, why string) {
	l.load()
	if l.why != "" {
		return nil, "the program's lines decide nothing: " + l.why
	}
	for _, p := range l.places {
		switch {
		case !p.fits(n):
		case p.kind == placeOpaque:
			return nil, "the program's lines do not decide it: " + p.what
		case len(fit) > 0 && (p.dep != fit[0].dep || p.cat != fit[0].cat):
			return nil, fmt.Sprintf("the program's places that can read %s back disagree: %s (%s/%s); %s (%s/%s)",
				bytesWord(n), fit[0].what, fit[0].dep, fit[0].cat, p.what, p.dep, p.cat)
		default:
			fit = append(fit, p)
		}
	}
	if len(fit) == 0 {
		return nil, fmt.Sprintf("no place of the program (%s) reads %s back: a library it calls may", displayFile(l.script), bytesWord(n))
	}
	return fit, ""
}

// placeLines lists the places' file:line, at most maxPlaceEvidence.
func placeLines(places []readPlace) string {
	var out []string
	for i, p := range places {
		if i == maxPlaceEvidence {
			out = append(out, "…")
			break
		}
		out = append(out, fmt.Sprintf("%s:%d", displayFile(p.path), p.line))
	}
	return strings.Join(out, ", ")
}

// fixOf is the rewrite of the rule that decides such a place when its
// frames and line are known.
func fixOf(p readPlace) string {
	name := map[string]string{
		string(DepFalse) + CatLogging:      "scalar read is logged",
		string(DepFalse) + CatDeviceToHost: ruleCopyOnlyKept,
		string(DepTrue) + CatControlFlow:   "scalar read decides a branch",
		string(DepTrue) + CatDynamicShape:  "scalar read sizes a tensor",
	}[string(p.dep)+p.cat]
	for _, r := range Rules {
		if r.Name == name {
			return r.Fix
		}
	}
	return ""
}
