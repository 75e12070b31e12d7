package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/nsyssync/nsyssync/report"
	"github.com/nsyssync/nsyssync/trace"
)

// Shell completion: cobra's "nsyssync completion bash|zsh|fish|powershell"
// writes the script; these functions teach it the flag values and that
// arguments are .sqlite exports.

// completionTimeout bounds the work a completion may do (reading NVTX
// names from an export) so that the shell never hangs on TAB.
const completionTimeout = 3 * time.Second

func completeExports(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"sqlite"}, cobra.ShellCompDirectiveFilterFileExt
}

func fixedCompletion(values ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
}

func registerAnalyzeCompletions(cmd *cobra.Command) {
	cmd.ValidArgsFunction = completeExports
	cmd.RegisterFlagCompletionFunc("format", fixedCompletion(formats...))
	cmd.RegisterFlagCompletionFunc("color", fixedCompletion("auto", "always", "never"))
	cmd.RegisterFlagCompletionFunc("nvtx", completeNVTX)
	cmd.RegisterFlagCompletionFunc("allow-list", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
	})
	cmd.RegisterFlagCompletionFunc("top", cobra.NoFileCompletions)
	cmd.RegisterFlagCompletionFunc("fail-on-savings", cobra.NoFileCompletions)
}

func registerDoctorCompletions(cmd *cobra.Command) {
	cmd.ValidArgsFunction = completeExports
	cmd.RegisterFlagCompletionFunc("format", fixedCompletion(formatText, formatJSON))
	cmd.RegisterFlagCompletionFunc("color", fixedCompletion("auto", "always", "never"))
}

// completeNVTX offers the names of the NVTX ranges around the syncs of the
// first export on the command line.
func completeNVTX(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	x, err := trace.Open(ctx, args[0])
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer x.Close()
	t, err := x.Load(ctx, trace.LoadOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	d := report.Diagnose(report.New(t))
	var names []string
	for _, r := range d.Ranges {
		name := r.Name
		if r.Domain != "" {
			name += "@" + r.Domain
		}
		names = append(names, name)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
