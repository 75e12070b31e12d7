package estimate

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// TestSimulate: on real fixtures, the window around each site's longest
// sync simulated with nothing removed is the recording, call for call and
// op for op; simulated without the site's syncs, their calls are gone and
// the sync's thread is done no later than recorded.
func TestSimulate(t *testing.T) {
	ctx := context.Background()
	for _, fx := range []struct{ name, nvtx string }{
		{"gt_mlp_train.sqlite.gz", "measured"},
		{"gt_twostream_event.sqlite.gz", "measured"},
		{"syncs_backtrace.sqlite.gz", "measured"},
	} {
		t.Run(fx.name, func(t *testing.T) {
			f := loadFixture(t, filepath.Join("../fixtures", fx.name), fx.nvtx)
			res := f.run(t, Options{})
			for _, site := range f.sites {
				if len(site.Syncs) == 0 {
					continue
				}
				longest := site.Syncs[0]
				for _, si := range site.Syncs {
					if f.tr.Syncs[si].Duration() > f.tr.Syncs[longest].Duration() {
						longest = si
					}
				}
				sy := &f.tr.Syncs[longest]
				pad := max(sy.Duration(), 50_000)
				tl, err := f.x.Timeline(ctx, trace.Interval{Start: sy.Start - pad, End: sy.End + 2*pad})
				if err != nil {
					t.Fatal(err)
				}
				same, err := Simulate(ctx, tl, f.tr, nil, res.Constants)
				if err != nil {
					t.Fatal(err)
				}
				if len(same.Calls) != len(tl.Calls) || len(same.Ops) != len(tl.Ops) {
					t.Fatalf("%s: unchanged simulation has %d calls, %d ops; recorded %d, %d", site.ID, len(same.Calls), len(same.Ops), len(tl.Calls), len(tl.Ops))
				}
				for i := range tl.Calls {
					if same.Calls[i] != tl.Calls[i] {
						t.Errorf("%s: call %d simulated %+v, recorded %+v", site.ID, i, same.Calls[i], tl.Calls[i])
						break
					}
				}
				for i := range tl.Ops {
					if same.Ops[i].Start != tl.Ops[i].Start || same.Ops[i].End != tl.Ops[i].End {
						t.Errorf("%s: op %d simulated [%d, %d], recorded [%d, %d]", site.ID, i, same.Ops[i].Start, same.Ops[i].End, tl.Ops[i].Start, tl.Ops[i].End)
						break
					}
				}
				without, err := Simulate(ctx, tl, f.tr, site.Syncs, res.Constants)
				if err != nil {
					t.Fatal(err)
				}
				gone := 0
				for _, c := range tl.Calls {
					if c.GlobalTid == sy.GlobalTid && c.Start >= sy.Start && c.End <= sy.End {
						gone++
					}
				}
				if len(tl.Calls)-len(without.Calls) < 1 || gone == 0 {
					t.Errorf("%s: %d calls simulated without its syncs of %d recorded (%d in the sync)", site.ID, len(without.Calls), len(tl.Calls), gone)
				}
				if a, b := threadEnd(without, sy.GlobalTid), threadEnd(tl, sy.GlobalTid); a > b {
					t.Errorf("%s: without its syncs the thread ends at %d, recorded %d", site.ID, a, b)
				}
			}
		})
	}
}

// threadEnd is when a thread's last call of the timeline ends.
func threadEnd(tl *trace.Timeline, tid trace.GlobalTid) int64 {
	var end int64
	for _, c := range tl.Calls {
		if c.GlobalTid == tid {
			end = max(end, c.End)
		}
	}
	return end
}
