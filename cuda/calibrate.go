package cuda

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nsyssync/nsyssync/whatif"
)

// Calibration is what this GPU and driver cost, measured with the spin
// kernel: the constants the simulator (package estimate) uses when a
// trace does not show them. Every value is a median over Samples trials.
type Calibration struct {
	GPU     Identity `json:"gpu"`
	Samples int      `json:"samples"`
	// SyncOverheadNs: cuStreamSynchronize on an empty stream, host round
	// trip.
	SyncOverheadNs int64 `json:"sync_overhead_ns"`
	// SyncWakeNs: from the end of the awaited kernel to the return of
	// cuStreamSynchronize.
	SyncWakeNs int64 `json:"sync_wake_ns"`
	// LaunchCallNs: host time of one cuLaunchKernel.
	LaunchCallNs int64 `json:"launch_call_ns"`
	// LaunchLatencyNs: from the start of cuLaunchKernel to the host seeing
	// the kernel's first write on an idle stream (includes one write's
	// trip over the bus, well under a microsecond).
	LaunchLatencyNs int64 `json:"launch_latency_ns"`
	// DispatchGapNs: between two queued kernels of one stream, on the
	// GPU's own clock.
	DispatchGapNs int64 `json:"dispatch_gap_ns"`
	// D2HScalarCopyNs: a 4-byte device-to-host copy into page-locked
	// memory, GPU time between two events.
	D2HScalarCopyNs int64 `json:"d2h_scalar_copy_ns"`
	// D2HScalarRoundTripNs: the same copy plus cuStreamSynchronize on an
	// idle stream, host round trip (a .item() without the wait).
	D2HScalarRoundTripNs int64 `json:"d2h_scalar_round_trip_ns"`
	// RecordWaitNs: host time of cuEventRecord plus cuStreamWaitEvent (a
	// wait_stream, the sync-free rewrite of a cross-stream sync).
	RecordWaitNs int64 `json:"record_wait_ns"`
	// PinnedHtoDNsPerMiB: GPU time per MiB of a 16 MiB host-to-device
	// copy from page-locked memory, beyond whatif.PinnedCopyLatencyNs,
	// between two events: the speed of the copy a pageable one's pinned
	// rewrite makes (estimate.Calibration reads it by the same name).
	PinnedHtoDNsPerMiB int64 `json:"pinned_htod_ns_per_mib"`
	// TimerStepNs and SpinOverheadNs describe the spin kernel: the
	// resolution of %globaltimer, and the per-op time of back-to-back spins
	// beyond what they were asked for.
	TimerStepNs    int64  `json:"timer_step_ns"`
	SpinOverheadNs int64  `json:"spin_overhead_ns"`
	Date           string `json:"date"`
}

