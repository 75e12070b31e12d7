package main

import (
	"io"

	"github.com/spf13/cobra"
)

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "nsyssync",
		Short: "Find where the CPU blocked on the GPU in Nsight Systems exports",
		Long: `nsyssync reads Nsight Systems SQLite exports (nsys export --type sqlite),
finds every point where a host thread blocked on the GPU — explicit
synchronizes and the copies and frees that block without saying so — and
reports each with the GPU work it waited for and the idle GPU after it.`,
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	(&profileFlags{}).register(root)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newAnalyzeCmd(stdout, stderr), newDoctorCmd(stdout, stderr), newBatchCmd(stdout, stderr), newHistoryCmd(stdout, stderr), newDiffCmd(stdout, stderr), newMergeCmd(stdout, stderr), newReplayCmd(stdout, stderr), newCalibrateCmd(stdout, stderr))
	return root
}
