package estimate

import (
	"context"
	"math/rand/v2"
	"slices"
)

// Interval is the spread of a saving (a site's, or a scenario's) over the
// repeated windows it rests on: the chunks of ChunkSize consecutive
// removed syncs on a thread that chunkSavings replays, each removed alone
// in its window. LowNs and HighNs are the 10th and 90th percentiles of a
// bootstrap of those windows' savings per sync, scaled to the syncs the
// saving counts and moved to centre on the saving (docs/estimator.md,
// "Intervals").
type Interval struct {
	LowNs  int64 `json:"low_ns"`
	HighNs int64 `json:"high_ns"`
	// Windows is the number of windows the interval rests on (at least 2).
	Windows int `json:"windows"`
}

// Bootstrap parameters: resamples, the percentiles kept, the fixed seed
// that makes a report the same on every run, and the most windows a
// replay that is not windowed replays again for an interval alone.
const (
	intervalWindows          = 16
	bootstrapRounds          = 1000
	intervalLowQ, intervalHi = 0.10, 0.90
	bootstrapSeed            = 0x6e737973
)

// intervalSamples replays, for an interval alone, up to intervalWindows
// chunk windows of the syncs (fewer where MaxWindows is lower).
func (p *part) intervalSamples(ctx context.Context, syncs []int, opt Options) ([]chunkSaving, error) {
	samples, _, err := p.chunkSavings(ctx, syncs, opt.ChunkSize, min(opt.MaxWindows, intervalWindows))
	return samples, err
}

// siteInterval is the interval of est's saving from the windows' savings
// samples of a site of all occurrences; nil where it rests on fewer than
// two windows, or where the saving is not the replay's: a site outside
// the totals (0) or one held to its copy-overlap bound.
func siteInterval(samples []chunkSaving, all int, est *SiteEstimate) *Interval {
	if est.Phase != "" || est.Bound == BoundCopyOverlap {
		return nil
	}
	iv := interval(samples, all, est.SavingsNs)
	if iv != nil && est.Bound == BoundDelete {
		iv.HighNs = max(est.SavingsNs, min(iv.HighNs, est.CopyOverlapBoundNs))
	}
	return iv
}

// interval is the bootstrap interval about a saving of point over n
// occurrences, from the savings of the windows replayed; nil on fewer
// than two windows.
func interval(samples []chunkSaving, n int, point int64) *Interval {
	if len(samples) < 2 || n == 0 {
		return nil
	}
	centre := perOccurrence(samples, func(i int) int { return i }) * float64(n)
	rng := rand.New(rand.NewPCG(bootstrapSeed, uint64(len(samples))))
	totals := make([]float64, bootstrapRounds)
	for b := range totals {
		totals[b] = perOccurrence(samples, func(int) int { return rng.IntN(len(samples)) }) * float64(n)
	}
	slices.Sort(totals)
	q := func(p float64) float64 { return totals[int(p*float64(len(totals)-1)+0.5)] }
	return &Interval{
		LowNs:   min(point, point+int64(q(intervalLowQ)-centre)),
		HighNs:  max(point, point+int64(q(intervalHi)-centre)),
		Windows: len(samples),
	}
}

// perOccurrence is the saving per occurrence of len(samples) samples,
// the k-th being samples[pick(k)].
func perOccurrence(samples []chunkSaving, pick func(int) int) float64 {
	var saved float64
	n := 0
	for k := range samples {
		c := samples[pick(k)]
		saved += float64(c.savedNs)
		n += c.syncs
	}
	if n == 0 {
		return 0
	}
	return saved / float64(n)
}
