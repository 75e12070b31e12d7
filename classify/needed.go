package classify

import (
	"fmt"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// neededCopyBytes returns the bytes a device-to-host copy of the sync
// brings to the host when they are more than a scalar: data the host uses
// (a result, an MPI buffer), which a rewrite must still copy. 0 for a
// scalar of at most 8 bytes, which can stay on the GPU, and for syncs
// without such a copy.
func neededCopyBytes(s *trace.Sync) int64 {
	c := s.Copy
	if c == nil || c.Memset || c.Direction != trace.CopyDtoH || c.Bytes <= maxScalarBytes {
		return 0
	}
	return c.Bytes
}

// explainNeeded adds to the evidence of a site that copies data the host
// uses what removing it can and cannot save.
//
// A copy the program's source shows is only stored or logged (the rule
// "copy to the host is only kept", onlyKept: every sync of the site) is not
// used at all: its site gets a false verdict and no needed bytes, so the
// rewrite it is told to make (keep it on the GPU, copy once) is what its
// saving models. A copy read once the loop that fills it is over keeps its
// needed bytes: its wait is false, its data is not.
func explainNeeded(site *Site, onlyKept bool) {
	if onlyKept && site.Dependency == DepFalse && site.Category == CatDeviceToHost {
		site.NeededCopyBytes = 0
	}
	if site.NeededCopyBytes == 0 {
		return
	}
	line := fmt.Sprintf("the host uses the %d bytes it copies (more than a scalar): the copy stays, "+
		"so the most a rewrite saves is what an asynchronous copy into pinned memory overlaps with other work", site.NeededCopyBytes)
	ev := site.Evidence
	var last []string // the file the program's line came from shows last
	if n := len(ev); n > 0 && site.SourceFile != "" && strings.HasPrefix(ev[n-1], sourcePrefix) {
		ev, last = ev[:n-1], ev[n-1:]
	}
	if len(ev)+len(last) >= maxSiteEvidence {
		ev = ev[:maxSiteEvidence-1-len(last)]
	}
	site.Evidence = append(append(ev[:len(ev):len(ev)], line), last...)
}

// allByRule says whether every sync of the tallies was decided by the rule.
func allByRule(tallies []tally, table []Verdict, rule string) bool {
	for _, tl := range tallies {
		if table[tl.id].Rule != rule {
			return false
		}
	}
	return len(tallies) > 0
}
