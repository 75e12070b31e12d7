// Package analysis owns the pipeline every nsyssync command runs on an
// export: open it read-only (package trace), load its syncs (optionally
// those of one NVTX range), detect the program (package program), group
// the syncs into sites and classify them (package classify), and estimate
// what removing each site's syncs saves (package estimate).
//
// analyze, batch and diff (through package triage), replay and doctor all
// analyse an export through Analyze, so that the same export with the same
// Options gives the same sites, verdicts and savings whichever command
// reads it. Rendering stays with package report, the CI gate and the
// allow-list with package gate and the commands.
package analysis

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/report"
	"github.com/nsyssync/nsyssync/trace"
)

// Options choose what Analyze does. The zero Options loads the whole
// trace, reads no source file, and runs the estimator with the constants
// the trace gives (else the defaults).
type Options struct {
	// NVTX limits the analysis to an NVTX range, NAME or NAME@DOMAIN,
	// every occurrence.
	NVTX string
	// SourceRoot and FindSources say where the program's Python files are
	// looked for (classify.Options); the commands that report verdicts
	// set FindSources.
	SourceRoot  string
	FindSources bool
	// NoEstimate skips the savings simulation (Report.Estimates stays
	// nil).
	NoEstimate bool
	// Calibration holds constants measured by 'nsyssync calibrate'; nil:
	// from the trace, else the defaults.
	Calibration *estimate.Calibration
	// OverheadFromLaunches reads the profiler's per-call overhead off the
	// capture's kernel launches (estimate.Options.LaunchProfilerOverhead).
	OverheadFromLaunches bool
	// Progress, when set, is told each step as it starts ("opening
	// PATH", …), from the calling goroutine.
	Progress func(step string)
}

// Analysis is one analysed export. The export stays open, for what reads
// more of it (the HTML timelines, Perfetto, the GPU replay), until Close.
type Analysis struct {
	// Report is the classified and estimated trace, as every renderer
	// takes it.
	Report *report.Analysis
	// Export is the open export the trace was loaded from.
	Export *trace.Export
}

// Close closes the export.
func (a *Analysis) Close() error {
	if a == nil || a.Export == nil {
		return nil
	}
	return a.Export.Close()
}

// Analyze opens the export at path and runs the pipeline on it. Its
// errors name the file. The caller closes the Analysis.
func Analyze(ctx context.Context, path string, opt Options) (*Analysis, error) {
	step := func(s string) {
		if opt.Progress != nil {
			opt.Progress(s)
		}
	}
	step("opening " + path)
	x, err := trace.Open(ctx, path)
	if err != nil {
		return nil, namingFile(path, err)
	}
	step("reading the syncs of " + path)
	t, err := x.Load(ctx, trace.LoadOptions{NVTX: opt.NVTX})
	if err != nil {
		x.Close()
		return nil, namingFile(path, err)
	}
	step("grouping the syncs of " + path)
	a := report.NewWith(t, classify.Options{SourceRoot: opt.SourceRoot, FindSources: opt.FindSources})
	if !opt.NoEstimate {
		step("simulating " + path + " without its syncs")
		eopt := estimate.Options{Calibration: opt.Calibration, LaunchProfilerOverhead: opt.OverheadFromLaunches}
		if err := estimateSavings(ctx, x, a, eopt); err != nil {
			x.Close()
			return nil, namingFile(path, err)
		}
	}
	return &Analysis{Report: a, Export: x}, nil
}

// estimateSavings runs the what-if simulator over the analysis' region and
// attaches its savings; an export it cannot estimate gets the reason.
func estimateSavings(ctx context.Context, x *trace.Export, a *report.Analysis, opt estimate.Options) error {
	t := a.Trace
	if len(t.Syncs) == 0 || t.Region.Duration <= 0 {
		return nil
	}
	if why := estimate.Unestimable(t); why != "" {
		a.NoEstimate = why
		return nil
	}
	// A large region is estimated from a sample of windows (the estimator
	// says so in its warnings), so memory stays bounded at any size.
	res, err := estimate.Run(ctx, x, t, a.Sites, opt)
	if err != nil {
		return err // it names the file and says it was estimating
	}
	t.Warnings = append(t.Warnings, res.Warnings...)
	a.Estimates = report.FromEstimate(res)
	a.Estimates.WithoutSyncs = func(ctx context.Context, site *classify.Site, window trace.Interval) (*trace.Timeline, error) {
		tl, err := x.Timeline(ctx, window)
		if err != nil {
			return nil, err
		}
		return estimate.Simulate(ctx, tl, t, site.Syncs, res.Constants)
	}
	return nil
}

// namingFile makes sure an error names the file it is about: the reader's
// errors do, a cancelled context's or the estimator's do not.
func namingFile(path string, err error) error {
	var ie *trace.InputError
	if errors.As(err, &ie) || strings.HasPrefix(err.Error(), path+":") {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// LoadCalibration reads the constants 'nsyssync calibrate' wrote, for
// Options.Calibration; "" is none (nil, no error).
func LoadCalibration(path string) (*estimate.Calibration, error) {
	if path == "" {
		return nil, nil
	}
	return estimate.LoadCalibration(path)
}
