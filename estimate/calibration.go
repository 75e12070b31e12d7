package estimate

import (
	"encoding/json"
	"fmt"

	"github.com/nsyssync/nsyssync/internal/safefile"
	"github.com/nsyssync/nsyssync/whatif"
)

// Calibration holds model constants measured on a GPU by the replay
// (cuda/), written as JSON. Zero fields are unknown and fall back to the
// defaults.
type Calibration struct {
	// SyncOverheadNs: a synchronize call that finds nothing to wait for.
	SyncOverheadNs int64 `json:"sync_overhead_ns"`
	// SyncWakeNs: from the end of the awaited GPU work to the return of
	// the synchronize call.
	SyncWakeNs int64 `json:"sync_wake_ns"`
	// LaunchLatencyNs: from a launch call's start to its op's start on an
	// idle stream.
	LaunchLatencyNs int64 `json:"launch_latency_ns"`
	// DispatchGapNs: between two queued ops of one stream.
	DispatchGapNs int64 `json:"dispatch_gap_ns"`
	// D2HScalarCopyNs: a few-byte device-to-host copy on the GPU, used
	// when the export has no memcpy activity.
	D2HScalarCopyNs int64 `json:"d2h_scalar_copy_ns"`
	// RecordWaitNs: host cost of the sync-free rewrite of a cross-stream
	// sync (an event record and a stream wait, as wait_stream issues).
	RecordWaitNs int64 `json:"record_wait_ns"`
	// ProfilerOverheadNs: host time the profiler adds to each traced API
	// call.
	ProfilerOverheadNs int64 `json:"profiler_overhead_ns"`
	// ProfilerOverheads, where measured, are the overhead per kind of
	// call; a kind's value overrides ProfilerOverheadNs.
	ProfilerOverheads
	// PinnedHtoDNsPerMiB: GPU time per MiB of a host-to-device copy from
	// pinned memory, beyond its fixed latency (whatif.PinnedCopyNs): the
	// speed of the copy that the pinned rewrite of a pageable one makes.
	PinnedHtoDNsPerMiB int64 `json:"pinned_htod_ns_per_mib,omitempty"`
	// Source says where the numbers come from (GPU, driver, date).
	Source string `json:"source"`
}

// DefaultCalibration is used for a constant that neither the trace nor a
// calibration file gives: the medians, over the 14 ground-truth exports
// (H100, PyTorch 2.11, CUDA 13.0, nsys 2025.3), of what the estimator reads
// from each; ProfilerOverheadNs is the median over those scenarios of
// (profiled duration - unprofiled duration) / traced calls.
// docs/estimator.md says how each was measured.
func DefaultCalibration() Calibration {
	return Calibration{
		SyncOverheadNs:     5_000,
		SyncWakeNs:         4_000,
		LaunchLatencyNs:    8_900,
		DispatchGapNs:      1_300,
		D2HScalarCopyNs:    1_440,
		RecordWaitNs:       3_700,
		ProfilerOverheadNs: 3_700,
		PinnedHtoDNsPerMiB: 19_000,
		Source:             "defaults (H100 ground truth, docs/estimator.md)",
	}
}

// LoadCalibration reads a calibration profile written by the GPU replay.
func LoadCalibration(path string) (*Calibration, error) {
	// A profile is a few hundred bytes; 1 MiB bounds a wrong file named.
	b, err := safefile.ReadFile(path, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("calibration %s: %w", path, safefile.Problem(err))
	}
	var c Calibration
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("calibration %s: not a calibration profile: %w", path, err)
	}
	for name, v := range map[string]int64{
		"sync_overhead_ns": c.SyncOverheadNs, "sync_wake_ns": c.SyncWakeNs, "launch_latency_ns": c.LaunchLatencyNs,
		"dispatch_gap_ns": c.DispatchGapNs, "d2h_scalar_copy_ns": c.D2HScalarCopyNs, "record_wait_ns": c.RecordWaitNs,
		"profiler_overhead_ns": c.ProfilerOverheadNs, "profiler_overhead_launch_ns": c.LaunchNs,
		"profiler_overhead_async_copy_ns": c.AsyncCopyNs, "profiler_overhead_sync_ns": c.SyncNs,
		"profiler_overhead_other_ns": c.OtherNs,
	} {
		if v < 0 || v > 1_000_000_000 {
			return nil, fmt.Errorf("calibration %s: %s = %d is out of range (0 to 1 s)", path, name, v)
		}
	}
	if c.Source == "" {
		c.Source = path
	}
	return &c, nil
}

// Constants are the model constants a run used, each with its origin.
type Constants struct {
	SyncOverheadNs  int64 `json:"sync_overhead_ns"`
	SyncWakeNs      int64 `json:"sync_wake_ns"`
	LaunchLatencyNs int64 `json:"launch_latency_ns"`
	DispatchGapNs   int64 `json:"dispatch_gap_ns"`
	D2HScalarCopyNs int64 `json:"d2h_scalar_copy_ns"`
	RecordWaitNs    int64 `json:"record_wait_ns"`
	// ProfilerOverheadNs is the flat per-call overhead (option,
	// calibration or default); ProfilerOverheads is what was taken off
	// the host time before each call, by its kind.
	ProfilerOverheadNs int64 `json:"profiler_overhead_ns"`
	ProfilerOverheads
	// PinnedHtoDNsPerMiB is the speed of a pinned host-to-device copy
	// (Calibration.PinnedHtoDNsPerMiB).
	PinnedHtoDNsPerMiB int64 `json:"pinned_htod_ns_per_mib"`
	// Sources names, per constant, "trace (n=…)", the calibration's
	// source or "default".
	Sources map[string]string `json:"sources"`
	// inferred: each kind's profiler overhead read off the trace.
	inferred [whatif.NumOverheadKinds]whatif.InferredOverhead
	// fromLaunches: the profiler's overhead read off the launches.
	fromLaunches whatif.LaunchOverhead
}

// constantPicker fills Constants from trace medians, then the calibration,
// then the defaults.
type constantPicker struct {
	cal      *Calibration
	defaults Calibration
	out      Constants
}

func newConstantPicker(cal *Calibration) *constantPicker {
	return &constantPicker{cal: cal, defaults: DefaultCalibration(), out: Constants{Sources: map[string]string{}}}
}

// pick stores the trace's median of samples when there are enough of
// them, else the calibration's value, else the default.
func (p *constantPicker) pick(name string, dst *int64, samples []int64, fromCal, fromDefault int64) {
	const minSamples = 3
	switch {
	case len(samples) >= minSamples:
		*dst = median(samples)
		p.out.Sources[name] = fmt.Sprintf("trace (n=%d)", len(samples))
	case p.cal != nil && fromCal > 0:
		*dst = fromCal
		p.out.Sources[name] = "calibration: " + p.cal.Source
	default:
		*dst = fromDefault
		p.out.Sources[name] = "default"
	}
}

func (p *constantPicker) calValue(f func(*Calibration) int64) int64 {
	if p.cal == nil {
		return 0
	}
	return f(p.cal)
}
