package whatif

import "testing"

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		name  string
		xs    []int64
		lower int64
		mean  int64
	}{
		{"none", nil, 0, 0},
		{"one", []int64{7}, 7, 7},
		{"odd, unsorted", []int64{9, 1, 5}, 5, 5},
		{"even", []int64{40, 10, 30, 20}, 20, 25},
		{"even, two", []int64{3, 8}, 3, 5},
		{"negative", []int64{-5, -1, -3, -7}, -5, -4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Median(append([]int64(nil), tc.xs...), LowerMiddle); got != tc.lower {
				t.Errorf("LowerMiddle: %d, want %d", got, tc.lower)
			}
			if got := Median(append([]int64(nil), tc.xs...), MeanOfMiddles); got != tc.mean {
				t.Errorf("MeanOfMiddles: %d, want %d", got, tc.mean)
			}
		})
	}
}

func TestCallNames(t *testing.T) {
	for _, tc := range []struct {
		name         string
		record, wait bool
	}{
		{"cudaEventRecord_v3020", true, false},
		{"cuEventRecordWithFlags", true, false},
		{"cudaStreamWaitEvent_v3020", false, true},
		{"cuStreamWaitEvent", false, true},
		{"cudaEventSynchronize", false, false},
		{"cudaLaunchKernel", false, false},
	} {
		if IsRecordCall(tc.name) != tc.record || IsStreamWaitCall(tc.name) != tc.wait {
			t.Errorf("%s: record %v wait %v, want %v %v", tc.name, IsRecordCall(tc.name), IsStreamWaitCall(tc.name), tc.record, tc.wait)
		}
	}
}
