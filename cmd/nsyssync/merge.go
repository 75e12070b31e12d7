package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/nsyssync/nsyssync/internal/words"
	"github.com/nsyssync/nsyssync/triage"
)

type mergeOptions struct {
	output string
	db     string
	run    string
}

func newMergeCmd(stdout, stderr io.Writer) *cobra.Command {
	var opt mergeOptions
	cmd := &cobra.Command{
		Use:   "merge FILE...",
		Short: "Combine the JSON Lines files or findings databases of batch shards",
		Long: `Combine what the shards of a batch wrote.

JSON Lines ('batch --format jsonl'): the lines of every file are written to
stdout (or -o FILE), each trace once. With --db FILE they are also recorded
as one run of that findings database, labelled --run.

Findings databases ('batch --db'): the runs of every file are copied into
--db FILE (created if absent). Runs with the same label — shards given the
same 'batch --run' — become one run; --run LABEL puts them all under LABEL.
A trace already in its run is skipped, so merging twice changes nothing.
The inputs are only read.

Exit codes: 0 merged; 1 an input could not be read or the output written;
2 bad flags or arguments (mixed inputs, databases without --db).`,
		Example: `  nsyssync merge -o night.jsonl shard-*.jsonl
  nsyssync merge --db triage.db --run "$(date +%F)" shard-*.jsonl > night.jsonl
  nsyssync merge --db triage.db shard-*.db`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kinds, err := mergeInputKinds(args)
			if err != nil {
				return err
			}
			dbs, err := checkMergeInputs(args, kinds, opt)
			if err != nil {
				return usage(err)
			}
			var st triage.MergeStats
			if dbs {
				st, err = mergeDatabases(cmd.Context(), args, opt)
			} else {
				st, err = mergeLines(cmd.Context(), args, opt, stdout)
			}
			if err != nil {
				return whileDoing(cmd.Context(), err, "while merging %d files", len(args))
			}
			fmt.Fprintf(stderr, "nsyssync: merged %s: %s (%d failed), %s skipped\n",
				words.Count(st.Sources, "file", "files"), words.Count(st.Traces, "trace", "traces"), st.Failed, words.Count(st.Duplicates, "duplicate", "duplicates"))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opt.output, "output", "o", "", "write the merged JSON Lines to FILE instead of stdout")
	f.StringVar(&opt.db, "db", "", "findings database to merge into (created if absent)")
	f.StringVar(&opt.run, "run", "", "label of the merged run in --db")
	return cmd
}

// mergeInputKinds reads whether each input is an SQLite database.
func mergeInputKinds(args []string) ([]bool, error) {
	kinds := make([]bool, len(args))
	for i, a := range args {
		isDB, err := triage.IsSQLite(a)
		if err != nil {
			return nil, err
		}
		kinds[i] = isDB
	}
	return kinds, nil
}

// checkMergeInputs says whether the inputs are findings databases (true)
// or JSON Lines (false), refusing a mix and an input that is the output.
func checkMergeInputs(args []string, kinds []bool, opt mergeOptions) (bool, error) {
	dbs := 0
	for i, a := range args {
		if kinds[i] {
			dbs++
		}
		if opt.db != "" && sameFile(a, opt.db) {
			return false, fmt.Errorf("%s is both an input and the --db to merge into", a)
		}
	}
	switch {
	case dbs > 0 && dbs < len(args):
		return false, fmt.Errorf("merge either JSON Lines files or findings databases, not both")
	case dbs > 0 && opt.db == "":
		return false, fmt.Errorf("merging findings databases needs --db FILE to merge into")
	case dbs > 0 && opt.output != "":
		return false, fmt.Errorf("-o writes JSON Lines; findings databases merge into --db")
	}
	return dbs > 0, nil
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(sa, sb)
	}
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	return aa == ab
}

func mergeDatabases(ctx context.Context, args []string, opt mergeOptions) (triage.MergeStats, error) {
	var total triage.MergeStats
	db, err := triage.OpenDB(ctx, opt.db)
	if err != nil {
		return total, err
	}
	defer db.Close()
	for _, src := range args {
		st, err := db.MergeDB(ctx, src, opt.run)
		if err != nil {
			return total, err
		}
		total.Sources += st.Sources
		total.Runs += st.Runs
		total.Traces += st.Traces
		total.Failed += st.Failed
		total.Duplicates += st.Duplicates
	}
	return total, nil
}

func mergeLines(ctx context.Context, args []string, opt mergeOptions, stdout io.Writer) (triage.MergeStats, error) {
	out, err := openOutput(ctx, opt.output, stdout, append([]string{opt.db}, args...))
	if err != nil {
		return triage.MergeStats{}, err
	}
	rec, err := startRecording(ctx, batchOptions{db: opt.db, run: opt.run}, triage.Shard{})
	if err != nil {
		out.abort()
		return triage.MergeStats{}, err
	}
	defer rec.close()
	st, err := triage.MergeLines(ctx, args, out, func(l triage.Line) error { return rec.add(ctx, l.Result()) })
	if err == nil {
		err = rec.finish(ctx)
	}
	if err != nil {
		out.abort()
		return st, err
	}
	return st, out.commit()
}
