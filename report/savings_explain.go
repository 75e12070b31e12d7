package report

import (
	"fmt"
	"strings"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/internal/format"
)

// SavingsExplanation says in one line what a site's saving includes: for
// a site of set-up, tear-down or the profiler, why it counts nowhere; for
// one that copies data the host uses, the bound that applies; else the
// wait, the host code that goes with it, the GPU idle after it, and why
// the saving can exceed the blocked time. "" without estimates, unless
// the site's phase alone explains it.
func (a *Analysis) SavingsExplanation(s *classify.Site) string {
	if !s.Phase.Counted() {
		text := "not counted in any total or the gate: " + s.Phase.Label() + ", " + s.PhaseReason
		if e, ok := a.siteEstimate(s); ok && e.UncountedNs > 0 {
			text += fmt.Sprintf("; deleting its waits would save %s", signedDuration(e.UncountedNs))
		}
		return text
	}
	if s.HostRead != "" {
		text := "not counted in any total: the host may read managed or mapped memory after these waits (" + s.HostRead + ")"
		if e, ok := a.siteEstimate(s); ok && e.UncountedNs > 0 {
			text += fmt.Sprintf("; deleting them would save %s where nothing is read", signedDuration(e.UncountedNs))
		}
		return text
	}
	e, ok := a.siteEstimate(s)
	if !ok {
		return ""
	}
	p := e.Parts
	if s.NeededCopyBytes > 0 {
		overlap := fmt.Sprintf("an asynchronous copy into a pinned double buffer, the host using the previous step's data while the GPU runs the next, saves at most %s",
			format.Duration(e.CopyBoundNs))
		if e.Bound == estimate.BoundCopyOverlap {
			return fmt.Sprintf("needed data: the host uses the %s it copies, so the copy and the wait for it stay; %s "+
				"(deleting the wait would save %s, but only by dropping the copy)", bytesText(s.NeededCopyBytes), overlap, signedDuration(e.DeleteNs))
		}
		return fmt.Sprintf("needed data: the host uses the %s it copies; deleting the wait saves %s, within what %s",
			bytesText(s.NeededCopyBytes), signedDuration(e.SavingsNs), strings.TrimPrefix(overlap, "an "))
	}
	// The replay nets the parts: what is left after the wait, the host
	// code and the rewrite's calls is later work moving earlier (> 0) or
	// work the host still waits for (< 0).
	rest := e.SavingsNs - p.WaitNs - p.HostCodeNs + p.RewriteCostNs
	text := savesText(e.SavingsNs) + ": the wait " + format.Duration(p.WaitNs)
	if p.HostCodeNs > 0 {
		text += " + the host code that issues it " + format.Duration(p.HostCodeNs)
	}
	if p.RewriteCostNs > 0 {
		text += " − the rewrite's own calls " + format.Duration(p.RewriteCostNs)
	}
	switch {
	case rest > 0:
		text += fmt.Sprintf(" + %s as later launches move earlier", format.Duration(rest))
	case rest < 0:
		text += fmt.Sprintf(" − %s still waited for", format.Duration(-rest))
		if p.KeptCopyNs > 0 {
			text += " (the copy stays, made asynchronous: " + format.Duration(p.KeptCopyNs) + " on the GPU)"
		} else {
			text += " (the GPU work the sync waited for still has to finish before later work)"
		}
	}
	if p.GPUIdleAfterNs > 0 {
		text += "; the GPU idled " + format.Duration(p.GPUIdleAfterNs) + " after these syncs in the recording"
	}
	if e.SavingsNs > p.WaitNs {
		text += "; more than the blocked time, because the host code around the sync goes with it"
		if rest > 0 {
			text += " and later work starts earlier"
		}
	}
	return text
}

// savesText heads a saving's explanation: "saves 1.2ms", "saves
// nothing", or, where the rewrite costs more than the sync, "costs 8.7µs".
func savesText(ns int64) string {
	switch {
	case ns > 0:
		return "saves " + format.Duration(ns)
	case ns == 0:
		return "saves nothing"
	}
	return "costs " + format.Duration(-ns)
}

// siteEstimate is the site's estimate, if the estimator ran and has one.
func (a *Analysis) siteEstimate(s *classify.Site) (SiteEstimate, bool) {
	if a.Estimates == nil {
		return SiteEstimate{}, false
	}
	e, ok := a.Estimates.Sites[s.ID]
	return e, ok
}

// bytesText formats a byte count for a sentence ("512.0 MB").
func bytesText(n int64) string {
	switch {
	case n >= 1_000_000_000:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return plural(int(n), "byte", "bytes")
}
