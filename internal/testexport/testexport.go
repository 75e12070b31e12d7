// Package testexport opens the real exports the tests read: one call
// opens an export read-only, loads its trace (an NVTX range's, or the
// whole), fails the test on an error, and closes the export when the test
// ends.
package testexport

import (
	"context"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// Load opens the export at path and loads its trace, that of the NVTX
// range nvtx when set. The export stays open until the test ends, for
// what reads more of it (timelines).
func Load(t testing.TB, path, nvtx string) (*trace.Export, *trace.Trace) {
	t.Helper()
	ctx := context.Background()
	x, err := trace.Open(ctx, path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { x.Close() })
	tr, err := x.Load(ctx, trace.LoadOptions{NVTX: nvtx})
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return x, tr
}
