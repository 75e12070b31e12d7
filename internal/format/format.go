// Package format writes the numbers and paths every nsyssync output shows
// the same way — durations, percentages, the end of a path — for the
// renderers (package report) and the multi-trace tables (package triage)
// alike, so that neither imports the other to print a duration.
package format

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Duration formats nanoseconds for people: 812ns, 14.2µs, 3.41ms, 2.07s;
// "-" for a negative duration.
func Duration(ns int64) string { return string(AppendDuration(nil, ns)) }

// AppendDuration appends Duration(ns) to b.
func AppendDuration(b []byte, ns int64) []byte {
	switch {
	case ns < 0:
		return append(b, '-')
	case ns < 1_000:
		return append(strconv.AppendInt(b, ns, 10), "ns"...)
	case ns < 1_000_000:
		return append(strconv.AppendFloat(b, float64(ns)/1e3, 'f', 1, 64), "µs"...)
	case ns < 1_000_000_000:
		return append(strconv.AppendFloat(b, float64(ns)/1e6, 'f', 2, 64), "ms"...)
	}
	return append(strconv.AppendFloat(b, float64(ns)/1e9, 'f', 2, 64), 's')
}

// Percent formats part as a percentage of whole with one decimal
// ("12.5%"), "-" when whole is not positive.
func Percent(part, whole int64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

// PathTail returns the last n elements of a slash-separated path (all of
// them when it has fewer), as strings.Split(p, "/") gives them, looking
// only at the end of the path: a path of millions of elements costs what
// its last n do.
func PathTail(p string, n int) []string {
	tail := make([]string, 0, n)
	end := len(p)
	for len(tail) < n {
		i := strings.LastIndexByte(p[:end], '/')
		if i < 0 {
			tail = append(tail, p[:end])
			break
		}
		tail = append(tail, p[i+1:end])
		end = i
	}
	slices.Reverse(tail)
	return tail
}
