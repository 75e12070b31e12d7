package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/triage"
)

// defaultDB is the findings database history and diff read when --db is
// not given.
const defaultDB = "triage.db"

type historyOptions struct {
	db     string
	top    int
	last   int
	runs   bool
	format string
}

func newHistoryCmd(stdout, stderr io.Writer) *cobra.Command {
	var opt historyOptions
	cmd := &cobra.Command{
		Use:   "history [SITE]",
		Short: "Show a site's trend across the runs of a findings database",
		Long: `Show how a site's host-blocked time moved across the runs recorded with
'nsyssync batch --db'. SITE is a fingerprint (the "fingerprint" of the JSON
report, or its first characters) or part of the site's location, such as
train.py:42. Without SITE — or with --top N — it shows the N sites that
cost most in the latest run (10 by default), each with its blocked time in
every run; --runs lists the runs.

Exit codes: 0 shown; 1 the database cannot be read or the site is not in
it; 2 bad flags or arguments.`,
		Example: `  nsyssync history --db triage.db c6a14b9e9533
  nsyssync history --db triage.db train.py:42
  nsyssync history --db triage.db --top 10 --last 7
  nsyssync history --db triage.db --runs
  nsyssync history --db triage.db --format json c6a1 | jq '.runs[].blocked_ns'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.format != formatText && opt.format != formatJSON {
				return usagef("unknown --format %q (want text or json)", opt.format)
			}
			if opt.last < 0 || opt.top < 0 {
				return usagef("--top and --last want 0 or more")
			}
			topSet := cmd.Flags().Changed("top")
			modes := len(args)
			if topSet {
				modes++
			}
			if opt.runs {
				modes++
			}
			if modes > 1 {
				return usagef("give one of SITE, --top N or --runs")
			}
			err := runHistory(cmd.Context(), args, opt, stdout)
			return whileDoing(cmd.Context(), err, "while reading %s", textsafe.Display(opt.db, textsafe.Terminal))
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.db, "db", defaultDB, "findings database written by 'nsyssync batch --db'")
	f.IntVar(&opt.top, "top", 10, "show the N sites that cost most in the latest run")
	f.IntVar(&opt.last, "last", 0, "only the last N runs; 0: all")
	f.BoolVar(&opt.runs, "runs", false, "list the recorded runs")
	f.StringVar(&opt.format, "format", formatText, "output: text or json")
	cmd.RegisterFlagCompletionFunc("format", fixedCompletion(formatText, formatJSON))
	return cmd
}

func runHistory(ctx context.Context, args []string, opt historyOptions, stdout io.Writer) error {
	db, err := openExistingDB(ctx, opt.db)
	if err != nil {
		return err
	}
	defer db.Close()
	var (
		value any
		text  func() error
	)
	switch {
	case opt.runs:
		runs, err := db.Runs(ctx)
		if err != nil {
			return err
		}
		if runs == nil {
			runs = []triage.Run{}
		}
		value, text = runs, func() error { return triage.WriteRunsText(stdout, runs) }
	case len(args) == 1:
		fp, err := db.FindSite(ctx, args[0])
		if err != nil {
			return err
		}
		h, err := db.History(ctx, fp, opt.last)
		if err != nil {
			return err
		}
		value, text = h, func() error { return h.WriteText(stdout) }
	default:
		sites, err := db.Top(ctx, opt.top, opt.last)
		if err != nil {
			return err
		}
		value, text = sites, func() error { return triage.WriteTopText(stdout, sites) }
	}
	if opt.format == formatJSON {
		b, err := json.MarshalIndent(value, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the history: %w", err)
		}
		if _, err := stdout.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("writing the history: %w", err)
		}
		return nil
	}
	return text()
}

// openExistingDB opens a findings database that must already exist,
// read-only: the commands that only read one never create, migrate or
// write it (an older database is read as it is).
func openExistingDB(ctx context.Context, path string) (*triage.DB, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no findings database here (record one with 'nsyssync batch --db %s DIR')", path, path)
	}
	return triage.OpenDBReadOnly(ctx, path)
}
