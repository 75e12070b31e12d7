package estimate

import (
	"context"
	"fmt"

	"github.com/nsyssync/nsyssync/classify"
)

// siteEstimates estimates each site's syncs removed alone.
func (e *estimator) siteEstimates(ctx context.Context, sites []classify.Site) error {
	var events int64
	for _, p := range e.parts {
		events += int64(len(p.m.calls) + len(p.m.ops))
	}
	work := events * int64(len(sites))
	for i := range sites {
		est := SiteEstimate{ID: sites[i].ID, Syncs: len(e.siteIdx[i])}
		samples, err := e.siteSavings(ctx, i, work, &est, needed(&sites[i]))
		if err != nil {
			return fmt.Errorf("site %s: %w", sites[i].ID, err)
		}
		e.bound(&sites[i], &est)
		if !excluded(&sites[i]) {
			est.Interval = siteInterval(samples, len(e.siteIdx[i]), &est)
		}
		est.DeleteSavingsFraction = e.fraction(est.DeleteSavingsNs)
		est.SavingsFraction = e.fraction(est.SavingsNs)
		e.res.Sampled = e.res.Sampled || est.Sampled
		e.res.Sites = append(e.res.Sites, est)
	}
	return nil
}

// siteSavings replays site i's syncs removed, in every part that holds
// some (in a sampled region: the time windows, else the site's own
// windows), whole while the work allows, else in windows around chunks
// of occurrences; a sampled region's saving is extrapolated to all the
// site's occurrences. It returns the savings of the chunk windows the
// site's interval rests on (replayed for it alone after a whole replay).
func (e *estimator) siteSavings(ctx context.Context, i int, work int64, est *SiteEstimate, copyBound bool) ([]chunkSaving, error) {
	var samples []chunkSaving
	var saved, bound int64
	var parts SavingsParts
	replayed := 0
	for _, p := range e.partsFor(i) {
		syncs := p.siteSyncs[i]
		pp, b := p.siteParts(i, copyBound)
		parts.HostCodeNs += pp.HostCodeNs
		parts.RewriteCostNs += pp.RewriteCostNs
		parts.KeptCopyNs += pp.KeptCopyNs
		parts.FixedShapeSyncs += pp.FixedShapeSyncs
		bound += b
		var s int64
		var err error
		var cs []chunkSaving
		if work <= e.opt.MaxFullWork {
			s, err = p.savings(ctx, syncs)
			if e.sampled {
				est.Windows++
			}
			if err == nil {
				cs, err = p.intervalSamples(ctx, syncs, e.opt)
			}
		} else {
			var smp bool
			s, cs, smp, err = p.windowed(ctx, syncs, e.opt)
			est.Windows += len(cs)
			est.Sampled = est.Sampled || smp
		}
		if err != nil {
			return nil, err
		}
		samples = append(samples, cs...)
		saved += s
		replayed += len(syncs)
	}
	est.SavingsNs = saved
	if e.sampled {
		est.Sampled = true
		all := len(e.siteIdx[i])
		est.SavingsNs = extrapolate(saved, all, replayed)
		bound = extrapolate(bound, all, replayed)
		parts.HostCodeNs = extrapolate(parts.HostCodeNs, all, replayed)
		parts.RewriteCostNs = extrapolate(parts.RewriteCostNs, all, replayed)
		parts.KeptCopyNs = extrapolate(parts.KeptCopyNs, all, replayed)
		parts.FixedShapeSyncs = extrapolate(parts.FixedShapeSyncs, all, replayed)
	}
	for _, si := range e.siteIdx[i] {
		s := &e.t.Syncs[si]
		parts.WaitNs += s.Duration()
		if !s.Gap.DeviceBusy && s.Gap.IdleAfterNs > 0 {
			parts.GPUIdleAfterNs += s.Gap.IdleAfterNs
		}
	}
	est.Parts = parts
	if copyBound {
		est.CopyOverlapBoundNs = bound
	}
	return samples, nil
}

// bound applies to a site's replayed saving the limits of what a rewrite
// can remove: none for a site of set-up, tear-down or the profiler (its
// saving is kept apart), at most the copy-overlap bound for a site that
// copies data the host uses.
func (e *estimator) bound(site *classify.Site, est *SiteEstimate) {
	est.DeleteSavingsNs = est.SavingsNs
	switch {
	case excluded(site):
		est.Phase = string(site.Phase)
		est.UncountedSavingsNs, est.SavingsNs = est.SavingsNs, 0
	case needed(site):
		est.Bound = BoundDelete
		if est.CopyOverlapBoundNs < est.SavingsNs {
			est.SavingsNs, est.Bound = est.CopyOverlapBoundNs, BoundCopyOverlap
		}
	}
}

// extrapolate scales a saving measured over replayed occurrences to all
// of them.
func extrapolate(saved int64, all, replayed int) int64 {
	if replayed == 0 || all == replayed {
		return saved
	}
	return int64(float64(saved) * float64(all) / float64(replayed))
}

// partsFor returns the parts that hold syncs of site i: the time windows
// (or the whole region) where any do, else the site's own windows.
func (e *estimator) partsFor(i int) []*part {
	var own, timed []*part
	for _, p := range e.parts {
		switch {
		case len(p.siteSyncs[i]) == 0:
		case p.site < 0:
			timed = append(timed, p)
		case p.site == i:
			own = append(own, p)
		}
	}
	if len(timed) > 0 {
		return timed
	}
	return own
}

