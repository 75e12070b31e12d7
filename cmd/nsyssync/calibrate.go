package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/nsyssync/nsyssync/cuda"
	"github.com/nsyssync/nsyssync/estimate"
)

type calibrateOptions struct {
	output  string
	samples int
	device  int
	// profilerOverhead: also measure the profiler's overhead per kind of
	// call, with nsys (path nsys) capturing as nsysFlags say.
	profilerOverhead bool
	nsys, nsysFlags  string
	calls            int
	// callCostsOnly: only time the driver calls (the child runs of
	// profilerOverhead).
	callCostsOnly bool
}

func newCalibrateCmd(stdout, stderr io.Writer) *cobra.Command {
	var opt calibrateOptions
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Measure this GPU's sync overhead, launch latency and scalar copy for the simulator",
		Long: `Measure, on this machine's NVIDIA GPU with the bundled spin kernel, what
the simulator (analyze's savings estimate) falls back on when a trace does
not show it: the round trip of cuStreamSynchronize on an empty stream, the
wake-up after awaited work, the launch latency, the gap between queued
kernels, a 4-byte device-to-host copy, and an event record plus stream
wait. Each is the median of --samples trials.

With --profiler-overhead it also measures what Nsight Systems adds to each
traced call, per kind of call (launch, async copy, sync, other): the same
back-to-back driver calls are timed in a child process without the
profiler, under 'nsys profile' (capture flags --nsys-flags; use those of
the captures you will analyze), and without it again; the difference per
call goes into the profile's profiler_overhead_*_ns fields, which analyze
and replay take off before each traced call.

The profile is the simulator's calibration format (estimate.Calibration,
JSON): written to -o FILE, or to stdout. With -o, a summary goes to stdout.

Without an NVIDIA driver or GPU it says so in one line and exits 1.

Exit codes: 0 measured; 1 no GPU, no nsys (with --profiler-overhead), or
the measurement failed; 2 bad flags.`,
		Example: `  nsyssync calibrate -o h100.json
  nsyssync calibrate --samples 1000 > profile.json
  nsyssync calibrate --profiler-overhead -o h100.json
  nsyssync calibrate --profiler-overhead --nsys-flags "-t cuda,nvtx,osrt" -o h100-defaults.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opt.samples < 1 {
				return usagef("--samples %d: want 1 or more", opt.samples)
			}
			if opt.calls < 1 {
				return usagef("--calls %d: want 1 or more", opt.calls)
			}
			if opt.callCostsOnly {
				return runCallCostsOnly(cmd.Context(), opt, stdout)
			}
			return runCalibrate(cmd.Context(), opt, stdout)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opt.output, "output", "o", "", "write the profile to FILE instead of stdout")
	f.IntVar(&opt.samples, "samples", 200, "trials per measurement")
	f.IntVar(&opt.device, "device", 0, "CUDA device ordinal")
	f.BoolVar(&opt.profilerOverhead, "profiler-overhead", false, "also measure Nsight Systems' overhead per kind of traced call (runs nsys)")
	f.StringVar(&opt.nsys, "nsys", "nsys", "the nsys command for --profiler-overhead")
	f.StringVar(&opt.nsysFlags, "nsys-flags", defaultNsysFlags, "nsys profile's capture flags for --profiler-overhead")
	f.IntVar(&opt.calls, "calls", 5_000, "timed calls per kind for --profiler-overhead")
	f.BoolVar(&opt.callCostsOnly, "call-costs", false, "only time driver calls, as JSON (the child runs of --profiler-overhead)")
	_ = f.MarkHidden("call-costs")
	return cmd
}

func runCalibrate(ctx context.Context, opt calibrateOptions, stdout io.Writer) error {
	// -o is opened first: a path that cannot be written is said before
	// the measurement, not after it.
	out, err := openOutput(ctx, opt.output, stdout, nil)
	if err != nil {
		return err
	}
	defer out.abort() // nothing once committed
	// The profiler's overhead is measured first, in child processes,
	// before this one holds the GPU; a missing nsys is said before that.
	var ovh *overheadRun
	if opt.profilerOverhead {
		if ovh, err = findNsys(ctx, opt.nsys, opt.nsysFlags); err != nil {
			return err
		}
		ovh.calls, ovh.device = opt.calls, opt.device
		if err := ovh.measure(ctx); err != nil {
			return whileDoing(ctx, err, "while measuring the profiler's overhead")
		}
	}
	dev, err := openGPU(opt.device)
	if err != nil {
		return err
	}
	defer dev.Close()
	c, err := dev.Calibrate(ctx, opt.samples)
	if err != nil {
		return whileDoing(ctx, err, "while calibrating")
	}
	profile := calibrationProfile(c)
	if ovh != nil {
		ovh.into(&profile)
	}
	b, err := json.MarshalIndent(profile, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the profile: %w", err)
	}
	if _, err := out.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing the profile: %w", err)
	}
	if err := out.commit(); err != nil {
		return err
	}
	if out.toFile() {
		writeCalibrationText(stdout, opt.output, c)
		if ovh != nil {
			ovh.writeText(stdout)
		}
	}
	return nil
}

// calibrationProfile is the measurement in the simulator's format. The
// profiler's per-call overhead is left unknown (0): it needs a profiled
// and an unprofiled run (--profiler-overhead, overheadRun.into).
func calibrationProfile(c *cuda.Calibration) estimate.Calibration {
	return estimate.Calibration{
		SyncOverheadNs:     c.SyncOverheadNs,
		SyncWakeNs:         c.SyncWakeNs,
		LaunchLatencyNs:    c.LaunchLatencyNs,
		DispatchGapNs:      c.DispatchGapNs,
		D2HScalarCopyNs:    c.D2HScalarCopyNs,
		RecordWaitNs:       c.RecordWaitNs,
		PinnedHtoDNsPerMiB: c.PinnedHtoDNsPerMiB,
		Source: fmt.Sprintf("nsyssync calibrate on %s (driver %s, CUDA driver API %d), %d samples, %s",
			c.GPU.Name, c.GPU.Driver, c.GPU.CUDA, c.Samples, c.Date),
	}
}

func writeCalibrationText(w io.Writer, path string, c *cuda.Calibration) {
	fmt.Fprintf(w, "Calibrated %s (%s); profile written to %s\n\n", c.GPU.Name, c.GPU, path)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range []struct {
		name string
		ns   int64
	}{
		{"sync overhead (empty-stream cuStreamSynchronize)", c.SyncOverheadNs},
		{"sync wake-up (awaited kernel end to return)", c.SyncWakeNs},
		{"launch call (cuLaunchKernel)", c.LaunchCallNs},
		{"launch latency (call start to kernel start)", c.LaunchLatencyNs},
		{"dispatch gap (between queued kernels)", c.DispatchGapNs},
		{"D2H scalar copy (4 bytes, GPU time)", c.D2HScalarCopyNs},
		{"D2H scalar copy + sync (host round trip)", c.D2HScalarRoundTripNs},
		{"event record + stream wait", c.RecordWaitNs},
		{"pinned host-to-device copy, per MiB (16 MiB, GPU time)", c.PinnedHtoDNsPerMiB},
		{"%globaltimer step", c.TimerStepNs},
	} {
		fmt.Fprintf(tw, "%s\t%.2f µs\n", r.name, float64(r.ns)/1e3)
	}
	tw.Flush()
}