// Calibrate measures this GPU's sync overhead, launch latency, wake-up,
// dispatch gap, scalar copy and record/wait cost, samples trials each
// (zero: 200); it takes well under a second.
func (d *Device) Calibrate(ctx context.Context, samples int) (*Calibration, error) {
	if samples <= 0 {
		samples = 200
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	c := &Calibration{Samples: samples, TimerStepNs: d.model.TimerStepNs, SpinOverheadNs: d.model.SpinOverheadNs,
		Date: time.Now().UTC().Format(time.RFC3339)}
	const chain = 64
	err := d.withSession(sessionSpec{streams: 2, events: 3, timing: true, copyBytes: pinnedCopyBytes, stamps: chain + 1}, func(s session) error {
		m := &meter{s: s, base: time.Now(), n: samples}
		steps := []struct {
			dst *int64
			f   func() (int64, error)
		}{
			{&c.SyncOverheadNs, m.syncOverhead},
			{&c.LaunchCallNs, m.launchCall},
			{&c.LaunchLatencyNs, m.launchLatency},
			{&c.SyncWakeNs, func() (int64, error) { return wakeUp(s, min(samples, 50), 50_000, oneWarp) }},
			{&c.DispatchGapNs, func() (int64, error) { return m.dispatchGap(chain) }},
			{&c.D2HScalarCopyNs, m.scalarCopy},
			{&c.D2HScalarRoundTripNs, m.scalarRoundTrip},
			{&c.RecordWaitNs, m.recordWait},
			{&c.PinnedHtoDNsPerMiB, m.pinnedCopySpeed},
		}
		for _, st := range steps {
			if err := ctx.Err(); err != nil {
				return err
			}
			v, err := st.f()
			if err != nil {
				return err
			}
			*st.dst = v
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("calibrating %s: %w", d.id.Name, err)
	}
	c.GPU = d.Identity()
	return c, nil
}

// meter times driver calls on a bound session: stream 0 does the work,
// stream 1 waits, events 0 and 1 time, event 2 is recorded for waits.
type meter struct {
	s    session
	base time.Time
	n    int
}

func (m *meter) now() int64 { return int64(time.Since(m.base)) }

// each runs f n times and returns the median of what it returns.
func (m *meter) each(f func() (int64, error)) (int64, error) {
	xs := make([]int64, 0, m.n)
	for range m.n {
		v, err := f()
		if err != nil {
			return 0, err
		}
		xs = append(xs, v)
	}
	return median(xs), nil
}

// timed returns the host time f takes.
func (m *meter) timed(f func() error) (int64, error) {
	t0 := m.now()
	err := f()
	return m.now() - t0, err
}

func (m *meter) syncOverhead() (int64, error) {
	if err := m.s.syncStream(0); err != nil {
		return 0, err
	}
	return m.each(func() (int64, error) { return m.timed(func() error { return m.s.syncStream(0) }) })
}

func (m *meter) launchCall() (int64, error) {
	v, err := m.each(func() (int64, error) { return m.timed(func() error { return m.s.spin(0, 0, oneWarp, -1) }) })
	return v, errors.Join(err, m.s.syncStream(0))
}

func (m *meter) launchLatency() (int64, error) {
	return m.each(func() (int64, error) {
		m.s.clearStamps()
		if err := m.s.syncStream(0); err != nil {
			return 0, err
		}
		t0 := m.now()
		if err := m.s.spin(0, 2_000, oneWarp, 0); err != nil {
			return 0, err
		}
		deadline := t0 + int64(time.Second)
		for {
			if st, _ := m.s.stamp(0); st != 0 {
				return m.now() - t0, m.s.syncStream(0)
			}
			if m.now() > deadline {
				return 0, errors.New("the spin kernel never started (no stamp after 1 s)")
			}
		}
	})
}

// dispatchGap queues n stamped spins behind a long one and returns the
// median gap between one's end and the next one's start.
func (m *meter) dispatchGap(n int) (int64, error) {
	m.s.clearStamps()
	if err := m.s.spin(0, 500_000, oneWarp, -1); err != nil {
		return 0, err
	}
	for i := 1; i <= n; i++ {
		if err := m.s.spin(0, 5_000, oneWarp, i); err != nil {
			return 0, err
		}
	}
	if err := m.s.syncStream(0); err != nil {
		return 0, err
	}
	var gaps []int64
	for i := 1; i < n; i++ {
		_, end := m.s.stamp(i)
		next, _ := m.s.stamp(i + 1)
		if end != 0 && next >= end {
			gaps = append(gaps, int64(next-end))
		}
	}
	if len(gaps) == 0 {
		return 0, errors.New("no stamps from the queued spins")
	}
	return median(gaps), nil
}

func (m *meter) scalarCopy() (int64, error) {
	return m.each(func() (int64, error) {
		for _, f := range []func() error{
			func() error { return m.s.record(0, 0) },
			func() error { return m.s.copy(0, dirDtoH, 4) },
			func() error { return m.s.record(1, 0) },
			func() error { return m.s.syncStream(0) },
		} {
			if err := f(); err != nil {
				return 0, err
			}
		}
		el, err := m.s.elapsed(0, 1)
		return int64(el), err
	})
}

// pinnedCopyBytes is the copy pinnedCopySpeed times: large enough that the
// fixed latency is a few percent of it.
const pinnedCopyBytes = 16 << 20

// pinnedCopySpeed is the median GPU time per MiB of a pinnedCopyBytes
// host-to-device copy from page-locked memory, less the fixed latency
// (whatif.PinnedCopyLatencyNs); at most 20 trials.
func (m *meter) pinnedCopySpeed() (int64, error) {
	trials := &meter{s: m.s, base: m.base, n: min(m.n, 20)}
	return trials.each(func() (int64, error) {
		for _, f := range []func() error{
			func() error { return m.s.record(0, 0) },
			func() error { return m.s.copy(0, dirHtoD, pinnedCopyBytes) },
			func() error { return m.s.record(1, 0) },
			func() error { return m.s.syncStream(0) },
		} {
			if err := f(); err != nil {
				return 0, err
			}
		}
		el, err := m.s.elapsed(0, 1)
		ns := max(int64(el)-whatif.PinnedCopyLatencyNs, 1)
		return ns * (1 << 20) / pinnedCopyBytes, err
	})
}

func (m *meter) scalarRoundTrip() (int64, error) {
	return m.each(func() (int64, error) {
		return m.timed(func() error {
			if err := m.s.copy(0, dirDtoH, 4); err != nil {
				return err
			}
			return m.s.syncStream(0)
		})
	})
}

func (m *meter) recordWait() (int64, error) {
	v, err := m.each(func() (int64, error) {
		return m.timed(func() error {
			if err := m.s.record(2, 0); err != nil {
				return err
			}
			return m.s.wait(1, 2)
		})
	})
	return v, errors.Join(err, m.s.syncContext())
}
