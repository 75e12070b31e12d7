package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/nsyssync/nsyssync/analysis"
	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/cuda"
	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/whatif"
)

type replayOptions struct {
	sites            []string
	nvtx             string
	repeat           int
	format           string
	keepHostCode     bool
	profilerOverhead time.Duration
	// fromLaunches (--overhead-from-launches): the overhead is the one the
	// region's launches give, as analyze's flag of that name does, unless
	// --profiler-overhead or a calibration's gives one.
	fromLaunches  bool
	overheadGiven bool
	// calibration is a profile of 'nsyssync calibrate': its profiler
	// overheads per kind of call are taken off unless
	// --profiler-overhead is given.
	calibration string
	device      int
}

func newReplayCmd(stdout, stderr io.Writer) *cobra.Command {
	opt := replayOptions{profilerOverhead: time.Duration(estimate.DefaultCalibration().ProfilerOverheadNs)}
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Measure on this machine's GPU what removing each site's syncs saves",
		Long: `Replay the analysed region of an export on this machine's NVIDIA GPU with a
bundled spin kernel: every recorded GPU op becomes a kernel that keeps its
stream busy for the op's recorded duration, the recorded host time between
API calls is kept, cross-stream waits become events, and the recorded syncs
become real synchronize calls. The region is replayed as recorded and
without each site's syncs (their sync-free rewrite), --repeat times in
alternation; the median saving and its range are reported.

The first line says how close the unchanged replay came to the recording
(the self-check). Savings are measured with the profiler's per-call
overhead (--profiler-overhead) taken off the host time, as the simulator
does, and are fractions of the region as the program runs without the
profiler. A --calibration profile that holds the overhead per kind of call
(nsyssync calibrate --profiler-overhead) gives it instead, unless
--profiler-overhead is given; --overhead-from-launches reads it off the
region's recorded kernel launches (a capture whose launches took longer
cost the profiler more a call; at least 16 launches, else the default),
unless either of those gives it.

Without an NVIDIA driver or GPU it says so in one line and exits 1: the
simulator's estimate (nsyssync analyze) stands.

Exit codes: 0 replayed; 1 no GPU, or the export or the replay failed;
2 bad flags or arguments.`,
		Example: `  nsyssync replay report.sqlite
  nsyssync replay --nvtx train_step --site s1 --site s3 report.sqlite
  nsyssync replay --repeat 11 --format json report.sqlite > replay.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.format != formatText && opt.format != formatJSON {
				return usagef("unknown --format %q (want text or json)", opt.format)
			}
			if opt.repeat < 1 {
				return usagef("--repeat %d: want 1 or more", opt.repeat)
			}
			if opt.profilerOverhead < 0 {
				return usagef("--profiler-overhead %v: want 0 or more", opt.profilerOverhead)
			}
			if cmd.Flags().Changed("profiler-overhead") {
				opt.calibration, opt.overheadGiven = "", true
			}
			return runReplay(cmd.Context(), args[0], opt, stdout)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opt.sites, "site", nil, "replay only this site (s1, s2, … as analyze numbers them); repeatable")
	f.StringVar(&opt.nvtx, "nvtx", "", "limit the replay to an NVTX range, NAME or NAME@DOMAIN (every occurrence counts)")
	f.IntVar(&opt.repeat, "repeat", 5, "measured rounds; each replays the region as recorded and without each site")
	f.StringVar(&opt.format, "format", formatText, "output format: text or json")
	f.BoolVar(&opt.keepHostCode, "keep-host-code", false, "keep the host time of the code that issues a removed sync (default: cut, as the simulator does)")
	f.DurationVar(&opt.profilerOverhead, "profiler-overhead", opt.profilerOverhead, "host time the profiler added to each traced call, taken off when measuring savings (0: none)")
	f.StringVar(&opt.calibration, "calibration", "", "take the profiler's overhead per kind of call from this 'nsyssync calibrate --profiler-overhead' profile")
	f.BoolVar(&opt.fromLaunches, "overhead-from-launches", false, overheadFromLaunchesUsage)
	f.IntVar(&opt.device, "device", 0, "CUDA device ordinal")
	return cmd
}

// replayOverheads is what the replay takes off before each traced call:
// the calibration's overheads where it holds them, else the flat
// --profiler-overhead.
func (opt replayOptions) replayOverheads() (cuda.ReplayOptions, error) {
	ro := cuda.ReplayOptions{Repeat: opt.repeat, KeepHostCode: opt.keepHostCode, ProfilerOverheadNs: int64(opt.profilerOverhead),
		OverheadFromLaunches: opt.fromLaunches && !opt.overheadGiven}
	cal, err := analysis.LoadCalibration(opt.calibration)
	if err != nil || cal == nil {
		return ro, err
	}
	if cal.ProfilerOverheadNs > 0 {
		ro.ProfilerOverheadNs, ro.OverheadFromLaunches = cal.ProfilerOverheadNs, false
	}
	byKind := cal.ProfilerOverheads.ByKindOr(ro.ProfilerOverheadNs)
	if byKind != whatif.Flat(ro.ProfilerOverheadNs) {
		ro.ProfilerOverheads = &byKind
	}
	return ro, nil
}

// openGPU opens GPU ordinal for replay or calibration. Without a driver or
// GPU its error says that the simulator's estimate stands.
func openGPU(ordinal int) (*cuda.Device, error) {
	dev, err := cuda.Open(cuda.Options{Ordinal: ordinal})
	if err != nil && cuda.Unavailable(err) {
		return nil, fmt.Errorf("no GPU found (%w): the simulator's estimate stands (nsyssync analyze)", err)
	}
	return dev, err
}

// runReplay analyses the export and picks its sites first, so that a bad
// export or site is said on any machine, then replays them on the GPU.
func runReplay(ctx context.Context, path string, opt replayOptions, stdout io.Writer) error {
	ro, err := opt.replayOverheads()
	if err != nil {
		return err
	}
	// The sites are numbered as analyze numbers them; the replay measures
	// the savings, so the simulator does not run.
	an, err := analysis.Analyze(ctx, path, analysis.Options{NVTX: opt.nvtx, NoEstimate: true})
	if err != nil {
		return whileDoing(ctx, err, "while reading %s", textsafe.Display(path, textsafe.Terminal))
	}
	defer an.Close()
	sites, err := chooseSites(path, an.Report.Sites, opt.sites)
	if err != nil {
		return err
	}
	dev, err := openGPU(opt.device)
	if err != nil {
		return err
	}
	defer dev.Close()
	t := an.Report.Trace
	res, err := dev.Replay(ctx, an.Export, t, sites, ro)
	if err != nil {
		return whileDoing(ctx, fmt.Errorf("%s: %w", path, err), "while replaying %s", textsafe.Display(path, textsafe.Terminal))
	}
	if opt.format == formatJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return fmt.Errorf("writing the replay: %w", err)
		}
		return nil
	}
	writeReplayText(stdout, path, &replayedTrace{region: t.Region.Name, sites: sites}, res)
	return nil
}

// chooseSites returns the sites named by ids (all of them without ids).
func chooseSites(path string, sites []classify.Site, ids []string) ([]classify.Site, error) {
	if len(ids) == 0 {
		return sites, nil
	}
	var chosen []classify.Site
	for _, id := range ids {
		i := slices.IndexFunc(sites, func(s classify.Site) bool { return s.ID == id })
		if i < 0 {
			all := make([]string, len(sites))
			for k, s := range sites {
				all[k] = s.ID
			}
			return nil, fmt.Errorf("%s: no site %s (sites: %s)", path, id, strings.Join(all, ", "))
		}
		chosen = append(chosen, sites[i])
	}
	return chosen, nil
}

// replayedTrace is what the text report names besides the result.
type replayedTrace struct {
	region string
	sites  []classify.Site
}

// selfCheckWarn is the self-check error past which the text report says
// that this host does not reproduce the recording closely.
const selfCheckWarn = 0.05

func ms(ns int64) string { return fmt.Sprintf("%.3f ms", float64(ns)/1e6) }

func writeReplayText(w io.Writer, path string, t *replayedTrace, res *cuda.Result) {
	region := "the whole trace"
	if t.region != "" {
		region = fmt.Sprintf("region %q", t.region)
	}
	fmt.Fprintf(w, "GPU replay of %s, %s (%s recorded)\n", path, region, ms(res.RecordedNs))
	fmt.Fprintf(w, "GPU: %s\n", res.GPU)
	u := res.Unchanged
	fmt.Fprintf(w, "As recorded: %s (median of %d; %s to %s), self-check %+.2f%%\n", ms(u.MedianNs), len(u.RunsNs), ms(u.MinNs), ms(u.MaxNs), 100*res.SelfCheckError)
	if e := res.SelfCheckError; e > selfCheckWarn || e < -selfCheckWarn {
		fmt.Fprintf(w, "Note: this host replays the recording %+.1f%% off its recorded time (host-bound regions replay slower on a slower host); the savings below are measured against that replay\n", 100*e)
	}
	if res.Baseline != nil {
		from := ""
		if res.ProfilerOverheadSource != "" {
			from = ", " + res.ProfilerOverheadSource // trace (median launch … of N)
		}
		fmt.Fprintf(w, "Without the profiler's overhead (%v per call%s): %s; savings are fractions of %s\n",
			time.Duration(res.ProfilerOverheadNs), from, ms(res.Baseline.MedianNs), ms(res.BaselineNs))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SITE\tSYNCS\tSAVED\tOF REGION\tRANGE\tAPIS\tNVTX\tIN TOTAL")
	for i, s := range res.Sites {
		var apis, nvtx string
		if i < len(t.sites) {
			apis, nvtx = strings.Join(t.sites[i].APIs, "+"), strings.Join(t.sites[i].NVTX, "/")
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.1f%%\t%s to %s\t%s\t%s\t%s\n", s.ID, s.Syncs, ms(s.SavedNs), 100*s.SavedFraction, ms(s.SavedMinNs), ms(s.SavedMaxNs), apis, nvtx, s.CountNote())
	}
	tw.Flush()
	fmt.Fprintf(w, "Removable total: %s (%.1f%% of the region), sites %s together%s\n", ms(res.Total.SavedNs), 100*res.Total.SavedFraction,
		strings.Join(res.Total.SiteIDs, ", "), res.Total.Note())
	for _, warn := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}
