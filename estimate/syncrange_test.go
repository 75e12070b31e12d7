package estimate

import (
	"math"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// TestSyncRangeNeverInverted: whatever the window — inverted by times at
// the int64 limits, empty, outside the syncs — the range is a valid slice
// of the syncs (FuzzExportFields once made it [3, 2) and newModel panic).
func TestSyncRangeNeverInverted(t *testing.T) {
	syncs := []trace.Sync{{Start: 10, End: 40}, {Start: 20, End: 25}, {Start: 30, End: 35}, {Start: 50, End: 60}}
	for _, w := range []trace.Interval{
		{Start: 22, End: 31}, {Start: 31, End: 22}, {Start: 60, End: 60}, {Start: math.MaxInt64, End: math.MinInt64},
		{Start: math.MinInt64, End: math.MaxInt64}, {Start: 33, End: 0},
	} {
		lo, hi := syncRange(syncs, w)
		if lo < 0 || hi < lo || hi > len(syncs) {
			t.Errorf("window %+v: range [%d, %d) of %d syncs", w, lo, hi, len(syncs))
		}
	}
}
