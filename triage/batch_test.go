package triage

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/trace"
)

// nightDir fills a temporary directory with real exports and bad files,
// and returns it with the good exports' paths and the bad ones' paths.
func nightDir(t *testing.T) (dir string, good, bad []string) {
	t.Helper()
	dir = t.TempDir()
	for _, name := range goodFixtures {
		dst := filepath.Join(dir, name)
		copyFile(t, storedFixture(name), dst)
		good = append(good, dst)
	}
	if haveCorpus() {
		sub := filepath.Join(dir, "corpus")
		os.Mkdir(sub, 0o755)
		for _, name := range corpusGood {
			dst := filepath.Join(sub, name)
			copyFile(t, filepath.Join(corpusDir, name), dst)
			good = append(good, dst)
		}
		dst := filepath.Join(sub, corpusNoCUDA)
		copyFile(t, filepath.Join(corpusDir, corpusNoCUDA), dst)
		bad = append(bad, dst)
	} else {
		t.Log("no shared corpus beside the checkout: fixtures only")
	}
	// A real export cut short, as a copy interrupted mid-transfer leaves it.
	whole, err := os.ReadFile(fixturegz.Plain(t, fixturesDir, "syncs_lean"))
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "interrupted_copy.sqlite")
	os.WriteFile(truncated, whole[:len(whole)/3], 0o644)
	notSQLite := filepath.Join(dir, "notes_renamed.sqlite")
	os.WriteFile(notSQLite, []byte("this is a text file someone named .sqlite\n"), 0o644)
	bad = append(bad, truncated, notSQLite)
	slices.Sort(good)
	slices.Sort(bad)
	return dir, good, bad
}

// A night with bad files among real exports: every good export is
// analysed exactly as `analyze` analyses it alone, every bad one is
// reported with its name, and results come in input order.
func TestBatchIsolatesFailures(t *testing.T) {
	dir, good, bad := nightDir(t)
	inputs := Expand([]string{dir})
	results := collect(t, inputs, Options{Analysis: noEstimate, Jobs: 3})
	if len(results) != len(good)+len(bad) {
		t.Fatalf("%d results for %d good and %d bad inputs", len(results), len(good), len(bad))
	}
	var gotGood, gotBad []string
	for i, r := range results {
		if r.Path != inputs[i].Path {
			t.Errorf("result %d is %s, want input order (%s)", i, r.Path, inputs[i].Path)
		}
		if r.Err != nil {
			gotBad = append(gotBad, r.Path)
			if !strings.Contains(r.Err.Error(), r.Path) {
				t.Errorf("error does not name the file: %v", r.Err)
			}
			continue
		}
		gotGood = append(gotGood, r.Path)
		want := directDocument(t, r.Path)
		if r.Doc.Totals != want.Totals || len(r.Doc.Sites) != len(want.Sites) || r.Doc.Trace.Path != r.Path {
			t.Errorf("%s: batch totals %+v with %d sites, alone %+v with %d", r.Path, r.Doc.Totals, len(r.Doc.Sites), want.Totals, len(want.Sites))
		}
		for j := range want.Sites {
			if r.Doc.Sites[j].Fingerprint != want.Sites[j].Fingerprint || r.Doc.Sites[j].BlockedNs != want.Sites[j].BlockedNs {
				t.Errorf("%s: site %d differs from the analysis alone", r.Path, j)
			}
		}
		if r.Doc.Syncs != nil {
			t.Errorf("%s: syncs kept without KeepSyncs", r.Path)
		}
	}
	slices.Sort(gotGood)
	slices.Sort(gotBad)
	if !slices.Equal(gotGood, good) || !slices.Equal(gotBad, bad) {
		t.Errorf("analysed %v, failed %v; want %v and %v", gotGood, gotBad, good, bad)
	}
	for _, r := range results {
		if errors.Is(r.Err, trace.ErrTruncated) && !strings.HasSuffix(r.Path, "interrupted_copy.sqlite") {
			t.Errorf("%s reported as truncated", r.Path)
		}
	}

	// The summary counts the same.
	s := NewSummary()
	for _, r := range results {
		s.Add(r)
	}
	rep := s.Report(5)
	var syncs int
	for _, tt := range rep.Traces {
		syncs += tt.Syncs
	}
	if rep.Analysed != len(good) || rep.Failed != len(bad) || rep.Syncs != syncs || len(rep.TopSites) != 5 {
		t.Errorf("summary: %d analysed, %d failed, %d syncs (traces sum %d), %d top sites", rep.Analysed, rep.Failed, rep.Syncs, syncs, len(rep.TopSites))
	}
	for i := 1; i < len(rep.TopSites); i++ {
		if rep.TopSites[i].BlockedNs > rep.TopSites[i-1].BlockedNs {
			t.Errorf("top sites not ordered by cost: %v", rep.TopSites)
		}
	}
	for _, w := range rep.Widespread {
		if w.Traces < 2 {
			t.Errorf("widespread site %s seen in %d trace", w.Fingerprint, w.Traces)
		}
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		if !strings.Contains(text.String(), b) {
			t.Errorf("text summary does not name %s", b)
		}
	}
}

