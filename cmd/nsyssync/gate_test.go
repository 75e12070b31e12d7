package main

import (
	"strings"
	"testing"
)

// TestGateLikelyFlag: on a lean export, whose false sites only the call
// pattern suggests, the gate passes and says what it left out; with
// --gate-likely it counts them and fails. --gate-likely without the gate
// is a usage error.
func TestGateLikelyFlag(t *testing.T) {
	const lean = "../../fixtures/syncs_lean.sqlite.gz"
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"likely sites left out", []string{"analyze", "--no-estimate", "--nvtx", "measured", "--fail-on-savings", "1", lean}, exitOK,
			"likely-false sites (s"},
		{"--gate-likely counts them", []string{"analyze", "--no-estimate", "--nvtx", "measured", "--fail-on-savings", "1", "--gate-likely", lean}, exitGate,
			"likely-false sites counted (--gate-likely)"},
		{"decided sites count without it", []string{"analyze", "--no-estimate", "--nvtx", "measured", "--fail-on-savings", "1", fixture}, exitGate,
			"savings gate FAILED"},
		{"--gate-likely alone", []string{"analyze", "--gate-likely", lean}, exitUsage,
			"--gate-likely: only with --fail-on-savings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.code, tc.stderr)
			}
		})
	}
}
