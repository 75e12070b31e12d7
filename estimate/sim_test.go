package estimate

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
)

// TestReplayReproducesRecording replays every real export, fixtures and
// corpus, with nothing removed: whole, in its "measured" range, and in the
// 30 short occurrences of a ground-truth site's own range. The replay must
// end where the recording did.
func TestReplayReproducesRecording(t *testing.T) {
	files, _ := filepath.Glob("../fixtures/*.sqlite*")
	corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	if len(corpus) == 0 {
		t.Logf("no shared corpus at %s: fixtures only", corpusDir)
	}
	for _, path := range append(files, corpus...) {
		for _, nvtx := range []string{"", "measured", "sync:loss_item"} { // the last: 30 short intervals
			x, err := trace.Open(context.Background(), path)
			if err != nil {
				continue // not a CUDA trace: the reader's tests cover that
			}
			tr, err := x.Load(context.Background(), trace.LoadOptions{NVTX: nvtx})
			if err != nil {
				x.Close()
				continue // no CUDA trace, or no such range: the reader's tests cover that
			}
			sites := classify.Sites(tr)
			res, err := Run(context.Background(), x, tr, sites, Options{})
			x.Close()
			if err != nil {
				t.Errorf("%s [%s]: %v", path, nvtx, err)
				continue
			}
			if math.Abs(res.SelfCheckError) > 1e-6 || res.BaseNs < tr.Region.Duration {
				t.Errorf("%s [%s]: replay %d ns, recording %d ns (region %d ns)", filepath.Base(path), nvtx, res.ReplayNs, res.BaseNs, tr.Region.Duration)
			}
			// The ceiling removes every sync but those of set-up, tear-down
			// and the profiler, and those that may guard a host read.
			counted := len(tr.Syncs)
			for i := range sites {
				if sites[i].Counting() == classify.CountNone {
					counted -= len(sites[i].Syncs)
				}
			}
			if res.AllSyncs.Syncs != counted {
				t.Errorf("%s [%s]: ceiling removes %d syncs, the region has %d outside set-up, tear-down and the profiler", filepath.Base(path), nvtx, res.AllSyncs.Syncs, counted)
			}
		}
	}
}

// TestRemovingNothingSavesNothing: an empty false-dependency set replays
// exactly as recorded.
func TestRemovingNothingSavesNothing(t *testing.T) {
	f := loadFixture(t, gtFixture("mlp_train"), "measured")
	res := f.run(t, Options{FalseSites: []string{}})
	if res.FalseDependency.Syncs != 0 || res.FalseDependency.SavingsNs != 0 {
		t.Errorf("empty set: %+v", res.FalseDependency)
	}
	if res.AllSyncs.SavingsNs <= 0 {
		t.Errorf("removing all %d syncs saves %d ns", res.AllSyncs.Syncs, res.AllSyncs.SavingsNs)
	}
}

// TestFalseSitesDefaultToClassifierVerdicts: with no explicit set, the
// sites the classifier marked false are removed together.
func TestFalseSitesDefaultToClassifierVerdicts(t *testing.T) {
	f := loadFixture(t, gtFixture("mlp_train"), "measured")
	marked := []string{f.sites[siteWithRange(t, f.sites, "sync:log_loss")].ID, f.sites[siteWithRange(t, f.sites, "sync:timing")].ID}
	for i := range f.sites {
		f.sites[i].Dependency = classify.DepUnknown
		for _, id := range marked {
			if f.sites[i].ID == id {
				f.sites[i].Dependency = classify.DepFalse
			}
		}
	}
	byVerdict := f.run(t, Options{})
	explicit := f.run(t, Options{FalseSites: marked})
	if byVerdict.FalseDependency.SavingsNs != explicit.FalseDependency.SavingsNs || len(byVerdict.FalseDependency.SiteIDs) != 2 {
		t.Errorf("by verdict %+v, explicit %+v", byVerdict.FalseDependency, explicit.FalseDependency)
	}
}