// JSON Lines keep every document whole, failures included, and read back
// as they were.
func TestJSONLinesRoundTrip(t *testing.T) {
	dir, good, bad := nightDir(t)
	results := collect(t, Expand([]string{dir}), Options{Analysis: noEstimate, Jobs: 2, KeepSyncs: true})
	var buf bytes.Buffer
	for _, r := range results {
		if err := WriteLine(&buf, r); err != nil {
			t.Fatal(err)
		}
	}
	if lines := strings.Count(buf.String(), "\n"); lines != len(good)+len(bad) {
		t.Fatalf("%d lines for %d inputs", lines, len(good)+len(bad))
	}
	i := 0
	err := ReadLines(&buf, "batch.jsonl", func(l Line) error {
		r, want := l.Result(), results[i]
		i++
		if (r.Err != nil) != (want.Err != nil) || r.Path != want.Path {
			t.Errorf("line %d: %s (err %v), want %s (err %v)", i, r.Path, r.Err, want.Path, want.Err)
			return nil
		}
		if r.Err == nil && (len(r.Doc.Syncs) != r.Doc.Totals.Syncs || r.Doc.Totals != want.Doc.Totals) {
			t.Errorf("line %d: %d syncs for totals %+v", i, len(r.Doc.Syncs), r.Doc.Totals)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A cancelled batch stops and says so, without emitting the rest.
func TestBatchCancelled(t *testing.T) {
	dir, _, _ := nightDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	emitted := 0
	err := Batch(ctx, Expand([]string{dir}), Options{Analysis: noEstimate, Jobs: 2}, func(Result) error {
		emitted++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || emitted != 1 {
		t.Errorf("err %v after %d results; want context.Canceled after 1", err, emitted)
	}
}

// An emit error ends the batch at once with that error.
func TestBatchEmitError(t *testing.T) {
	dir, _, _ := nightDir(t)
	stop := errors.New("disk full")
	emitted := 0
	err := Batch(context.Background(), Expand([]string{dir}), Options{Analysis: noEstimate, Jobs: 1}, func(Result) error {
		emitted++
		return stop
	})
	if !errors.Is(err, stop) || emitted != 1 {
		t.Errorf("err %v after %d results; want %v after 1", err, emitted, stop)
	}
}

// A .nsys-rep is exported into a temporary directory by the nsys found on
// the PATH; nothing is written beside the report. The nsys here is a
// stand-in script that copies a real export to the --output path, as the
// real one writes its export there; the real nsys is exercised on the GPU
// machine (docs/triage.md).
func TestNsysRepConversion(t *testing.T) {
	repDir := t.TempDir()
	rep := filepath.Join(repDir, "night.nsys-rep")
	os.WriteFile(rep, []byte("report bytes"), 0o644)
	fixture, _ := filepath.Abs(fixturegz.Plain(t, fixturesDir, "syncs_lean")) // nsys writes a plain export
	bin := t.TempDir()
	script := "#!/bin/sh\nout=''\nwhile [ $# -gt 1 ]; do [ \"$1\" = -o ] && out=$2; shift; done\ncp '" + fixture + "' \"$out\"\n"
	if err := os.WriteFile(filepath.Join(bin, "nsys"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	conv := &Converter{Nsys: filepath.Join(bin, "nsys"), TempDir: tmp}
	results := collect(t, []Input{{Path: rep}}, Options{Analysis: noEstimate, Converter: conv})
	if r := results[0]; r.Err != nil || r.Doc.Trace.Path != rep || r.Doc.Totals != directDocument(t, fixture).Totals {
		t.Fatalf("converted report: %+v", r)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary export left behind: %v", left)
	}
	if beside, _ := os.ReadDir(repDir); len(beside) != 1 {
		t.Errorf("files written beside the report: %v", beside)
	}

	results = collect(t, []Input{{Path: rep}}, Options{Analysis: noEstimate, Converter: &Converter{}})
	if err := results[0].Err; !errors.Is(err, ErrNoNsys) || !strings.Contains(err.Error(), rep) || strings.Count(err.Error(), "\n") > 0 {
		t.Errorf("without nsys: %v", err)
	}
	failing := filepath.Join(bin, "nsys-fails")
	os.WriteFile(failing, []byte("#!/bin/sh\necho 'ERROR: corrupt report' >&2\nexit 1\n"), 0o755)
	results = collect(t, []Input{{Path: rep}}, Options{Analysis: noEstimate, Converter: &Converter{Nsys: failing, TempDir: tmp}})
	if err := results[0].Err; err == nil || !strings.Contains(err.Error(), "corrupt report") {
		t.Errorf("failing nsys: %v", err)
	}
}
