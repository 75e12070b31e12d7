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
	for _, l := range p.siteSyncs[i] {
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
		if copyBound {
			bound += m.copyOverlap(ss)
		}
	}
	return parts, bound
}

// copyOverlap is the most an asynchronous copy into pinned memory could
// save at one sync whose device-to-host copy the host needs: the wait
// hidden behind the GPU work that can run while the copy is in flight —
// the kernels the thread launches before its next blocking call, which a
// rewrite (the copy on its own stream into a second buffer) runs
// alongside the copy — and never more than the wait. The copy itself
// stays, and so does the host's wait for it: the host code right after a
// needed copy is taken to use the data, so it overlaps nothing.
func (m *model) copyOverlap(ss *simSync) int64 {
	if len(ss.calls) == 0 {
		return 0
	}
	first, last := &m.host.Calls[ss.calls[0]], ss.calls[len(ss.calls)-1]
	wait := m.host.Calls[last].End - first.Start
	const lookAhead = 1 << 16
	th := first.Thread
	var gpu int64
	for j := last + 1; j < int32(len(m.calls)) && j <= last+lookAhead; j++ {
		c, h := &m.calls[j], &m.host.Calls[j]
		if h.Thread != th {
			continue
		}
		if h.SyncFirst || c.block >= 0 {
			break
		}
		for o := c.opLo; o < c.opHi; o++ {
			if op := &m.ops[o]; op.compute {
				gpu += op.dur
			}
		}
	}
	return max(0, min(wait, gpu))
}
