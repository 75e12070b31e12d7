package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/internal/words"
	"github.com/nsyssync/nsyssync/triage"
)

// formatJSONL writes one nsyssync/v1 document per trace, one per line.
const formatJSONL = "jsonl"

var batchFormats = []string{formatText, formatJSON, formatJSONL}

type batchOptions struct {
	exportFlags
	jobs   int
	format string
	output string
	top    int
	db     string
	run    string
	shard  string
}

func newBatchCmd(stdout, stderr io.Writer) *cobra.Command {
	var opt batchOptions
	cmd := &cobra.Command{
		Use:   "batch PATH|GLOB...",
		Short: "Analyse many exports in parallel and summarise them (nightly triage)",
		Long: `Analyse many Nsight Systems exports at once: files, directories (walked for
*.sqlite, *.sqlite.gz and *.nsys-rep; a .sqlite.gz or .nsys-rep beside a
.sqlite of the same name, or a .nsys-rep beside a .sqlite.gz, is skipped)
and glob patterns. A gzipped export is unpacked into a temporary file. A .nsys-rep is exported to SQLite with
'nsys export' into a temporary directory when nsys is on the PATH.

Each export is analysed on its own: one that cannot be read is reported on
stderr and in the summary while the others go on.

Formats: text (a summary: totals per trace, the sites that cost most across
all traces, the sites seen in many traces, the failures), json (the same
summary, schema nsyssync-batch/v1), jsonl (one nsyssync/v1 document per
trace and line, the contract of 'analyze --format json'; a trace that
failed is a line with "error" set and no sites).

--db FILE records the run in a findings database (SQLite, created if
absent) for 'nsyssync history' and 'nsyssync diff'. --shard i/n analyses
only the share of the inputs whose base name hashes to i (0 <= i < n), so
that n machines split a night; give them the same --run label and combine
their outputs with 'nsyssync merge'.

Exit codes: 0 every input analysed; 1 some input could not be analysed
(the others are in the output), or the output or database could not be
written; 2 bad flags or no arguments.`,
		Example: `  nsyssync batch nightly/                       # every export under nightly/
  nsyssync batch --jobs 8 'runs/*/report*.sqlite'
  nsyssync batch --format jsonl -o night.jsonl nightly/ && jq -c '.totals' night.jsonl
  nsyssync batch --db triage.db --run "$(date +%F)" nightly/
  # Kubernetes indexed Job / Slurm array, then combine:
  nsyssync batch --shard "$JOB_COMPLETION_INDEX/8" --run "$(date +%F)" --db "shard-$JOB_COMPLETION_INDEX.db" nightly/
  nsyssync merge --db triage.db shard-*.db`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			shard, err := opt.validate()
			if err != nil {
				return usage(err)
			}
			return runBatch(cmd.Context(), args, opt, shard, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&opt.jobs, "jobs", "j", runtime.NumCPU(), "exports analysed at once")
	f.StringVar(&opt.format, "format", formatText, "output: "+strings.Join(batchFormats, ", "))
	f.StringVarP(&opt.output, "output", "o", "", "write to FILE instead of stdout")
	f.IntVar(&opt.top, "top", 10, "sites listed in each table of the summary; 0: all")
	f.StringVar(&opt.nvtx, "nvtx", "", "analyse only an NVTX range, NAME or NAME@DOMAIN, in every export")
	f.StringVar(&opt.sourceRoot, "source-root", "", "directory holding the programs' Python sources, searched first (then the recorded paths, the current directory, beside each export)")
	f.StringVar(&opt.calibration, "calibration", "", "constants from 'nsyssync calibrate' for the savings simulator")
	f.BoolVar(&opt.noEstimate, "no-estimate", false, "skip the savings simulation")
	f.BoolVar(&opt.overheadFromLaunches, "overhead-from-launches", false, overheadFromLaunchesUsage)
	f.StringVar(&opt.db, "db", "", "record the run in this findings database (created if absent)")
	f.StringVar(&opt.run, "run", "", "label of the run in the database (default: its start time); shards of one night share it")
	f.StringVar(&opt.shard, "shard", "", "analyse only shard i of n (i/n, 0 <= i < n) of the inputs")
	cmd.ValidArgsFunction = completeExports
	cmd.RegisterFlagCompletionFunc("format", fixedCompletion(batchFormats...))
	return cmd
}

func (o *batchOptions) validate() (triage.Shard, error) {
	if !slices.Contains(batchFormats, o.format) {
		return triage.Shard{}, fmt.Errorf("unknown --format %q (want %s)", o.format, strings.Join(batchFormats, ", "))
	}
	if o.jobs < 1 {
		return triage.Shard{}, fmt.Errorf("--jobs %d: want 1 or more", o.jobs)
	}
	if o.top < 0 {
		return triage.Shard{}, fmt.Errorf("--top %d: want 0 or more", o.top)
	}
	if o.sourceRoot != "" {
		if st, err := os.Stat(o.sourceRoot); err != nil || !st.IsDir() {
			return triage.Shard{}, fmt.Errorf("--source-root %s: not a directory", o.sourceRoot)
		}
	}
	if o.run != "" && o.db == "" {
		return triage.Shard{}, fmt.Errorf("--run labels a run of the findings database: give --db too")
	}
	if o.shard == "" {
		return triage.Shard{}, nil
	}
	return triage.ParseShard(o.shard)
}

// runBatch analyses the inputs, writes the output and records the run.
func runBatch(ctx context.Context, args []string, opt batchOptions, shard triage.Shard, stdout, stderr io.Writer) error {
	inputs := shard.Select(triage.Expand(args))
	read := []string{opt.db, opt.calibration}
	for _, in := range inputs {
		read = append(read, in.Path)
	}
	out, err := openOutput(ctx, opt.output, stdout, read)
	if err != nil {
		return err
	}
	defer out.abort() // nothing once committed
	aopt, err := opt.options()
	if err != nil {
		return err
	}
	rec, err := startRecording(ctx, opt, shard)
	if err != nil {
		return whileDoing(ctx, err, "while opening %s", textsafe.Display(opt.db, textsafe.Terminal))
	}
	defer rec.close()

	prog := newProgress(stderr)
	defer prog.clear()
	summary := triage.NewSummary()
	done := 0 // emit runs on this goroutine, one result at a time
	emit := func(r triage.Result) error {
		done++
		prog.set(fmt.Sprintf("analysed %d of %d exports", done, len(inputs)))
		summary.Add(r)
		if r.Err != nil {
			prog.clear()
			printError(stderr, r.Err)
		}
		if opt.format == formatJSONL {
			if err := triage.WriteLine(out, r); err != nil {
				return err
			}
		}
		return rec.add(ctx, r)
	}
	bopt := triage.Options{Jobs: opt.jobs, Analysis: aopt, KeepSyncs: opt.format == formatJSONL}
	err = triage.Batch(ctx, inputs, bopt, emit)
	prog.clear()
	if err == nil {
		err = rec.finish(ctx)
	}
	if err != nil {
		return whileDoing(ctx, err, "after %d of %d exports", done, len(inputs))
	}
	rep := summary.Report(opt.top)
	switch opt.format {
	case formatText:
		err = rep.WriteText(out)
	case formatJSON:
		err = rep.WriteJSON(out)
	}
	if err == nil {
		err = out.commit()
	}
	if err != nil {
		return err
	}
	if opt.format == formatJSONL || len(inputs) == 0 {
		fmt.Fprintf(stderr, "nsyssync: %s%s: %d analysed, %d failed\n", words.Count(len(inputs), "input", "inputs"), shardNote(shard), rep.Analysed, rep.Failed)
	}
	if rep.Failed > 0 {
		return &exitErr{code: exitError}
	}
	return nil
}

func shardNote(s triage.Shard) string {
	if s.Count <= 1 {
		return ""
	}
	return " in shard " + s.String()
}

// recorder writes a batch into the findings database; without --db it
// does nothing.
type recorder struct {
	db  *triage.DB
	run int64
}

func startRecording(ctx context.Context, opt batchOptions, shard triage.Shard) (*recorder, error) {
	if opt.db == "" {
		return &recorder{}, nil
	}
	db, err := triage.OpenDB(ctx, opt.db)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname() // an unknown host name is recorded as ""
	run, err := db.BeginRun(ctx, triage.RunInfo{Label: opt.run, Host: host, ToolVersion: version, Shard: shard.String()})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &recorder{db: db, run: run}, nil
}

func (r *recorder) add(ctx context.Context, res triage.Result) error {
	if r.db == nil {
		return nil
	}
	return r.db.AddResult(ctx, r.run, res)
}

func (r *recorder) finish(ctx context.Context) error {
	if r.db == nil {
		return nil
	}
	return r.db.FinishRun(ctx, r.run)
}

func (r *recorder) close() {
	if r.db != nil {
		r.db.Close()
	}
}
