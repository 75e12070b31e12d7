package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/triage"
)

type diffOptions struct {
	db        string
	format    string
	failOn    float64
	gate      bool
	minChange float64
	all       bool
	jobs      int
	// exportFlags: as for analyze, for the sides that are exports.
	exportFlags
}

func newDiffCmd(stdout, stderr io.Writer) *cobra.Command {
	var opt diffOptions
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Compare two exports, two JSON reports or two recorded runs site by site",
		Long: `Compare the sites of OLD and NEW by fingerprint and list the sites that are
new, gone, grown and shrunk in host-blocked time. OLD and NEW are each an
export (.sqlite, .nsys-rep) or a directory of them, a JSON report
('analyze --format json') or JSON Lines file ('batch --format jsonl'), or —
when no such file exists and --db is given — a run of the findings
database: its id, its label, latest or previous. An export is analysed
as analyze analyses it, savings estimated (--no-estimate skips it), so a
JSON report and its own export compare as unchanged.

A site is grown or shrunk when its blocked time moved by at least
--min-change percent of its old time; the others are counted as unchanged.

CI gate: --fail-on-regression PCT exits with code 3 when the total
host-blocked time grew by more than PCT percent of the old total, or when a
single site, new or grown, added more than PCT percent of the old total.

Exit codes: 0 compared (and the gate, if any, passed); 1 an input could
not be read; 2 bad flags or arguments; 3 the regression gate failed.`,
		Example: `  nsyssync diff yesterday.sqlite today.sqlite
  nsyssync diff old.json new.json
  nsyssync diff --db triage.db previous latest
  nsyssync diff --db triage.db 2025-11-20 2025-11-21 --format json
  nsyssync diff --fail-on-regression 5 baseline.jsonl nightly.jsonl`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt.gate = cmd.Flags().Changed("fail-on-regression")
			if err := opt.validate(); err != nil {
				return usage(err)
			}
			err := runDiff(cmd.Context(), args, opt, stdout, stderr)
			return whileDoing(cmd.Context(), err, "while comparing %s and %s", textsafe.Display(args[0], textsafe.Terminal), textsafe.Display(args[1], textsafe.Terminal))
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.db, "db", "", "findings database holding the runs to compare")
	f.StringVar(&opt.format, "format", formatText, "output: text or json")
	f.Float64Var(&opt.failOn, "fail-on-regression", 0, "exit 3 when blocked time grew more than PCT percent of OLD's total")
	f.Float64Var(&opt.minChange, "min-change", 10, "percent of a site's old time below which it counts as unchanged")
	f.BoolVar(&opt.all, "all", false, "list unchanged sites too (text)")
	f.StringVar(&opt.nvtx, "nvtx", "", "analyse exports only in an NVTX range, NAME or NAME@DOMAIN")
	f.StringVar(&opt.sourceRoot, "source-root", "", "directory holding the programs' Python sources, searched first (then the recorded paths, the current directory, beside each export)")
	f.IntVarP(&opt.jobs, "jobs", "j", runtime.NumCPU(), "exports analysed at once (directories)")
	f.StringVar(&opt.calibration, "calibration", "", "constants from 'nsyssync calibrate' for the savings simulator (exports)")
	f.BoolVar(&opt.noEstimate, "no-estimate", false, "skip the savings simulation of exports (their estimated savings are then 0)")
	f.BoolVar(&opt.overheadFromLaunches, "overhead-from-launches", false, overheadFromLaunchesUsage)
	cmd.RegisterFlagCompletionFunc("format", fixedCompletion(formatText, formatJSON))
	return cmd
}

func (o *diffOptions) validate() error {
	if o.format != formatText && o.format != formatJSON {
		return fmt.Errorf("unknown --format %q (want text or json)", o.format)
	}
	if o.gate && o.failOn < 0 {
		return fmt.Errorf("--fail-on-regression %g: want a percentage of 0 or more", o.failOn)
	}
	if o.minChange < 0 {
		return fmt.Errorf("--min-change %g: want a percentage of 0 or more", o.minChange)
	}
	if o.jobs < 1 {
		return fmt.Errorf("--jobs %d: want 1 or more", o.jobs)
	}
	return nil
}

func runDiff(ctx context.Context, args []string, opt diffOptions, stdout, stderr io.Writer) error {
	var db *triage.DB
	if opt.db != "" {
		var err error
		if db, err = openExistingDB(ctx, opt.db); err != nil {
			return err
		}
		defer db.Close()
	}
	// An export is analysed as analyze does it, estimator included, so
	// that it compares with a JSON report of analyze like for like.
	aopt, err := opt.options()
	if err != nil {
		return err
	}
	bopt := triage.Options{Jobs: opt.jobs, Analysis: aopt}
	var sides [2]*triage.Snapshot
	for i, arg := range args {
		snap, err := loadSide(ctx, arg, db, bopt)
		if err != nil {
			return err
		}
		for _, f := range snap.Failures {
			fmt.Fprintf(stderr, "nsyssync: %s (left out of the comparison)\n", textsafe.Message(f.Error))
		}
		if snap.Traces == 0 {
			return fmt.Errorf("%s: no trace could be analysed", arg)
		}
		sides[i] = snap
	}
	d := triage.Compare(sides[0], sides[1], opt.minChange)
	if opt.format == formatJSON {
		err = d.WriteJSON(stdout)
	} else {
		err = d.WriteText(stdout, opt.all)
	}
	if err != nil {
		return err
	}
	if !opt.gate {
		return nil
	}
	reasons := d.Regressions(opt.failOn)
	for _, r := range reasons {
		fmt.Fprintf(stderr, "nsyssync: regression: %s\n", r)
	}
	if len(reasons) > 0 {
		return &exitErr{code: exitRegression}
	}
	return nil
}

// loadSide reads one side of the diff: a file or directory when one
// exists at arg, else a run of the database.
func loadSide(ctx context.Context, arg string, db *triage.DB, opt triage.Options) (*triage.Snapshot, error) {
	_, statErr := os.Stat(arg)
	if statErr == nil || db == nil {
		if errors.Is(statErr, os.ErrNotExist) && db == nil && !strings.ContainsAny(arg, "/.") {
			return nil, fmt.Errorf("%s: no such file (to compare recorded runs, give --db)", arg)
		}
		return triage.LoadSnapshot(ctx, arg, opt)
	}
	run, err := db.ResolveRun(ctx, arg)
	if err != nil {
		return nil, err
	}
	return db.Snapshot(ctx, run)
}