// TestWindowedAgreesWithFullReplay forces the large-trace path (windows
// around each site's occurrences) and compares it with full replays.
func TestWindowedAgreesWithFullReplay(t *testing.T) {
	for _, name := range []string{"item_many", "mlp_train", "twostream_event", "cpu_copy"} {
		f := loadFixture(t, gtFixture(name), "measured")
		full := f.run(t, Options{})
		win := f.run(t, Options{MaxFullWork: 1, MaxWindows: 1000})
		for i, s := range full.Sites {
			w := win.Sites[i]
			if w.Windows == 0 || w.Sampled {
				t.Errorf("%s %s: windows %d, sampled %v: want windows, all of them", name, s.ID, w.Windows, w.Sampled)
			}
			if d := math.Abs(w.SavingsFraction - s.SavingsFraction); d > math.Max(0.002, 0.1*math.Abs(s.SavingsFraction)) {
				t.Errorf("%s %s: windowed %.4f, full %.4f", name, s.ID, w.SavingsFraction, s.SavingsFraction)
			}
		}
	}
}

// TestSampledEstimateIsFlagged limits the windows per site: a site with
// more chunks of occurrences than that is extrapolated and says so.
func TestSampledEstimateIsFlagged(t *testing.T) {
	f := loadFixture(t, gtFixture("item_many"), "measured")
	full := f.run(t, Options{})
	smp := f.run(t, Options{MaxFullWork: 1, MaxWindows: 3, ChunkSize: 4})
	i := siteWithRange(t, f.sites, "sync:item")
	got, want := smp.Sites[i], full.Sites[i]
	if !got.Sampled || !smp.Sampled || got.Windows != 3 {
		t.Fatalf("site with %d syncs in 30 chunks, 3 windows: %+v, result sampled %v", got.Syncs, got, smp.Sampled)
	}
	if math.Abs(got.SavingsFraction-want.SavingsFraction) > 0.25*want.SavingsFraction {
		t.Errorf("sampled %.4f, full %.4f", got.SavingsFraction, want.SavingsFraction)
	}
}

// TestHandOffsLinkAutogradThread: in the training loop, backward runs on
// PyTorch's autograd thread while the main thread waits; the model links
// the two in both directions every step.
func TestHandOffsLinkAutogradThread(t *testing.T) {
	f := loadFixture(t, gtFixture("mlp_train"), "measured")
	m := buildModel(f.timeline(t), f.tr, f.tr.Region.Start, f.tr.Region.End, nil)
	if m.threads != 2 {
		t.Fatalf("threads %d, want the main and the autograd thread", m.threads)
	}
	into := [2]int{}
	for i := range m.host.Calls {
		c := &m.host.Calls[i]
		if c.Dep < 0 {
			continue
		}
		if m.host.Calls[c.Dep].Thread == c.Thread || c.Lag < 0 || m.host.Calls[c.Dep].End > c.Start {
			t.Fatalf("call %d: hand-off from %d on its own thread or after it: %+v", i, c.Dep, *c)
		}
		into[c.Thread]++
	}
	// 30 steps; the first hand-off into each thread may fall before the range.
	if into[0] < 29 || into[1] < 29 {
		t.Errorf("hand-offs into each thread: %v, want one a step (30) each way", into)
	}
}

