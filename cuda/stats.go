package cuda

import "sort"

// Stats summarises repeated measurements.
type Stats struct {
	MedianNs int64   `json:"median_ns"`
	MinNs    int64   `json:"min_ns"`
	MaxNs    int64   `json:"max_ns"`
	RunsNs   []int64 `json:"runs_ns"`
}

// summarize computes the median and range of runs (kept in run order).
func summarize(runs []int64) Stats {
	if len(runs) == 0 {
		return Stats{}
	}
	sorted := append([]int64(nil), runs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	return Stats{MedianNs: median(append([]int64(nil), sorted...)), MinNs: sorted[0], MaxNs: sorted[len(sorted)-1], RunsNs: runs}
}
