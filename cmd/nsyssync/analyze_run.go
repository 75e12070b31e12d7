package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nsyssync/nsyssync/analysis"
	"github.com/nsyssync/nsyssync/gate"
	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/report"
	"github.com/nsyssync/nsyssync/trace"
)

// runAnalyze analyses each file in turn into one output. A bad file is
// reported on stderr and the rest go on.
func runAnalyze(cmd *cobra.Command, args []string, opt analyzeOptions, allow *gate.AllowList, stdout, stderr io.Writer) error {
	ctx := cmd.Context()
	out, err := openOutput(ctx, opt.output, stdout, append([]string{opt.calibration, opt.allowList}, args...))
	if err != nil {
		return err
	}
	defer out.abort() // nothing once committed
	aopt, err := opt.options()
	if err != nil {
		return err
	}
	view := terminalView(stdout, opt.output != "", opt.color)
	prog := newProgress(stderr)
	defer prog.clear()
	failed, gateFailed, written := 0, false, 0
	for i, path := range args {
		if len(args) > 1 {
			prog.setPrefix(fmt.Sprintf("[%d/%d] ", i+1, len(args)))
		}
		if written > 0 {
			writeSeparator(out, opt.format)
		}
		decision, err := analyzeOne(ctx, path, opt, aopt, allow, out, view, prog)
		prog.clear()
		if ctx.Err() != nil {
			return interrupted("while analysing %s", textsafe.Display(path, textsafe.Terminal))
		}
		if err != nil {
			printError(stderr, err)
			failed++
		} else {
			written++
		}
		if decision != nil {
			fmt.Fprintf(stderr, "nsyssync: %s: %s\n", textsafe.Display(path, textsafe.Terminal), textsafe.Display(decision.String(), textsafe.Terminal))
			gateFailed = gateFailed || decision.Failed
		}
	}
	if written > 0 {
		if err := out.commit(); err != nil {
			return err
		}
	}
	switch {
	case failed > 0:
		return &exitErr{code: exitError}
	case gateFailed:
		return &exitErr{code: exitGate}
	}
	return nil
}

// analyzeOne analyses and renders one export, and decides the gate when
// one was asked for.
func analyzeOne(ctx context.Context, path string, opt analyzeOptions, aopt analysis.Options, allow *gate.AllowList, out *output, view terminal, prog *progress) (*gate.Result, error) {
	aopt.Progress = prog.set
	an, err := analysis.Analyze(ctx, path, aopt)
	if err != nil {
		return nil, err
	}
	defer an.Close()
	a := an.Report
	a.Allowed = allow.Match(a)
	var decision *gate.Result
	gateLine := ""
	if opt.gate {
		g := gate.Decide(a, opt.failOn, gate.Options{CountLikely: opt.gateLikely})
		decision, gateLine = &g, g.String()
	}
	switch opt.format {
	case formatHTML:
		prog.set("drawing the timelines of " + path)
	case formatPerfetto:
		prog.set("reading the timeline of " + path)
	}
	if err := render(ctx, a, an.Export, opt, gateLine, out, view, prog); err != nil {
		return decision, fmt.Errorf("%s: %w", path, err)
	}
	return decision, nil
}

// render writes the analysis in the chosen format.
func render(ctx context.Context, a *report.Analysis, x *trace.Export, opt analyzeOptions, gateLine string, out *output, view terminal, prog *progress) error {
	switch opt.format {
	case formatJSON:
		prog.clear()
		return a.WriteJSON(out)
	case formatMarkdown:
		prog.clear()
		return a.WriteMarkdown(out, report.MarkdownOptions{Top: opt.top, GateLine: gateLine})
	case formatHTML, formatPerfetto:
		if !out.toFile() {
			prog.clear() // the page goes to the terminal the progress is on
		}
		if opt.format == formatHTML {
			return a.WriteHTML(ctx, out, report.HTMLOptions{Top: opt.top, Timelines: x, GateLine: gateLine})
		}
		return a.WritePerfetto(ctx, out, x)
	}
	prog.clear()
	return a.WriteText(out, report.TextOptions{Top: opt.top, Color: view.color, Width: view.width})
}

// writeSeparator goes between the reports of several files.
func writeSeparator(w io.Writer, format string) {
	switch format {
	case formatText:
		fmt.Fprintln(w)
	case formatMarkdown:
		fmt.Fprint(w, "\n---\n\n")
	}
}
