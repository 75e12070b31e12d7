package gate

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nsyssync/nsyssync/report"
	"github.com/nsyssync/nsyssync/trace"
)

// fixtureDir holds the real exports.
const fixtureDir = "../fixtures"

// loaded is one real export, analysed.
type loaded struct{ analysis *report.Analysis }

// load opens a fixture and loads it (the NVTX region when nvtx is set),
// classified but not estimated.
func load(t *testing.T, name, nvtx string) loaded {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(fixtureDir, name)
	x, err := trace.Open(ctx, path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { x.Close() })
	tr, err := x.Load(ctx, trace.LoadOptions{NVTX: nvtx})
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return loaded{analysis: report.New(tr)}
}

// siteWith returns the first site whose location function is fn.
func siteWith(t *testing.T, a *report.Analysis, fn string) int {
	t.Helper()
	for i, s := range a.Sites {
		if s.Location.Function == fn {
			return i
		}
	}
	t.Fatalf("no site in %s with function %q", a.Trace.Path, fn)
	return -1
}
