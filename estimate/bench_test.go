package estimate

import (
	"context"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
)

// millionOps is the size of the benchmarks' region.
const millionOps = 1_000_000

// replicate builds, in memory, a region of at least wantOps GPU ops by
// repeating a real fixture's measured region back to back: calls, ops,
// stream waits and syncs shifted in time and correlation id.
func replicate(tl *trace.Timeline, tr *trace.Trace, wantOps int) (*trace.Timeline, *trace.Trace) {
	r := tr.Region
	span := r.End - r.Start + 1_000
	// Correlation ids stay consecutive across copies, as in one long run.
	var minCorr, maxCorr int64 = 1 << 62, 0
	for _, c := range tl.Calls {
		minCorr, maxCorr = min(minCorr, c.CorrelationID), max(maxCorr, c.CorrelationID)
	}
	copies := (wantOps + len(tl.Ops) - 1) / max(len(tl.Ops), 1)
	out := &trace.Timeline{Window: trace.Interval{Start: r.Start, End: r.Start + int64(copies)*span}}
	rt := *tr
	rt.Syncs = nil
	for k := 0; k < copies; k++ {
		dt, dc := int64(k)*span, int64(k)*(maxCorr-minCorr+1)
		for _, c := range tl.Calls {
			c.Start, c.End, c.CorrelationID = c.Start+dt, c.End+dt, c.CorrelationID+dc
			out.Calls = append(out.Calls, c)
		}
		for _, op := range tl.Ops {
			op.Start, op.End, op.CorrelationID = op.Start+dt, op.End+dt, op.CorrelationID+dc
			out.Ops = append(out.Ops, op)
		}
		for _, w := range tl.Waits {
			w.CorrelationID, w.RecordCorrelationID = w.CorrelationID+dc, w.RecordCorrelationID+dc
			out.Waits = append(out.Waits, w)
		}
		for _, s := range tr.Syncs {
			s.Start, s.End, s.Index = s.Start+dt, s.End+dt, int32(len(rt.Syncs))
			calls := make([]trace.Call, len(s.Calls()))
			for i, c := range s.Calls() {
				c.Start, c.End, c.CorrelationID = c.Start+dt, c.End+dt, c.CorrelationID+dc
				calls[i] = c
			}
			s.SetCalls(calls)
			if s.Copy != nil {
				cp := *s.Copy
				cp.CorrelationID += dc
				s.Copy = &cp
			}
			rt.Syncs = append(rt.Syncs, s)
		}
	}
	end := r.Start + int64(copies)*span
	rt.Region = trace.Region{Name: r.Name, Intervals: []trace.Interval{{Start: r.Start, End: end}}, Start: r.Start, End: end, Duration: end - r.Start}
	return out, &rt
}

// millionOpRegion replicates the training-loop fixture (two host threads
// with hand-offs, three sync sites a step) to a million GPU ops.
func millionOpRegion(b *testing.B) (*trace.Timeline, *trace.Trace, []classify.Site) {
	b.Helper()
	f := loadFixture(b, gtFixture("mlp_train"), "measured")
	tl, tr := replicate(f.timeline(b), f.tr, millionOps)
	return tl, tr, classify.Sites(tr)
}

// BenchmarkEstimateMillionOps runs the whole estimate of a million-op
// region: model, unchanged replay, every site (in windows: the region is
// large), the false-dependency set and the ceiling.
func BenchmarkEstimateMillionOps(b *testing.B) {
	tl, tr, sites := millionOpRegion(b)
	var res *Result
	for b.Loop() {
		var err error
		if res, err = FromTimeline(context.Background(), tl, tr, sites, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.Ops), "ops")
	b.ReportMetric(float64(res.Ops)*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	if res.Ops < millionOps || res.SelfCheckError > 1e-6 || res.SelfCheckError < -1e-6 {
		b.Fatalf("ops %d, self-check %g", res.Ops, res.SelfCheckError)
	}
}

// BenchmarkReplayMillionOps is one replay of the whole million-op region
// with every sync removed, the model built once.
func BenchmarkReplayMillionOps(b *testing.B) {
	tl, tr, _ := millionOpRegion(b)
	m := buildModel(tl, tr, tr.Region.Start, tr.Region.End, nil)
	sim := newSimulator(m)
	all := make([]int, len(tr.Syncs))
	for i := range all {
		all[i] = i
	}
	w := window{lo: 0, hi: int32(len(m.calls)), start: tr.Region.Start, anchor: 0}
	for b.Loop() {
		if _, err := sim.replay(context.Background(), w, all); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(m.ops))*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
