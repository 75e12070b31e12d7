package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/testexport"
	"github.com/nsyssync/nsyssync/trace"
)

// fixtureDir holds the real exports the golden files are made from.
const fixtureDir = "../fixtures"

// corpusDir is the shared corpus of real third-party exports.
const corpusDir = "../../shared/corpus"

// loaded is one real export, open, with its analysis.
type loaded struct {
	export   *trace.Export
	analysis *Analysis
	// timelines reads the export's timeline: the export itself, or a
	// wrapper that renames what it reads.
	timelines TimelineReader
}

// load opens a fixture, loads it (the NVTX region when nvtx is set) and
// renames it "fixtures/NAME" so that outputs hold no path of this machine;
// a gzipped fixture NAME.sqlite.gz is named as its export, NAME.sqlite,
// so that the reports (and the golden files) read as the export's own.
func load(t *testing.T, name, nvtx string) loaded {
	t.Helper()
	x, tr := testexport.Load(t, filepath.Join(fixtureDir, name), nvtx)
	tr.Path = "fixtures/" + strings.TrimSuffix(name, ".gz")
	return loaded{export: x, analysis: New(tr), timelines: x}
}

// siteWith returns the first site whose location function is fn.
func siteWith(t *testing.T, a *Analysis, fn string) int {
	t.Helper()
	for i, s := range a.Sites {
		if s.Location.Function == fn {
			return i
		}
	}
	t.Fatalf("no site in %s with function %q", a.Trace.Path, fn)
	return -1
}
