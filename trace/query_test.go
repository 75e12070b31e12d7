package trace

import (
	"math"
	"testing"
)

// TestSplitRange: the parts cover [lo, hi] exactly, in order, without
// overlap or overflow, for any rowids a damaged file may hold.
func TestSplitRange(t *testing.T) {
	tests := []struct {
		lo, hi int64
		n      int
		parts  int // want; 0: do not check the count
	}{
		{1, 100, 2, 2},
		{1, 1, 2, 1},
		{0, 0, 4, 1},
		{1, 3, 4, 3},
		{1, 1_000_000, 4, 4},
		{math.MinInt64, math.MaxInt64, 2, 2},
		{0, math.MaxInt64, 2, 2},
		{math.MaxInt64 - 1, math.MaxInt64, 2, 2},
		{math.MinInt64, math.MinInt64 + 5, 3, 3},
		{-10, 10, 3, 3},
		{5, 1, 2, 1}, // empty table: min and max NULL read as 0 0, or a bad range
		{1, 100, 0, 1},
	}
	for _, tc := range tests {
		got := splitRange(tc.lo, tc.hi, tc.n)
		if tc.parts != 0 && len(got) != tc.parts {
			t.Errorf("splitRange(%d, %d, %d): %d parts %v, want %d", tc.lo, tc.hi, tc.n, len(got), got, tc.parts)
		}
		if tc.hi < tc.lo || tc.n < 1 {
			continue
		}
		if len(got) > tc.n {
			t.Errorf("splitRange(%d, %d, %d): %d parts, more than %d", tc.lo, tc.hi, tc.n, len(got), tc.n)
		}
		if got[0][0] != tc.lo || got[len(got)-1][1] != tc.hi {
			t.Errorf("splitRange(%d, %d, %d) = %v: does not span the range", tc.lo, tc.hi, tc.n, got)
		}
		for i, r := range got {
			if r[1] < r[0] {
				t.Errorf("splitRange(%d, %d, %d): part %d %v is empty", tc.lo, tc.hi, tc.n, i, r)
			}
			if i > 0 && r[0] != got[i-1][1]+1 {
				t.Errorf("splitRange(%d, %d, %d): part %d %v does not follow %v", tc.lo, tc.hi, tc.n, i, r, got[i-1])
			}
		}
	}
}
