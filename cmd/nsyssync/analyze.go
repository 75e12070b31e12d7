package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsyssync/nsyssync/analysis"
	"github.com/nsyssync/nsyssync/gate"
)

// Report formats.
const (
	formatText     = "text"
	formatMarkdown = "markdown"
	formatJSON     = "json"
	formatHTML     = "html"
	formatPerfetto = "perfetto"
)

// formats lists every --format value, with aliases after the canonical
// names.
var formats = []string{formatText, formatMarkdown, formatJSON, formatHTML, formatPerfetto}

var formatAliases = map[string]string{"terminal": formatText, "md": formatMarkdown, "chrome": formatPerfetto}

// exportFlags say how an export is analysed. analyze, batch and diff
// share them, so that the same flags give the same sites and savings in
// all three.
type exportFlags struct {
	nvtx string
	// sourceRoot is where the program's Python files are, to read the
	// lines that synchronised.
	sourceRoot string
	// calibration is a profile written by 'nsyssync calibrate'.
	calibration string
	noEstimate  bool
	// overheadFromLaunches reads the profiler's per-call overhead off the
	// capture's kernel launches (estimate.Options.LaunchProfilerOverhead).
	overheadFromLaunches bool
}

// overheadFromLaunchesUsage is the help of --overhead-from-launches in
// analyze, batch, diff and replay.
const overheadFromLaunchesUsage = "read the profiler's per-call overhead off the capture's kernel launches instead of the 3.7µs default (a calibration's value wins; docs/estimator.md)"

// options reads the calibration and returns the analysis options.
func (f exportFlags) options() (analysis.Options, error) {
	cal, err := analysis.LoadCalibration(f.calibration)
	if err != nil {
		return analysis.Options{}, err
	}
	return analysis.Options{NVTX: f.nvtx, SourceRoot: f.sourceRoot, FindSources: true, NoEstimate: f.noEstimate, Calibration: cal,
		OverheadFromLaunches: f.overheadFromLaunches}, nil
}

type analyzeOptions struct {
	exportFlags
	format string
	top    int
	output string
	color  string
	failOn float64
	gate   bool // --fail-on-savings was given
	// gateLikely counts likely-false sites (call pattern only) in the gate.
	gateLikely bool
	allowList  string
}

