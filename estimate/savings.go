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
		if err := e.siteSavings(ctx, i, work, &est); err != nil {
			return fmt.Errorf("site %s: %w", sites[i].ID, err)
		}
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
// site's occurrences.
func (e *estimator) siteSavings(ctx context.Context, i int, work int64, est *SiteEstimate) error {
	var saved int64
	replayed := 0
	for _, p := range e.partsFor(i) {
		syncs := p.siteSyncs[i]
		var s int64
		var err error
		if work <= e.opt.MaxFullWork {
			s, err = p.savings(ctx, syncs)
			if e.sampled {
				est.Windows++
			}
		} else {
			var w int
			var smp bool
			s, w, smp, err = p.windowed(ctx, syncs, e.opt)
			est.Windows += w
			est.Sampled = est.Sampled || smp
		}
		if err != nil {
			return err
		}
		saved += s
		replayed += len(syncs)
	}
	est.SavingsNs = saved
	if e.sampled {
		est.Sampled = true
		est.SavingsNs = extrapolate(saved, len(e.siteIdx[i]), replayed)
	}
	return nil
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
	falseIDs, allIDs := []string{}, make([]string, len(sites))
	for i := range sites {
		allIDs[i] = sites[i].ID
		if e.opt.FalseSites == nil && sites[i].Dependency == classify.DepFalse || byID[sites[i].ID] {
			chosen[i] = true
			falseIDs = append(falseIDs, sites[i].ID)
		}
	}
	all := make([]bool, len(sites))
	for i := range all {
		all[i] = true
	}
	for _, sc := range []struct {
		dst   *Scenario
		ids   []string
		sites []bool
		every bool
	}{{&e.res.FalseDependency, falseIDs, chosen, false}, {&e.res.AllSyncs, allIDs, all, true}} {
		s, err := e.scenario(ctx, sc.sites, sc.every)
		if err != nil {
			return err
		}
		s.SiteIDs = sc.ids
		*sc.dst = s
	}
	return nil
}

// scenario removes the chosen sites' syncs together (every: all syncs of
// the region, in a site or not).
func (e *estimator) scenario(ctx context.Context, chosen []bool, every bool) (Scenario, error) {
	var saved, missed int64
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
			for l := range p.m.syncs {
				if p.counted(l) {
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
		saved += s
		replayed += len(remove)
	}
	if !e.sampled {
		syncs = replayed
	} else {
		if every {
			syncs = len(e.t.Syncs)
		}
		saved = extrapolate(saved, syncs-inMissed, replayed) + missed
	}
	return Scenario{Syncs: syncs, SavingsNs: saved, SavingsFraction: e.fraction(saved)}, nil
}
