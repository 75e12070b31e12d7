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

// printedSite turns an unknown site of scalar reads into a likely
// logging one when the OS-runtime trace (nsys's default capture) shows
// that every one of its reads was followed by a write of the same thread
// — a print or a log line — before the thread's next CUDA call. Every
// read (and at least minPrintedReads), not most: a branch that prints only when taken (an early-stop
// message) is followed by a write some of the time, and a true dependency
// must never be called false. The syncs' own verdicts stay unknown; only
// the site, which sees them all, can tell.
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
	site.Dependency, site.Category, site.Confidence, site.Basis = DepFalse, CatLogging, 0.5, BasisHost
	ev := fmt.Sprintf("every read of this site (%d) is followed by the thread's `%s` (a print or a log line) within %s, before its next CUDA call",
		len(site.Syncs), name, time.Duration(slowest).Round(time.Microsecond))
	site.Evidence = append([]string{ev}, site.Evidence...)
	if len(site.Evidence) > maxSiteEvidence {
		site.Evidence = site.Evidence[:maxSiteEvidence]
	}
	site.Fix = "This read is printed or logged at once: keep the value on the GPU (`vals.append(t.detach())`) " +
		"and print once every N steps (`torch.stack(vals).tolist()`)."
}
