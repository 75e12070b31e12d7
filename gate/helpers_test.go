package gate

import (
	"path/filepath"
	"testing"

	"github.com/nsyssync/nsyssync/internal/testexport"
	"github.com/nsyssync/nsyssync/report"
)

// fixtureDir holds the real exports.
const fixtureDir = "../fixtures"

// loaded is one real export, analysed.
type loaded struct{ analysis *report.Analysis }

// load opens a fixture and loads it (the NVTX region when nvtx is set),
// classified but not estimated.
func load(t *testing.T, name, nvtx string) loaded {
	t.Helper()
	_, tr := testexport.Load(t, filepath.Join(fixtureDir, name), nvtx)
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
