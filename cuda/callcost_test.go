package cuda

import (
	"context"
	"slices"
	"testing"

	"github.com/nsyssync/nsyssync/whatif"
)

// TestCallCostsOnFakeGPU: every kind is called the asked number of times
// (rounded up to whole batches) plus one untimed batch, on one stream,
// and the session is given back.
func TestCallCostsOnFakeGPU(t *testing.T) {
	g := &fakeGPU{}
	d := fakeDevice(t, g)
	before := g.counts()
	c, err := d.MeasureCallCosts(context.Background(), 250)
	if err != nil {
		t.Fatal(err)
	}
	if c.Calls != 300 || c.GPU.Name != "Fake GPU" {
		t.Errorf("calls %d on %q: want 300 (250 rounded up to batches of %d) on the fake", c.Calls, c.GPU.Name, callBatch)
	}
	after := g.counts()
	made := func(what string) int { return after[what] - before[what] }
	const each = 300 + callBatch // timed and untimed
	batches := 4 * (300/callBatch + 1)
	if n := made("copy DtoH"); n != each {
		t.Errorf("%d async copies, want %d", n, each)
	}
	if n := made("record"); n != each {
		t.Errorf("%d event records, want %d", n, each)
	}
	// Syncs: the sync kind's own calls, one drain after each batch of
	// every kind, and the warm-up's.
	if n := made("sync stream"); n < each+batches {
		t.Errorf("%d stream syncs, want at least %d", n, each+batches)
	}
	if n := made("spin"); n < each {
		t.Errorf("%d launches, want at least %d", n, each)
	}
	for k, v := range c.PerCallNs {
		if v < 0 {
			t.Errorf("%s: %v ns per call", whatif.OverheadKind(k), v)
		}
	}
	checkReleased(t, g)
}

func TestProfilerOverheads(t *testing.T) {
	costs := func(launch, cp, sync, other float64) *CallCosts {
		return &CallCosts{PerCallNs: [whatif.NumOverheadKinds]float64{launch, cp, sync, other}}
	}
	for _, tc := range []struct {
		name       string
		profiled   *CallCosts
		unprofiled []*CallCosts
		want       whatif.Overheads
		none       []whatif.OverheadKind
	}{
		{name: "difference against the mean of the plain runs", profiled: costs(4_000, 3_500, 2_000, 1_500),
			unprofiled: []*CallCosts{costs(2_000, 2_000, 1_000, 500), costs(2_200, 1_800, 1_200, 700)},
			want:       whatif.Overheads{1_900, 1_600, 900, 900}},
		{name: "a kind the profiler did not slow gets 1 ns, and is listed", profiled: costs(3_000, 2_000, 900, 600.4),
			unprofiled: []*CallCosts{costs(2_000, 2_000, 1_000, 600)},
			want:       whatif.Overheads{1_000, 1, 1, 1}, none: []whatif.OverheadKind{whatif.OverheadAsyncCopy, whatif.OverheadSync, whatif.OverheadOther}},
		{name: "no plain run: nothing known", profiled: costs(3_000, 2_000, 900, 600)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, none := ProfilerOverheads(tc.profiled, tc.unprofiled...)
			if got != tc.want || !slices.Equal(none, tc.none) {
				t.Errorf("got %v (none %v), want %v (none %v)", got, none, tc.want, tc.none)
			}
		})
	}
}
