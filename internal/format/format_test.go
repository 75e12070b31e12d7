package format

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// refDuration is the fmt form Duration replaces.
func refDuration(ns int64) string {
	switch {
	case ns < 0:
		return "-"
	case ns < 1_000:
		return fmt.Sprintf("%dns", ns)
	case ns < 1_000_000:
		return fmt.Sprintf("%.1fµs", float64(ns)/1e3)
	case ns < 1_000_000_000:
		return fmt.Sprintf("%.2fms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.2fs", float64(ns)/1e9)
}

func TestDurationMatchesFmt(t *testing.T) {
	values := []int64{-5, 0, 1, 999, 1000, 1049, 1050, 1051, 99_949, 99_950, 999_949, 999_950, 999_999, 1_000_000,
		1_004_999, 1_005_000, 999_994_999, 999_995_000, 999_999_999, 1_000_000_000, 5_555_555_555, math.MaxInt64}
	for v := int64(1); v < 1e15; v = v*3 + 7 {
		values = append(values, v, v+1, v-1)
	}
	for _, v := range values {
		if got, want := Duration(v), refDuration(v); got != want {
			t.Errorf("Duration(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestPercent(t *testing.T) {
	if got := Percent(1, 8); got != "12.5%" {
		t.Errorf("Percent(1, 8) = %q", got)
	}
	if got := Percent(1, 0); got != "-" {
		t.Errorf("Percent(1, 0) = %q", got)
	}
}

// TestPathTail: the last n elements, as strings.Split gives them.
func TestPathTail(t *testing.T) {
	for _, p := range []string{"", "a", "/", "a/b", "/a/b", "a//b", "/w/fixtures/programs/syncs.py", "x/", "//", "a/b/c/d/"} {
		for n := 1; n <= 3; n++ {
			parts := strings.Split(p, "/")
			want := parts[max(0, len(parts)-n):]
			if got := PathTail(p, n); !slices.Equal(got, want) {
				t.Errorf("PathTail(%q, %d) = %q, want %q", p, n, got, want)
			}
		}
	}
}
