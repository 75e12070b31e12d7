package analysis

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
)

const (
	fixtures = "../fixtures"
	// programs holds the Python programs the fixtures profiled.
	programs = "../fixtures/programs"
)

// TestAnalyze runs the pipeline on real fixtures with the options the
// commands pass, and checks what each option changes.
func TestAnalyze(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, fixture string
		opt           Options
		region        string
		estimated     bool
		sourceRead    bool
	}{
		{"analyze", "syncs_backtrace.sqlite.gz", Options{SourceRoot: programs, FindSources: true}, "", true, true},
		{"analyze --nvtx measured", "syncs_backtrace.sqlite.gz", Options{NVTX: "measured", SourceRoot: programs, FindSources: true}, "measured", true, true},
		{"analyze --no-estimate", "syncs_backtrace.sqlite.gz", Options{SourceRoot: programs, FindSources: true, NoEstimate: true}, "", false, true},
		{"doctor, replay", "syncs_backtrace.sqlite.gz", Options{NoEstimate: true}, "", false, false},
		{"no backtraces", "syncs_lean.sqlite.gz", Options{FindSources: true}, "", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(fixtures, tc.fixture)
			var steps []string
			tc.opt.Progress = func(s string) { steps = append(steps, s) }
			an, err := Analyze(ctx, path, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			defer an.Close()
			a := an.Report
			if a.Trace.Region.Name != tc.region || len(a.Trace.Syncs) == 0 || len(a.Sites) == 0 {
				t.Fatalf("region %q with %d syncs and %d sites, want region %q with syncs", a.Trace.Region.Name, len(a.Trace.Syncs), len(a.Sites), tc.region)
			}
			if a.Program.Framework == "" {
				t.Errorf("no program detected")
			}
			if got := a.Estimates != nil; got != tc.estimated {
				t.Errorf("estimated %v, want %v (no estimate: %q)", got, tc.estimated, a.NoEstimate)
			}
			if tc.estimated && a.Estimates.TotalNs <= 0 {
				t.Errorf("estimated savings %d ns, want some", a.Estimates.TotalNs)
			}
			read := slices.ContainsFunc(a.Sites, func(s classify.Site) bool { return s.SourceFile != "" })
			if read != tc.sourceRead {
				t.Errorf("a source line read: %v, want %v", read, tc.sourceRead)
			}
			want := []string{"opening " + path, "reading the syncs of " + path, "grouping the syncs of " + path}
			if tc.estimated {
				want = append(want, "simulating "+path+" without its syncs")
			}
			if !slices.Equal(steps, want) {
				t.Errorf("progress %q, want %q", steps, want)
			}
			if an.Export == nil {
				t.Errorf("the export is not kept open")
			}
		})
	}
}

// TestAnalyzeErrorsNameTheFile: every failure of the pipeline comes back
// as one error that names the export.
func TestAnalyzeErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.sqlite")
	if err := os.WriteFile(text, []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(fixtures, "syncs_lean.sqlite.gz")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		path string
		opt  Options
		is   error
	}{
		{"missing file", context.Background(), filepath.Join(dir, "missing.sqlite"), Options{}, nil},
		{"not SQLite", context.Background(), text, Options{}, trace.ErrNotSQLite},
		{"NVTX range not there", context.Background(), good, Options{NVTX: "nope@nowhere"}, trace.ErrNVTXNotFound},
		{"cancelled", cancelled, good, Options{}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			an, err := Analyze(tc.ctx, tc.path, tc.opt)
			if err == nil {
				an.Close()
				t.Fatal("no error")
			}
			if an != nil {
				t.Errorf("an analysis with the error")
			}
			if !strings.HasPrefix(err.Error(), tc.path+":") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line starting with %q", err, tc.path+":")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
		})
	}
}

// TestLoadCalibration: none is nil; a file that is not a profile names
// itself.
func TestLoadCalibration(t *testing.T) {
	if c, err := LoadCalibration(""); c != nil || err != nil {
		t.Errorf("no calibration: %v, %v", c, err)
	}
	bad := filepath.Join(fixtures, "README.md")
	if _, err := LoadCalibration(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("calibration %s: error %v, want one naming it", bad, err)
	}
}
