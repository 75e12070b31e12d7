package estimate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
)

// regionEvents counts, without reading them (trace.TimelineRows), the API
// calls and GPU ops that start in the trace's region, and those a whole
// replay would read: everything from its start to its end (and after a
// range's end, for its GPU work), between its intervals too.
func regionEvents(ctx context.Context, x *trace.Export, t *trace.Trace) (region, whole int64, err error) {
	if region, err = x.TimelineRows(ctx, t.Region.Intervals); err != nil {
		return 0, 0, err
	}
	whole, err = x.TimelineRows(ctx, []trace.Interval{regionWindow(t.Region)})
	return region, whole, err
}

// runSampled estimates a large region from windows of it (sampleWindows):
// it reads each, builds one model per window with constants pooled over
// all of them, replays each window alone and extrapolates
// (estimator.siteSavings and estimator.scenario).
func runSampled(ctx context.Context, x *trace.Export, t *trace.Trace, sites []classify.Site, opt Options, events int64) (*Result, error) {
	siteIdx := make([][]int, len(sites))
	for i := range sites {
		for _, si := range sites[i].Syncs {
			if si >= 0 && si < len(t.Syncs) {
				siteIdx[i] = append(siteIdx[i], si)
			}
		}
		slices.Sort(siteIdx[i])
	}
	ws, err := sampleWindows(ctx, x, t, siteIdx, events, opt)
	if err != nil {
		return nil, savingsErr(t.Path, err)
	}
	reads := make([]trace.Interval, len(ws))
	for k, w := range ws {
		// A little before the window, for GPU work still running when it
		// begins, and past it, for ops its calls launched that start after.
		pad := (w.tail - w.lead) / 8
		reads[k] = trace.Interval{Start: w.lead - pad, End: w.tail + pad}
	}
	drafts, err := readDrafts(ctx, x, t, ws, reads)
	if err != nil {
		return nil, savingsErr(t.Path, err)
	}
	e := newEstimator(t, opt, finishModels(drafts, opt.Calibration), true)
	e.regionRows = events
	timed := 0
	for k, w := range ws {
		e.addPart(drafts[k].m, clip(t.Region.Intervals, trace.Interval{Start: w.Start, End: w.tail}), w.site)
		e.parts[k].count = w.Interval
		if w.site < 0 {
			timed++
			e.sampledRows += w.rows
		}
	}
	res, err := e.run(ctx, sites)
	if err != nil {
		return nil, err
	}
	for i := range sites {
		if len(siteIdx[i]) > 0 && e.missed(i) && len(e.partsFor(i)) == 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("site %s: none of its %d syncs was in a sampled window: not estimated", sites[i].ID, len(siteIdx[i])))
		}
	}
	var late lateLaunches
	for k, w := range ws {
		if w.site < 0 { // the time windows, each read once
			late.merge(&drafts[k].late)
		}
	}
	if w := late.warning(res.SampledNs); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	res.Warnings = append(res.Warnings, fmt.Sprintf("savings sampled: the region holds about %d API calls and GPU ops, more than %d; estimated from %d windows holding %.2f%% of them (%.2f%% of its time) and %d windows around sites they missed, and extrapolated",
		events, opt.MaxEvents, timed, 100*float64(e.sampledRows)/float64(max(events, 1)), 100*float64(res.SampledNs)/float64(t.Region.Duration), len(ws)-timed))
	return res, nil
}

// readDrafts reads each window's timeline and builds its model, one
// window a core at a time. Windows are read by rowid
// (trace.TimelinesByStart), so that one timeline a core is in memory
// beside the models; an export whose rows are not in start order is read
// in one scan of each table instead.
func readDrafts(ctx context.Context, x *trace.Export, t *trace.Trace, ws []sampleWindow, reads []trace.Interval) ([]*draft, error) {
	drafts := make([]*draft, len(ws))
	build := func(k int, tl *trace.Timeline) {
		lo, hi := syncRange(t.Syncs, trace.Interval{Start: ws[k].lead, End: ws[k].tail})
		drafts[k] = newDraft(tl, t, ws[k].lead, ws[k].tail, lo, hi, ws[k].tail)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for k := range ws {
		g.Go(func() error {
			tls, err := x.TimelinesByStart(gctx, reads[k:k+1])
			if err != nil {
				return err
			}
			build(k, tls[0])
			return nil
		})
	}
	err := g.Wait()
	if !errors.Is(err, trace.ErrNotStartOrdered) {
		if err != nil {
			return nil, err
		}
		return drafts, nil
	}
	all, err := x.Timelines(ctx, reads)
	if err != nil {
		return nil, err
	}
	for k := range ws {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		build(k, all[k])
		all[k] = nil // let the timeline go once its model is built
	}
	return drafts, nil
}
