package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nsyssync/nsyssync/report"
	"github.com/nsyssync/nsyssync/trace"
)

type analyzeOptions struct {
	format string
	nvtx   string
	top    int
}

func newAnalyzeCmd(stdout, stderr io.Writer) *cobra.Command {
	var opt analyzeOptions
	cmd := &cobra.Command{
		Use:   "analyze FILE...",
		Short: "Inventory the host syncs of one or more exports",
		Example: `  nsyssync analyze report.sqlite
  nsyssync analyze --nvtx train_step report.sqlite
  nsyssync analyze --nvtx "step@MyDomain" --format json report.sqlite > syncs.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.format != "text" && opt.format != "json" {
				return fmt.Errorf("unknown --format %q (want text or json)", opt.format)
			}
			failed := 0
			for i, path := range args {
				if i > 0 && opt.format == "text" {
					fmt.Fprintln(stdout)
				}
				if err := analyzeOne(cmd.Context(), path, opt, stdout); err != nil {
					fmt.Fprintf(stderr, "nsyssync: %v\n", err)
					failed++
				}
				if cmd.Context().Err() != nil {
					return &exitErr{code: exitError}
				}
			}
			if failed > 0 {
				return &exitErr{code: exitError}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.format, "format", "text", "output format: text or json")
	f.StringVar(&opt.nvtx, "nvtx", "", "limit the analysis to an NVTX range, NAME or NAME@DOMAIN (every occurrence counts)")
	f.IntVar(&opt.top, "top", 0, "list at most N sites and syncs in text output (0: all sites, 20 syncs)")
	return cmd
}

func analyzeOne(ctx context.Context, path string, opt analyzeOptions, w io.Writer) error {
	x, err := trace.Open(ctx, path)
	if err != nil {
		return err
	}
	defer x.Close()
	t, err := x.Load(ctx, trace.LoadOptions{NVTX: opt.nvtx})
	if err != nil {
		return err
	}
	a := report.New(t)
	if opt.format == "json" {
		return a.WriteJSON(w)
	}
	return a.WriteText(w, report.TextOptions{Top: opt.top})
}
