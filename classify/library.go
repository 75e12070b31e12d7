package classify

import (
	"fmt"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// libraryCall is where a sync made inside another library (not torch, not
// the program) entered it: the library's function the program called, and
// the function of it that synchronized.
type libraryCall struct {
	library string        // the package: "transformers"
	entry   trace.PyFrame // the library's outermost frame: what the program called
	inner   trace.PyFrame // its innermost frame: where the read was made
}

// libraryOf finds the library frames between the program's first frame
// and torch's (torch frames innermost first, as facts.torch holds them);
// ok is false when only torch's own frames are there.
func libraryOf(nm *names, frames []trace.PyFrame) (libraryCall, bool) {
	var lc libraryCall
	found := false
	for _, fr := range frames {
		if isTorchFile(nm.cleanFile(fr.File)) {
			continue
		}
		if !found {
			lc.inner = fr
		}
		lc.entry, found = fr, true
	}
	if !found {
		return lc, false
	}
	lc.library, _, _ = strings.Cut(shortFile(lc.entry.File), "/")
	return lc, true
}

// evidence says where in the library the sync is.
func (lc libraryCall) evidence() string {
	if lc.inner == lc.entry {
		return fmt.Sprintf("inside %s: `%s` (%s:%d), which the program calls", lc.library, shownName(lc.entry.Function),
			shortFile(lc.entry.File), lc.entry.Line)
	}
	return fmt.Sprintf("inside %s: `%s` (%s:%d), reached from `%s` (%s:%d), which the program calls", lc.library,
		shownName(lc.inner.Function), shortFile(lc.inner.File), lc.inner.Line,
		shownName(lc.entry.Function), shortFile(lc.entry.File), lc.entry.Line)
}

// fix phrases the rewrite at the program's call into the library.
func (lc libraryCall) fix() string {
	fn := shownName(lc.entry.Function)
	return fmt.Sprintf("This sync is made inside `%s()` of %s, not by the program's own line: look for an option of `%s()` that avoids it, "+
		"call it less often (out of the hot loop), or keep it where the library needs the value.", fn, lc.library, fn)
}
