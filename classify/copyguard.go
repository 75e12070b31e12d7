package classify

import (
	"fmt"

	"github.com/nsyssync/nsyssync/trace"
)

// An explicit stream or event synchronize right after an asynchronous copy
// to the host (the last op enqueued on its stream before it is a
// device-to-host copy, and it waited for GPU work) is how a program makes
// that copy's data safe to read: `cudaMemcpyAsync(…, D2H); …;
// cudaStreamSynchronize(s)`, `y.to("cpu", non_blocking=True);
// torch.cuda.synchronize()`, an OpenACC `update self` or copy-out followed
// by its wait. The host may read the data right after (a result, a
// convergence flag), which the trace cannot show. Such a site is at most
// unknown, unless the program's own line decides it, and a copy of more
// than a scalar counts as needed data.

// guardedCopy returns the device-to-host copy sync s guards, when the last
// op its process enqueued on the sync's stream before it is one (whether
// or not the copy had finished when the host began to wait: the wait is
// what lets the host read it).
func guardedCopy(s *trace.Sync, buf []trace.GPUOpRef) (trace.GPUOpRef, bool) {
	if s.Kind != trace.Explicit || s.Copy != nil {
		return trace.GPUOpRef{}, false
	}
	before := s.AppendGPUBefore(buf[:0])
	if len(before) == 0 {
		return trace.GPUOpRef{}, false
	}
	last := before[len(before)-1]
	if last.Kind != trace.GPUMemcpy || last.Copy != trace.CopyDtoH {
		return trace.GPUOpRef{}, false
	}
	return last, true
}

// copyGuardSite lowers a false site of explicit syncs to unknown when one of
// its syncs waits for a copy to the host (guardedCopy), unless the
// program's line decided it; the copy's bytes above a scalar become the
// site's needed data.
func copyGuardSite(site *Site, t *trace.Trace) {
	if site.Dependency != DepFalse || site.Basis == BasisSource || !site.Phase.Counted() {
		return
	}
	var buf [trace.MaxGPUBefore]trace.GPUOpRef
	found, largest, n := false, int64(0), 0
	for _, i := range site.Syncs {
		if c, ok := guardedCopy(&t.Syncs[i], buf[:]); ok {
			found, n = true, n+1
			largest = max(largest, c.Bytes)
		}
	}
	if !found {
		return
	}
	site.Dependency = DepUnknown
	if largest > maxScalarBytes {
		site.NeededCopyBytes = max(site.NeededCopyBytes, largest)
	}
	ev := fmt.Sprintf("%d of its %d syncs wait for a copy to the host (the last op on the stream before them is a device-to-host copy, up to %d bytes): "+
		"the host may read that data right after, which the trace cannot show", n, len(site.Syncs), largest)
	site.Evidence = append([]string{ev}, site.Evidence...)
	if len(site.Evidence) > maxSiteEvidence {
		site.Evidence = site.Evidence[:maxSiteEvidence]
	}
	site.Fix += " Here it waits for a copy to the host: keep the wait where the host reads the copied data; move the read (and the wait) later, " +
		"or read less often, rather than dropping it."
}
