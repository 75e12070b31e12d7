package estimate

import (
	"github.com/nsyssync/nsyssync/classify"
)

// Bounds: which limit gave a site's saving (SiteEstimate.Bound).
const (
	// BoundCopyOverlap: the site copies data the host uses; its saving is
	// what an asynchronous copy into pinned memory overlaps with other
	// work, less than deleting the wait would save.
	BoundCopyOverlap = "copy-overlap"
	// BoundDelete: the site copies data the host uses, and deleting the
	// wait saves no more than the copy could overlap.
	BoundDelete = "delete"
)

// SavingsParts are what a site's saving is made of, each summed over its
// syncs (of a sampled estimate, extrapolated like the saving). The replay
// nets them against each other: the saving is not their sum.
type SavingsParts struct {
	// WaitNs is the host's recorded blocked time in the site's syncs: the
	// wait that removing them deletes.
	WaitNs int64 `json:"wait_ns"`
	// HostCodeNs is the host code that issues the syncs (the CPU time
	// around them in excess of the thread's typical gap between two
	// launches), which goes with them.
	HostCodeNs int64 `json:"host_code_ns"`
	// GPUIdleAfterNs is the recorded GPU idle time after the syncs
	// returned (the bubble while the host launched again), which later
	// launches, moved earlier, can fill.
	GPUIdleAfterNs int64 `json:"gpu_idle_after_ns"`
	// RewriteCostNs is the host cost of the sync-free rewrite's own calls
	// (an event record and a stream wait), where the GPU order is kept.
	RewriteCostNs int64 `json:"rewrite_cost_ns"`
	// KeptCopyNs is the GPU time of copies a rewrite keeps: pageable
	// host-to-device copies made asynchronous.
	KeptCopyNs int64 `json:"kept_copy_ns"`
	// FixedShapeSyncs counts the count reads whose fixed-shape rewrite
	// the saving models: the dynamic-shape op's passes around the read
	// go with it, one pass kept (whatif.ClaimFixedShapes).
	FixedShapeSyncs int64 `json:"fixed_shape_syncs,omitempty"`
}

// excluded reports whether site i stays out of every removable total: its
// syncs are set-up, tear-down or the profiler's own.
func excluded(site *classify.Site) bool { return site.Counting() == classify.CountNone }

// needed reports whether the site copies data the host uses.
func needed(site *classify.Site) bool { return site.Counting() == classify.CountBounded }

// siteParts sums the parts of site i's saving over its syncs in part p,
// and, for a site that copies data the host uses, the copy-overlap bound.
func (p *part) siteParts(i int, copyBound bool) (parts SavingsParts, bound int64) {
	m := p.m
	var site map[int32]bool
	if copyBound {
		site = make(map[int32]bool, len(p.siteSyncs[i]))
		for _, l := range p.siteSyncs[i] {
			site[int32(l)] = true
		}
	}
	// The loop's steps, and its last in the part: the step after it, past
	// the part's end, repeats the loop (the region samples it), so it
	// takes the mean of the steps before it, within its own wait.
	var loopNs, loopN, lastNs, lastWait int64
	lastInLoop := true
	for k, l := range p.siteSyncs[i] {
		ss := &m.syncs[l]
		parts.HostCodeNs += ss.cutBefore + ss.cutAfter
		parts.RewriteCostNs += ss.extraCost
		if ss.fixedShape {
			parts.FixedShapeSyncs++
		}
		for _, ci := range ss.calls {
			if m.calls[ci].keepOps {
				for o := m.calls[ci].opLo; o < m.calls[ci].opHi; o++ {
					parts.KeptCopyNs += m.rewrittenDur(o)
				}
			}
		}
		if !copyBound {
			continue
		}
		b, wait, inLoop := m.copyOverlap(ss, site)
		if inLoop {
			loopNs, loopN = loopNs+b, loopN+1
		}
		if k == len(p.siteSyncs[i])-1 && !inLoop {
			lastNs, lastWait, lastInLoop = b, wait, false
			continue
		}
		bound += b
	}
	switch {
	case lastInLoop:
	case loopN > 0:
		bound += max(lastNs, min(lastWait, loopNs/loopN))
	default:
		bound += lastNs
	}
	return parts, bound
}

// copyOverlap is the most the rewrite of a copy the host needs saves at
// one sync, with W the wait and K the GPU time of the compute kernels the
// thread launches before its next blocking call:
//
//   - in a loop — that next blocking call is the same site's next sync,
//     and K > 0 — the rewrite the report recommends: the copy made
//     asynchronous into a pinned double buffer (its own stream, an event
//     per buffer), the host using the previous step's data while this
//     step's GPU work and copy run (docs/estimator.md, "Copies of data the
//     host uses"). With H the host's time from the sync's return to that
//     next sync (using the data, preparing and launching the next step)
//     and G = K plus the copy itself at its recorded time (a pinned copy
//     is no slower), the written step takes H + W and the rewritten one
//     max(H, G): the saving is min(W, H + W − G), never below 0;
//   - otherwise (a copy with no next step to overlap: a result read once,
//     a copy followed by another site's wait) the host uses the data at
//     once, so only the kernels launched before its next wait run
//     alongside the copy: min(W, K). (The last step of a loop in the part
//     takes the mean of its other steps instead: siteParts.)
//
// It returns the bound, W, and whether the sync is a loop's step.
func (m *model) copyOverlap(ss *simSync, site map[int32]bool) (ns, wait int64, loop bool) {
	if len(ss.calls) == 0 {
		return 0, 0, false
	}
	first, last := &m.host.Calls[ss.calls[0]], ss.calls[len(ss.calls)-1]
	wait = m.host.Calls[last].End - first.Start
	const lookAhead = 1 << 16
	th := first.Thread
	var kernels, copies int64
	for _, ci := range ss.calls {
		for o := m.calls[ci].opLo; o < m.calls[ci].opHi; o++ {
			if op := &m.ops[o]; !op.compute {
				copies += op.dur
			}
		}
	}
	for j := last + 1; j < int32(len(m.calls)) && j <= last+lookAhead; j++ {
		c, h := &m.calls[j], &m.host.Calls[j]
		if h.Thread != th {
			continue
		}
		if h.SyncFirst || c.block >= 0 {
			if h.SyncFirst && site[h.Sync] && kernels > 0 {
				host := h.Start - m.host.Calls[last].End
				return max(0, min(wait, host+wait-kernels-copies)), wait, true
			}
			break
		}
		for o := c.opLo; o < c.opHi; o++ {
			if op := &m.ops[o]; op.compute {
				kernels += op.dur
			}
		}
	}
	return max(0, min(wait, kernels)), wait, false
}
