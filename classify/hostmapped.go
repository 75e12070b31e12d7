package classify

import (
	"github.com/nsyssync/nsyssync/trace"
)

// hostMappedSite lowers to unknown the site of explicit syncs that a
// process using managed or device-mapped host memory makes (trace's
// HostMapped), unless its verdict is already true or rests on decided
// evidence: after such a wait the host may read what the GPU wrote — a
// flag, a count, a result — with no copy call in the trace to show the
// read, so the call pattern cannot say the wait is removable. Its
// HostRead says why, and keeps it out of every removable total
// (Counting).
func hostMappedSite(site *Site, t *trace.Trace) {
	if len(t.HostMapped) == 0 || !site.Phase.Counted() || site.Dependency == DepTrue || site.Decided() || len(site.Syncs) == 0 {
		return
	}
	var why string
	for _, i := range site.Syncs {
		s := &t.Syncs[i]
		w, ok := t.HostMapped[s.GlobalPid]
		if !ok || s.Kind != trace.Explicit || s.Copy != nil {
			return
		}
		if why == "" {
			why = w
		}
	}
	site.Dependency, site.HostRead = DepUnknown, why
	ev := "the process uses memory the host reads without a copy call (" + why + "): after this wait the host may read what the GPU wrote " +
		"(a flag, a count, a result), which the trace cannot show, so the wait is not counted as removable"
	site.Evidence = append([]string{ev}, site.Evidence...)
	if len(site.Evidence) > maxSiteEvidence {
		site.Evidence = site.Evidence[:maxSiteEvidence]
	}
	site.Fix += " This process reads managed or mapped memory without copies: keep the wait wherever the host reads such memory after it; only the waits followed by no such read can go."
}
