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

The profile is the simulator's calibration format (estimate.Calibration,
JSON): written to -o FILE, or to stdout. With -o, a summary goes to stdout.

Without an NVIDIA driver or GPU it says so in one line and exits 1.

Exit codes: 0 measured; 1 no GPU, or the measurement failed; 2 bad flags.`,
		Example: `  nsyssync calibrate -o h100.json
  nsyssync calibrate --samples 1000 > profile.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opt.samples < 1 {
				return usagef("--samples %d: want 1 or more", opt.samples)
			}
			return runCalibrate(cmd.Context(), opt, stdout)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opt.output, "output", "o", "", "write the profile to FILE instead of stdout")
	f.IntVar(&opt.samples, "samples", 200, "trials per measurement")
	f.IntVar(&opt.device, "device", 0, "CUDA device ordinal")
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
	dev, err := openGPU(opt.device)
	if err != nil {
		return err
	}
	defer dev.Close()
	c, err := dev.Calibrate(ctx, opt.samples)
	if err != nil {
		return whileDoing(ctx, err, "while calibrating")
	}
	b, err := json.MarshalIndent(calibrationProfile(c), "", "  ")
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
	}
	return nil
}

// calibrationProfile is the measurement in the simulator's format. The
// profiler's per-call overhead is left unknown (0): it needs a profiled
// and an unprofiled run, not a GPU.
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