// TestRemovedCrossStreamSyncKeepsGPUOrder: removing side.synchronize()
// must not let the main stream run ahead of the side stream's work, as
// the rewrite (main.wait_stream(side)) forbids it too.
func TestRemovedCrossStreamSyncKeepsGPUOrder(t *testing.T) {
	f := loadFixture(t, gtFixture("twostream_sync"), "measured")
	m := buildModel(f.timeline(t), f.tr, f.tr.Region.Start, f.tr.Region.End, nil)
	sim := newSimulator(m)
	site := f.sites[siteWithRange(t, f.sites, "sync:side_sync")]
	w := window{lo: 0, hi: int32(len(m.calls)), anchor: noIndex}
	if _, err := sim.replay(context.Background(), w, site.Syncs); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, si := range site.Syncs {
		ss := &m.syncs[si]
		first, last := ss.calls[0], ss.calls[len(ss.calls)-1]
		awaited := int64(minTime)
		next := map[int32]int64{}
		for o := range m.ops {
			op := &m.ops[o]
			switch {
			case op.stream == ss.stream && op.call < first:
				awaited = max(awaited, sim.ops.end[o])
			case op.stream != ss.stream && op.call > last && op.launched:
				if _, ok := next[op.stream]; !ok {
					next[op.stream] = sim.ops.start[o]
				}
			}
		}
		for st, start := range next {
			checked++
			if start < awaited {
				t.Errorf("sync %d: stream %d starts at %d, before the awaited work ends at %d", si, st, start, awaited)
			}
		}
	}
	if checked < len(site.Syncs) {
		t.Errorf("checked %d later ops for %d removed syncs", checked, len(site.Syncs))
	}
}

// TestRemovedCopies: a removed .item() loses its device-to-host copy; a
// removed pageable host-to-device copy keeps its copy (the data is needed)
// but no longer blocks.
func TestRemovedCopies(t *testing.T) {
	for _, tc := range []struct {
		scenario, site string
		keep           bool
	}{{"item_tiny", "sync:loss_item", false}, {"h2d_pageable", "sync:h#d", true}} {
		f := loadFixture(t, gtFixture(tc.scenario), "measured")
		m := buildModel(f.timeline(t), f.tr, f.tr.Region.Start, f.tr.Region.End, nil)
		sim := newSimulator(m)
		site := f.sites[siteWithRange(t, f.sites, tc.site)]
		if _, err := sim.replay(context.Background(), window{lo: 0, hi: int32(len(m.calls)), anchor: noIndex}, site.Syncs); err != nil {
			t.Fatal(err)
		}
		copies := 0
		for _, si := range site.Syncs {
			for _, ci := range m.syncs[si].calls {
				c := &m.calls[ci]
				for o := c.opLo; o < c.opHi; o++ {
					copies++
					if kept := sim.ops.end[o] != minTime; kept != tc.keep {
						t.Errorf("%s: copy of sync %d kept %v, want %v", tc.scenario, si, kept, tc.keep)
					}
				}
			}
		}
		if copies != len(site.Syncs) {
			t.Errorf("%s: %d copies for %d syncs", tc.scenario, copies, len(site.Syncs))
		}
	}
}

// TestBadSiteIndices: sites naming syncs that do not exist are reported,
// not fatal.
func TestBadSiteIndices(t *testing.T) {
	f := loadFixture(t, gtFixture("item_tiny"), "measured")
	good := f.run(t, Options{})
	i := siteWithRange(t, f.sites, "sync:loss_item")
	f.sites[i].Syncs = append(append([]int{-1}, f.sites[i].Syncs...), len(f.tr.Syncs)+5)
	bad := f.run(t, Options{})
	if len(bad.Warnings) == 0 {
		t.Error("no warning for sync indices out of range")
	}
	if bad.Sites[i].SavingsNs != good.Sites[i].SavingsNs {
		t.Errorf("with bad indices %d ns, without %d ns", bad.Sites[i].SavingsNs, good.Sites[i].SavingsNs)
	}
}

// TestEmptyRegion: a region of no duration is an error, not a division by
// zero.
func TestEmptyRegion(t *testing.T) {
	tr := &trace.Trace{Path: "empty.sqlite", Region: trace.Region{Intervals: []trace.Interval{{Start: 5, End: 5}}, Start: 5, End: 5}}
	_, err := FromTimeline(context.Background(), &trace.Timeline{}, tr, nil, Options{})
	if !errors.Is(err, ErrEmptyRegion) {
		t.Errorf("got %v, want ErrEmptyRegion", err)
	}
}

// TestCanceledContext stops a replay.
func TestCanceledContext(t *testing.T) {
	f := loadFixture(t, gtFixture("item_many"), "measured")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, f.x, f.tr, f.sites, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
