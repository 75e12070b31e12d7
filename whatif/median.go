package whatif

import "slices"

// MedianRule says which middle an even count of samples takes.
type MedianRule uint8

// Median rules. The simulator takes the lower middle, the replay the mean
// of the two middles: on an even count of samples they differ by up to
// half the gap between the two middle samples.
const (
	// LowerMiddle is xs[(n-1)/2] of the sorted samples (the simulator).
	LowerMiddle MedianRule = iota
	// MeanOfMiddles is the mean of the two middle samples of an even
	// count (the replay).
	MeanOfMiddles
)

// Median returns the median of xs by rule, 0 for none; it sorts xs in
// place.
func Median(xs []int64, rule MedianRule) int64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	slices.Sort(xs)
	if rule == MeanOfMiddles && n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[(n-1)/2]
}
