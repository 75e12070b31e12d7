package cuda

import (
	"sync/atomic"
	"testing"
)

func TestBlockWakeIsTheAwaitedWorks(t *testing.T) {
	const model, wide = 2_200, 3_000
	newRunner := func() *runner {
		return &runner{model: DeviceModel{WakeNs: model}, wakes: []int64{model, wide},
			streamWake: make([]atomic.Int64, 2), eventWake: make([]atomic.Int64, 1)}
	}
	wideSpin := Work{Kind: WorkSpin, Stream: 0, Shape: 1}
	copyOp := Work{Kind: WorkCopy, Stream: 1}
	cases := []struct {
		name  string
		queue []Work
		event bool // event 0 recorded on stream 0 after the queue
		block Action
		want  int64
	}{
		{"nothing queued: the model's", nil, false, Action{Block: BlockStream, Target: 0}, model},
		{"a wide spin's stream", []Work{wideSpin}, false, Action{Block: BlockStream, Target: 0}, wide},
		{"another stream's copy", []Work{wideSpin, copyOp}, false, Action{Block: BlockStream, Target: 1}, model},
		{"the event recorded after the wide spin", []Work{wideSpin, copyOp}, true, Action{Block: BlockEvent, Target: 0}, wide},
		{"an event never recorded", []Work{wideSpin}, false, Action{Block: BlockEvent, Target: 0}, model},
		{"the context: the last queued", []Work{copyOp, wideSpin}, false, Action{Block: BlockContext}, wide},
		{"the context after a copy", []Work{wideSpin, copyOp}, false, Action{Block: BlockContext}, model},
		{"a stream out of range", []Work{wideSpin}, false, Action{Block: BlockStream, Target: 7}, model},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner()
			for i := range tc.queue {
				r.queuedWake(&tc.queue[i])
			}
			if tc.event {
				r.recordedWake(0, 0)
			}
			if got := r.blockWake(&tc.block); got != tc.want {
				t.Errorf("blockWake = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestWarmStream(t *testing.T) {
	spin := func(stream int32) Work { return Work{Kind: WorkSpin, Stream: stream} }
	cases := []struct {
		name    string
		work    []Work
		pending []Work
		want    int32
		ok      bool
	}{
		{"the first spin's stream", []Work{spin(2), spin(0)}, nil, 2, true},
		{"copies are passed over", []Work{{Kind: WorkCopy, Stream: 1}, spin(3)}, nil, 3, true},
		{"no spin", []Work{{Kind: WorkCopy, Stream: 1}}, nil, 0, false},
		{"work pending on that stream", []Work{spin(2)}, []Work{spin(2)}, 0, false},
		{"work pending elsewhere", []Work{spin(2)}, []Work{spin(1)}, 2, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			iv := IntervalPlan{Pending: tc.pending, Threads: []ThreadPlan{{Work: tc.work}}}
			got, ok := iv.warmStream(0)
			if got != tc.want || ok != tc.ok {
				t.Errorf("warmStream = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