// missed reports whether site i has occurrences in a sampled region but
// none in its time windows.
func (e *estimator) missed(i int) bool {
	if !e.sampled || len(e.siteIdx[i]) == 0 {
		return false
	}
	for _, p := range e.parts {
		if p.site < 0 && len(p.siteSyncs[i]) > 0 {
			return false
		}
	}
	return true
}

// scenarios estimates the false-dependency sites together and all syncs.
// In a sampled region, both come from the time windows, extrapolated by
// the syncs they hold, plus the estimates of the sites those windows
// missed (read in their own windows), added as if independent.
func (e *estimator) scenarios(ctx context.Context, sites []classify.Site) error {
	chosen := make([]bool, len(sites))
	byID := map[string]bool{}
	for _, id := range e.opt.FalseSites {
		byID[id] = true
	}
	falseIDs, allIDs := []string{}, []string{}
	all := make([]bool, len(sites))
	// held: syncs no scenario replays removed — of the sites outside the
	// totals, and of those that copy data the host uses (they add their
	// bounded saving instead).
	held := make([]bool, len(sites))
	var excludedIDs []string
	for i := range sites {
		switch {
		case excluded(&sites[i]):
			held[i] = true
			excludedIDs = append(excludedIDs, sites[i].ID)
			continue
		case needed(&sites[i]) && !byID[sites[i].ID]:
			// Named in Options.FalseSites, a copy is taken not to be
			// needed: the caller knows the rewrite drops it.
			held[i] = true
		}
		all[i] = true
		allIDs = append(allIDs, sites[i].ID)
		if e.opt.FalseSites == nil && sites[i].Dependency == classify.DepFalse || byID[sites[i].ID] {
			chosen[i] = true
			falseIDs = append(falseIDs, sites[i].ID)
		}
	}
	for _, sc := range []struct {
		dst   *Scenario
		ids   []string
		sites []bool
		every bool
	}{{&e.res.FalseDependency, falseIDs, chosen, false}, {&e.res.AllSyncs, allIDs, all, true}} {
		replayed := make([]bool, len(sites))
		for i, c := range sc.sites {
			replayed[i] = c && !held[i]
		}
		s, err := e.scenario(ctx, replayed, held, sc.every)
		if err != nil {
			return err
		}
		for i, c := range sc.sites {
			if c && held[i] {
				s.shift(e.res.Sites[i].SavingsNs)
				s.Syncs += len(e.siteIdx[i])
				s.BoundedSiteIDs = append(s.BoundedSiteIDs, sites[i].ID)
			}
		}
		s.SavingsFraction = e.fraction(s.SavingsNs)
		s.SiteIDs, s.ExcludedSiteIDs = sc.ids, excludedIDs
		*sc.dst = s
	}
	return nil
}

// shift adds a saving outside the replay (a bounded site's) to the
// scenario and its interval.
func (s *Scenario) shift(ns int64) {
	s.SavingsNs += ns
	if s.Interval != nil {
		s.Interval.LowNs += ns
		s.Interval.HighNs += ns
	}
}

// scenario removes the chosen sites' syncs together (every: all syncs of
// the region, in a site or not, but those of the held sites).
func (e *estimator) scenario(ctx context.Context, chosen, held []bool, every bool) (Scenario, error) {
	var saved, missed int64
	var samples []chunkSaving
	replayed, syncs, inMissed := 0, 0, 0
	for i, c := range chosen {
		if !c {
			continue
		}
		syncs += len(e.siteIdx[i])
		if e.missed(i) {
			missed += e.res.Sites[i].SavingsNs
			inMissed += len(e.siteIdx[i])
		}
	}
	for _, p := range e.parts {
		if p.site >= 0 {
			continue
		}
		var remove []int
		if every {
			keep := map[int]bool{}
			for i, h := range held {
				if h {
					for _, l := range p.siteSyncs[i] {
						keep[l] = true
					}
				}
			}
			for l := range p.m.syncs {
				if p.counted(l) && !keep[l] {
					remove = append(remove, l)
				}
			}
		} else {
			for i, c := range chosen {
				if c {
					remove = append(remove, p.siteSyncs[i]...)
				}
			}
		}
		s, err := p.savings(ctx, remove)
		if err != nil {
			return Scenario{}, err
		}
		cs, err := p.intervalSamples(ctx, remove, e.opt)
		if err != nil {
			return Scenario{}, err
		}
		samples = append(samples, cs...)
		saved += s
		replayed += len(remove)
	}
	inWindows := replayed
	if !e.sampled {
		syncs = replayed
	} else {
		if every {
			syncs = len(e.t.Syncs)
			for i, h := range held {
				if h {
					syncs -= len(e.siteIdx[i])
				}
			}
		}
		inWindows = syncs - inMissed
		saved = extrapolate(saved, inWindows, replayed) + missed
	}
	return Scenario{Syncs: syncs, SavingsNs: saved, SavingsFraction: e.fraction(saved), Interval: interval(samples, inWindows, saved)}, nil
}
