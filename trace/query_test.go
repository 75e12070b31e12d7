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

func TestNameFilter(t *testing.T) {
	names := func(ids ...int64) map[int64]apiName {
		m := map[int64]apiName{}
		for _, id := range ids {
			m[id] = apiName{}
		}
		return m
	}
	many := make([]int64, maxCaseNames+1)
	for i := range many {
		many[i] = int64(10 + i)
	}
	tests := []struct {
		name string
		n    apiNames
		want string
	}{
		{"frequent names outside the range", apiNames{byID: names(121, 146, 122), frequent: []int64{45, 56}},
			"nameId BETWEEN 121 AND 146 AND CASE nameId WHEN 121 THEN 1 WHEN 122 THEN 1 WHEN 146 THEN 1 END"},
		{"frequent names inside the range", apiNames{byID: names(54, 136), frequent: []int64{72, 63}},
			"nameId <> 72 AND nameId <> 63 AND CASE nameId WHEN 54 THEN 1 WHEN 136 THEN 1 END"},
		{"one of each", apiNames{byID: names(54, 136), frequent: []int64{72, 200}},
			"nameId BETWEEN 54 AND 136 AND nameId <> 72 AND CASE nameId WHEN 54 THEN 1 WHEN 136 THEN 1 END"},
		{"no frequent names known", apiNames{byID: names(7)}, "nameId BETWEEN 7 AND 7 AND CASE nameId WHEN 7 THEN 1 END"},
		{"too many names for a CASE", apiNames{byID: names(many...), frequent: []int64{1}},
			"nameId BETWEEN 10 AND 26 AND nameId IN (10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26)"},
	}
	for _, tt := range tests {
		if got := tt.n.nameFilter(); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
