package classify

// What a test of a value decides when its arms only record, return or
// pick (pyrecords.go, pyleaves.go, pytext.go, pypure.go, pystate.go),
// with the guard against a test reached again through what its own arms
// store (docs/classifier.md, "Dict entries, early returns and search
// loops (stop 32)").

import sitter "github.com/tree-sitter/go-tree-sitter"

// testFlow is the flow of an if or elif test that only picks what is
// returned or recorded, or what a method's state becomes (stateFlow);
// ok is false for a test that decides anything else. A test reached again
// while its own arms are followed (`if v < w["best"]: w["best"] = v`: what
// the arm stores is read by the same test) is a cycle: what the arm
// stores decides nothing new there. A test answered when no other was
// open keeps its answer: reached again along another path, deeper, it is
// the same test of the same arms.
func (a *pyAnalysis) testFlow(p *sitter.Node, depth int) (flow, bool) {
	span, m := a.spanOf(p), a.testMemo()
	if fl, ok := m.done[span]; ok {
		return fl, true
	}
	if m.open[span] {
		return flow{use: UseLog, neutral: true}, true
	}
	outermost := len(m.open) == 0 && a.methodDepth == 0 // stateFlow's answer depends on the method followed
	m.open[span] = true
	fl, ok := a.testFlowOf(p, depth)
	delete(m.open, span)
	if ok && outermost {
		m.done[span] = fl
	}
	return fl, ok
}

// testFlowOf is testFlow without the cycle's guard.
func (a *pyAnalysis) testFlowOf(p *sitter.Node, depth int) (flow, bool) {
	if a.picksReturnedText(p) || a.picksReturnedValue(p) {
		return flow{returned: true}, true // the text or value returned carries it on
	}
	if fl, ok := a.onlyRecords(p, depth); ok {
		return fl, true
	}
	if fl, ok := a.recordsThenReturns(p, depth); ok {
		return fl, true
	}
	if fl, ok := a.recordsThenLeaves(p, depth); ok {
		return fl, true
	}
	if fl, ok := a.searchPick(p, depth); ok {
		return fl, true
	}
	if a.methodDepth > 0 || inMethod(p) {
		if fl, ok := a.stateFlow(p, depth); ok {
			return fl, true // a test or a size of what the arms set, else unknown (pystate.go)
		}
	}
	return flow{}, false
}

// testMemo holds the tests being followed (open) and those answered
// (done) for testFlow.
type testMemo struct {
	open map[nodeSpan]bool
	done map[nodeSpan]flow
}

// testMemo is the analysis's memo of tests, shared with the analyses of
// the program's other files (analysisOf).
func (a *pyAnalysis) testMemo() *testMemo {
	if a.tests == nil {
		a.tests = &testMemo{open: map[nodeSpan]bool{}, done: map[nodeSpan]flow{}}
	}
	return a.tests
}

// nodeSpan is where a node lies, in which parsed file (its root's id): the
// key of a node in a map shared by the analyses of a program's files.
type nodeSpan struct {
	file       uintptr
	start, end uint
}

// spanOf is n's span in the file whose root is a.root.
func (a *pyAnalysis) spanOf(n *sitter.Node) nodeSpan {
	return nodeSpan{a.root.Id(), n.StartByte(), n.EndByte()}
}
