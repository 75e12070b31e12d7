package report

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/trace"
)

func checkStatus(d *Diagnosis, name string) string {
	for _, c := range d.Checks {
		if c.Name == name {
			return c.Status
		}
	}
	return "absent"
}

// TestDiagnose checks the doctor's findings on the four fixtures against
// how each was profiled (fixtures/README.md).
func TestDiagnose(t *testing.T) {
	tests := []struct {
		fixture                          string
		native, python, autograd, nvtxOK string
		measuredSyncs, measuredOccur     int
		profile, reexport                bool
	}{
		{"syncs_backtrace.sqlite.gz", statusYes, statusYes, statusNo, statusYes, 30, 1, true, false},
		{"syncs_autograd.sqlite.gz", statusNo, statusNo, statusYes, statusYes, 30, 1, true, false},
		{"syncs_lean.sqlite.gz", statusNo, statusNo, statusNo, statusYes, 30, 1, true, false},
		{"multiproc_lean.sqlite.gz", statusNo, statusNo, statusNo, statusYes, 8, 2, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			d := Diagnose(load(t, tc.fixture, "").analysis)
			for name, want := range map[string]string{"native backtraces": tc.native, "Python backtraces": tc.python,
				"autograd NVTX": tc.autograd, "NVTX ranges": tc.nvtxOK, "CUDA API trace": statusYes, "GPU info": statusYes,
				"sync records": statusYes, "export schema": statusYes} {
				if got := checkStatus(d, name); got != want {
					t.Errorf("%s: %s, want %s", name, got, want)
				}
			}
			var measured *RangeSummary
			for i := range d.Ranges {
				if d.Ranges[i].Name == "measured" {
					measured = &d.Ranges[i]
				}
			}
			if measured == nil || measured.Syncs != tc.measuredSyncs || measured.Occurrences != tc.measuredOccur || measured.TotalNs <= 0 {
				t.Errorf("range measured: %+v, want %d syncs in %d occurrences", measured, tc.measuredSyncs, tc.measuredOccur)
			}
			if (d.Profile != "") != tc.profile || d.ReexportOnly != tc.reexport {
				t.Errorf("profile %q, re-export only %v", d.Profile, d.ReexportOnly)
			}
			if d.Profile != "" && (!strings.Contains(d.Profile, "--python-backtrace=cuda") || !strings.Contains(d.Profile, "--cudabacktrace=all:1000")) {
				t.Errorf("profile command %q lacks the backtrace options", d.Profile)
			}
			if !strings.HasSuffix(d.Export, strings.TrimSuffix(tc.fixture, ".sqlite.gz")+".nsys-rep") || !strings.Contains(d.Export, "--include-json=true") {
				t.Errorf("export command %q", d.Export)
			}
		})
	}
	d := Diagnose(load(t, "syncs_autograd.sqlite.gz", "").analysis)
	names := map[string]bool{}
	for _, r := range d.AtenRanges {
		names[r.Name] = true
	}
	for _, op := range []string{"aten::item", "aten::nonzero", "aten::is_nonzero"} {
		if !names[op] {
			t.Errorf("autograd ranges lack %s: %v", op, names)
		}
	}
}

// TestDiagnoseMissingPayload: an export of a backtraced run made without
// --include-json has the Python marks but not their frames; the doctor
// says to export again, not to profile again. The test makes such an
// export from the real one by clearing the payload columns of a copy.
func TestDiagnoseMissingPayload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "syncs_backtrace.sqlite")
	copyFile(t, fixturegz.Plain(t, fixtureDir, "syncs_backtrace"), path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE NVTX_EVENTS SET jsonText = NULL, jsonTextId = NULL, binaryData = NULL`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ctx := context.Background()
	x, err := trace.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	tr, err := x.Load(ctx, trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := Diagnose(New(tr))
	if got := checkStatus(d, "Python backtraces"); got != statusPartial {
		t.Errorf("Python backtraces: %s, want partial", got)
	}
	// Autograd NVTX is missing too, so profiling again is still advised;
	// the payload alone would be fixed by exporting again.
	if d.Profile == "" {
		t.Errorf("no profile command though autograd NVTX is missing")
	}
	var text bytes.Buffer
	if err := d.WriteText(&text, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "payload was not exported") && !strings.Contains(text.String(), "--include-json=true") {
		t.Errorf("text does not explain the missing payload:\n%s", text.String())
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDiagnoseCorpus runs the doctor over every real export of the shared
// corpus: each gets a diagnosis (a failure one when it cannot be
// analysed), in text and valid JSON, with command lines.
func TestDiagnoseCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	if len(files) == 0 {
		t.Skipf("no shared corpus at %s", corpusDir)
	}
	ctx := context.Background()
	failures := 0
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			var d *Diagnosis
			x, err := trace.Open(ctx, f)
			if err == nil {
				var tr *trace.Trace
				tr, err = x.Load(ctx, trace.LoadOptions{})
				if err == nil {
					d = Diagnose(New(tr))
				}
				x.Close()
			}
			if err != nil {
				failures++
				var ie *trace.InputError
				if !errors.As(err, &ie) {
					t.Fatalf("not an input error: %v", err)
				}
				d = DiagnoseFailure(f, err)
				if d.Analysable || d.Problem == "" || len(d.Checks) == 0 {
					t.Errorf("failure diagnosis: %+v", d)
				}
			}
			var text, js bytes.Buffer
			if err := d.WriteText(&text, TextOptions{Width: 100}); err != nil {
				t.Fatal(err)
			}
			if err := d.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			var back Diagnosis
			if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Path != f {
				t.Errorf("JSON round trip: %v, path %q", err, back.Path)
			}
			if d.Export == "" || !strings.Contains(text.String(), "FOR BETTER EVIDENCE") {
				t.Errorf("no advice:\n%s", text.String())
			}
		})
	}
	// The corpus has one export without a CUDA trace (icon-graupel).
	if failures == 0 {
		t.Errorf("every corpus export analysable; the one without a CUDA trace should not be")
	}
}

// TestRecommendNamesTheReport: the commands the doctor suggests name the
// report after the export, whether it is gzipped or not.
func TestRecommendNamesTheReport(t *testing.T) {
	for _, path := range []string{"runs/train.sqlite", "runs/train.sqlite.gz", "train.sqlite.gz"} {
		d := &Diagnosis{Path: path}
		d.recommend()
		if want := "-o train.sqlite train.nsys-rep"; !strings.HasSuffix(d.Export, want) {
			t.Errorf("%s: export command %q, want it to end %q", path, d.Export, want)
		}
	}
}