func newAnalyzeCmd(stdout, stderr io.Writer) *cobra.Command {
	var opt analyzeOptions
	cmd := &cobra.Command{
		Use:   "analyze FILE...",
		Short: "Report the host syncs of one or more exports",
		Long: `Analyse Nsight Systems SQLite exports: every host sync, grouped into sites
(one place in the program), with the verdict (was the wait needed?), the
evidence, the fix and the estimated saving.

Formats: text (the terminal report; colour only on a terminal, NO_COLOR
honoured), markdown (GitHub-flavoured, for tickets and $GITHUB_STEP_SUMMARY),
json (the nsyssync/v1 contract), html (one self-contained page with a
timeline picture of each top site), perfetto (Chrome-trace JSON of the
region for ui.perfetto.dev).

CI gate: --fail-on-savings PCT exits with code 3 when the removable
(false-dependency) savings of the sites not in the allow-list exceed PCT
percent of the region. Only sites whose evidence decides count (frames,
the program's line, aten ranges); "likely false" sites, which only the
call pattern suggests, count with --gate-likely. The allow-list is
.nsyssync.yaml in the current directory, or --allow-list FILE.

Exit codes: 0 analysed; 1 an export could not be analysed; 2 bad flags or
arguments; 3 the savings gate failed.`,
		Example: `  nsyssync analyze report.sqlite
  nsyssync analyze --nvtx train_step --top 5 report.sqlite
  nsyssync analyze --format markdown report.sqlite >> "$GITHUB_STEP_SUMMARY"
  nsyssync analyze --format html -o report.html report.sqlite
  nsyssync analyze --format perfetto -o syncs.json report.sqlite   # open in ui.perfetto.dev
  nsyssync analyze --format json --nvtx "step@MyDomain" report.sqlite > syncs.json
  nsyssync analyze --fail-on-savings 5 --allow-list ci/.nsyssync.yaml nightly.sqlite`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt.gate = cmd.Flags().Changed("fail-on-savings")
			if err := opt.validate(len(args)); err != nil {
				return usage(err)
			}
			allow, err := loadAllowList(opt.allowList, cmd.Flags().Changed("allow-list"))
			if err != nil {
				return usage(err)
			}
			return runAnalyze(cmd, args, opt, allow, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.format, "format", formatText, "output format: "+strings.Join(formats, ", "))
	f.StringVar(&opt.nvtx, "nvtx", "", "limit the analysis to an NVTX range, NAME or NAME@DOMAIN (every occurrence counts; 'nsyssync doctor' lists them)")
	f.IntVar(&opt.top, "top", 0, "list at most N sites (and N longest syncs in text); 0: all sites")
	f.StringVarP(&opt.output, "output", "o", "", "write the report to FILE instead of stdout")
	f.StringVar(&opt.color, "color", "auto", "colour in the text report: auto (on a terminal, unless NO_COLOR is set), always, never")
	f.Float64Var(&opt.failOn, "fail-on-savings", 0, "exit 3 when removable savings exceed PCT percent of the region")
	f.BoolVar(&opt.gateLikely, "gate-likely", false, "count the likely-false sites (the call pattern alone says false) in --fail-on-savings too")
	f.StringVar(&opt.allowList, "allow-list", gate.DefaultAllowListFile, "YAML file of accepted sites that do not fail the gate")
	f.StringVar(&opt.calibration, "calibration", "", "constants measured on a GPU by 'nsyssync calibrate' for the savings simulator")
	f.BoolVar(&opt.noEstimate, "no-estimate", false, "skip the savings simulation")
	f.BoolVar(&opt.overheadFromLaunches, "overhead-from-launches", false, overheadFromLaunchesUsage)
	f.StringVar(&opt.sourceRoot, "source-root", "", "directory holding the program's Python sources, searched first; without it they are looked for at their recorded paths, under the current directory and beside the export")
	registerAnalyzeCompletions(cmd)
	return cmd
}

// validate checks the flags before any file is read.
func (o *analyzeOptions) validate(files int) error {
	if canon, ok := formatAliases[o.format]; ok {
		o.format = canon
	}
	if !slices.Contains(formats, o.format) {
		return fmt.Errorf("unknown --format %q (want %s)", o.format, strings.Join(formats, ", "))
	}
	if o.top < 0 {
		return fmt.Errorf("--top %d: want 0 or more", o.top)
	}
	if o.color != "auto" && o.color != "always" && o.color != "never" {
		return fmt.Errorf("unknown --color %q (want auto, always or never)", o.color)
	}
	if o.gateLikely && !o.gate {
		return fmt.Errorf("--gate-likely: only with --fail-on-savings")
	}
	if o.gate && (o.failOn < 0 || o.failOn > 100) {
		return fmt.Errorf("--fail-on-savings %g: want a percentage from 0 to 100", o.failOn)
	}
	if (o.format == formatHTML || o.format == formatPerfetto) && files > 1 {
		return fmt.Errorf("--format %s writes one export at a time (got %d files)", o.format, files)
	}
	if o.sourceRoot != "" {
		if st, err := os.Stat(o.sourceRoot); err != nil || !st.IsDir() {
			return fmt.Errorf("--source-root %s: not a directory", o.sourceRoot)
		}
	}
	return nil
}

// loadAllowList reads the allow-list: the named file, or the default
// one in the current directory when it exists.
func loadAllowList(path string, named bool) (*gate.AllowList, error) {
	if !named {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
	}
	return gate.LoadAllowList(path)
}
