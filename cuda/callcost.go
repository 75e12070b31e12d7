package cuda

import (
	"context"
	"fmt"
	"time"

	"github.com/nsyssync/nsyssync/whatif"
)

// CallCosts is the host time of one driver call of each kind that the
// profiler's overhead is kept for (whatif.OverheadKind), each call made
// back to back on an idle stream: a launch (cuLaunchKernel of a spin of
// no duration), an async copy (a 4-byte cuMemcpyDtoHAsync into page-locked
// memory), a sync (cuStreamSynchronize with nothing to wait for) and an
// other call (cuEventRecord). Run once as it is and once under nsys, the
// difference per kind is what the profiler adds to a call of that kind
// (nsyssync calibrate --profiler-overhead).
type CallCosts struct {
	GPU Identity `json:"gpu"`
	// Calls is the number of timed calls per kind.
	Calls int `json:"calls"`
	// PerCallNs is the median, over batches of back-to-back calls, of a
	// batch's host time per call, indexed by whatif.OverheadKind.
	PerCallNs [whatif.NumOverheadKinds]float64 `json:"per_call_ns"`
	Date      string                           `json:"date"`
}

// callBatch is the number of back-to-back calls timed together: small
// enough that queued launches and copies never fill the stream's queue
// (the stream is drained between batches, untimed).
const callBatch = 100

// MeasureCallCosts times calls (rounded up to whole batches, at least
// one; zero: 5,000) driver calls of each kind, after one untimed batch of
// each (the first calls under a profiler set up its buffers).
func (d *Device) MeasureCallCosts(ctx context.Context, calls int) (*CallCosts, error) {
	if calls <= 0 {
		calls = 5_000
	}
	batches := max(1, (calls+callBatch-1)/callBatch)
	d.mu.Lock()
	defer d.mu.Unlock()
	c := &CallCosts{Calls: batches * callBatch, Date: time.Now().UTC().Format(time.RFC3339)}
	err := d.withSession(sessionSpec{streams: 1, events: 1, copyBytes: 4}, func(s session) error {
		if err := warmUp(s); err != nil {
			return err
		}
		kinds := [whatif.NumOverheadKinds]func() error{
			whatif.OverheadLaunch:    func() error { return s.spin(0, 0, oneWarp, -1) },
			whatif.OverheadAsyncCopy: func() error { return s.copy(0, dirDtoH, 4) },
			whatif.OverheadSync:      func() error { return s.syncStream(0) },
			whatif.OverheadOther:     func() error { return s.record(0, 0) },
		}
		for k, call := range kinds {
			per, err := timeBatches(ctx, s, call, batches)
			if err != nil {
				return fmt.Errorf("timing %s calls: %w", whatif.OverheadKind(k), err)
			}
			c.PerCallNs[k] = per
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("measuring call costs on %s: %w", d.id.Name, err)
	}
	c.GPU = d.Identity()
	return c, nil
}

// timeBatches makes batches timed batches of callBatch calls (after one
// untimed batch), draining the stream after each, and returns the median
// host time per call.
func timeBatches(ctx context.Context, s session, call func() error, batches int) (float64, error) {
	per := make([]int64, 0, batches)
	for b := -1; b < batches; b++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		t0 := time.Now()
		for range callBatch {
			if err := call(); err != nil {
				return 0, err
			}
		}
		el := time.Since(t0)
		if err := s.syncStream(0); err != nil {
			return 0, err
		}
		if b >= 0 {
			per = append(per, int64(el))
		}
	}
	return float64(median(per)) / callBatch, nil
}

// ProfilerOverheads is what the profiler adds to one call of each kind:
// profiled less the mean of the unprofiled runs, per kind. A kind whose
// difference is not positive gets 1 ns (0 reads as unknown in a
// calibration profile); the second result lists those kinds.
func ProfilerOverheads(profiled *CallCosts, unprofiled ...*CallCosts) (whatif.Overheads, []whatif.OverheadKind) {
	var out whatif.Overheads
	var none []whatif.OverheadKind
	if len(unprofiled) == 0 {
		return out, none
	}
	for k := range out {
		var base float64
		for _, u := range unprofiled {
			base += u.PerCallNs[k]
		}
		base /= float64(len(unprofiled))
		d := int64(profiled.PerCallNs[k] - base + 0.5)
		if d <= 0 {
			d = 1
			none = append(none, whatif.OverheadKind(k))
		}
		out[k] = d
	}
	return out, none
}
