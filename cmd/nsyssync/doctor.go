package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nsyssync/nsyssync/analysis"
	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/report"
)

type doctorOptions struct {
	format string
	color  string
}

func newDoctorCmd(stdout, stderr io.Writer) *cobra.Command {
	var opt doctorOptions
	cmd := &cobra.Command{
		Use:   "doctor FILE...",
		Short: "Say what an export holds for this analysis and how to capture more",
		Long: `Check what an export contains for sync analysis — CUDA trace, GPU
activity, native and Python backtraces (and whether the Python payload was
exported), NVTX and autograd NVTX ranges, GPU info, sync records, schema
version — list the NVTX ranges around its syncs (for --nvtx), and print the
nsys profile and nsys export command lines that would give better evidence.

Exit codes: 0 the export can be analysed; 1 it cannot (the line on stderr
says why; the advice is still printed); 2 bad flags or arguments.`,
		Example: `  nsyssync doctor report.sqlite
  nsyssync doctor --format json report.sqlite | jq .nvtx_ranges`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.format != formatText && opt.format != formatJSON {
				return usagef("unknown --format %q (want text or json)", opt.format)
			}
			if opt.color != "auto" && opt.color != "always" && opt.color != "never" {
				return usagef("unknown --color %q (want auto, always or never)", opt.color)
			}
			return runDoctor(cmd.Context(), args, opt, stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&opt.format, "format", formatText, "output format: text or json")
	cmd.Flags().StringVar(&opt.color, "color", "auto", "colour: auto (on a terminal, unless NO_COLOR is set), always, never")
	registerDoctorCompletions(cmd)
	return cmd
}

// runDoctor diagnoses each export in turn; one that cannot be analysed
// is reported on stderr, still gets its advice, and the rest go on.
func runDoctor(ctx context.Context, args []string, opt doctorOptions, stdout, stderr io.Writer) error {
	view := terminalView(stdout, false, opt.color)
	prog := newProgress(stderr)
	defer prog.clear()
	failed := 0
	for i, path := range args {
		if i > 0 && opt.format == formatText {
			fmt.Fprintln(stdout)
		}
		prog.set("reading " + path)
		d, err := diagnose(ctx, path)
		prog.clear()
		if ctx.Err() != nil {
			return interrupted("while reading %s", textsafe.Display(path, textsafe.Terminal))
		}
		if err != nil {
			printError(stderr, err)
			failed++
		}
		if opt.format == formatJSON {
			err = d.WriteJSON(stdout)
		} else {
			err = d.WriteText(stdout, report.TextOptions{Color: view.color, Width: view.width})
		}
		if err != nil {
			return fmt.Errorf("writing the diagnosis of %s: %w", path, err)
		}
	}
	if failed > 0 {
		return &exitErr{code: exitError}
	}
	return nil
}

// diagnose loads the whole export and diagnoses it; an export that cannot
// be loaded still gets a diagnosis (with the error).
func diagnose(ctx context.Context, path string) (*report.Diagnosis, error) {
	an, err := analysis.Analyze(ctx, path, analysis.Options{NoEstimate: true})
	if err != nil {
		return report.DiagnoseFailure(path, err), err
	}
	defer an.Close()
	return report.Diagnose(an.Report), nil
}
