package classify

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsyssync/nsyssync/trace"
)

// recordedCheckout is where the backtrace fixtures' frames say the
// programs were: the GPU machine's checkout.
const recordedCheckout = "/work/main/fixtures/programs/"

// relocate rewrites the program paths the trace's Python frames recorded
// from recordedCheckout to dir, as if the program had been profiled
// there: the search must not find them at the recorded path of this
// machine (where a checkout may well be).
func relocate(t *testing.T, tr *trace.Trace, dir string) {
	t.Helper()
	n := 0
	for i := range tr.Syncs {
		py := tr.Syncs[i].Python()
		for j := range py {
			if rest, ok := strings.CutPrefix(py[j].File, recordedCheckout); ok {
				py[j].File = filepath.Join(dir, rest)
				n++
			}
		}
	}
	if n == 0 {
		t.Fatalf("no frame recorded %s", recordedCheckout)
	}
}

// copyFile copies src to dst, making dst's directory.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
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

// writeFile writes a file, making its directory.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameDecisions compares what decides and what is shown of two runs'
// verdicts: all but the evidence line naming the file read.
func sameDecisions(t *testing.T, got, want []Verdict) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d verdicts, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Dependency != w.Dependency || g.Category != w.Category || g.Confidence != w.Confidence || g.Rule != w.Rule || g.Fix != w.Fix {
			t.Errorf("sync e%d: %s/%s %.2f %q, want %s/%s %.2f %q", i+1, g.Dependency, g.Category, g.Confidence, g.Rule,
				w.Dependency, w.Category, w.Confidence, w.Rule)
		}
	}
}

// TestFindSources classifies the backtrace fixtures without a source root
// while the program sits in each place the search looks (the current
// directory, the export's directory, the recorded path), beside decoys it
// must skip: the verdicts equal those with --source-root, and each names
// the file it read.
func TestFindSources(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		// setUp lays out the files under tmp (the current directory is
		// tmp/cwd) and returns the export's path, the checkout the frames
		// are said to come from, and the file that must be read ("": none,
		// the verdicts are those without source).
		setUp func(t *testing.T, tmp, fixture, program string) (export, checkout, read string)
		opt   Options
	}{
		{"current directory is the repository", func(t *testing.T, tmp, fixture, program string) (string, string, string) {
			must(t, os.Remove(filepath.Join(tmp, "cwd")))
			must(t, os.Symlink(repo, filepath.Join(tmp, "cwd")))
			return filepath.Join(repo, "fixtures", fixture), "/elsewhere/proj/fixtures/programs", "./fixtures/programs/" + program
		}, Options{FindSources: true}},
		{"program beside the export", func(t *testing.T, tmp, fixture, program string) (string, string, string) {
			copyFile(t, filepath.Join(repo, "fixtures", fixture), filepath.Join(tmp, "run", fixture))
			copyFile(t, filepath.Join(repo, "fixtures", "programs", program), filepath.Join(tmp, "run", program))
			return filepath.Join(tmp, "run", fixture), "/elsewhere/proj/fixtures/programs", filepath.Join(tmp, "run", program)
		}, Options{FindSources: true}},
		{"program at the recorded path", func(t *testing.T, tmp, fixture, program string) (string, string, string) {
			copyFile(t, filepath.Join(repo, "fixtures", "programs", program), filepath.Join(tmp, "checkout", program))
			return filepath.Join(repo, "fixtures", fixture), filepath.Join(tmp, "checkout"), filepath.Join(tmp, "checkout", program)
		}, Options{FindSources: true}},
		{"decoy too short in the current directory", func(t *testing.T, tmp, fixture, program string) (string, string, string) {
			writeFile(t, filepath.Join(tmp, "cwd", program), "import torch\nprint('not the program')\n")
			copyFile(t, filepath.Join(repo, "fixtures", "programs", program), filepath.Join(tmp, "run", program))
			return filepath.Join(tmp, "run", fixture), "/elsewhere/proj/fixtures/programs", filepath.Join(tmp, "run", program)
		}, Options{FindSources: true}},
		{"FIFO named like the program", func(t *testing.T, tmp, fixture, program string) (string, string, string) {
			must(t, syscall.Mkfifo(filepath.Join(tmp, "cwd", program), 0o644))
			copyFile(t, filepath.Join(repo, "fixtures", "programs", program), filepath.Join(tmp, "run", program))
			return filepath.Join(tmp, "run", fixture), "/elsewhere/proj/fixtures/programs", filepath.Join(tmp, "run", program)
		}, Options{FindSources: true}},
		{"link to a file that is not Python", func(t *testing.T, tmp, fixture, program string) (string, string, string) {
			writeFile(t, filepath.Join(tmp, "secret.txt"), strings.Repeat("if secret:\n", 600))
			must(t, os.Symlink(filepath.Join(tmp, "secret.txt"), filepath.Join(tmp, "cwd", program)))
			return filepath.Join(tmp, "run", fixture), "/elsewhere/proj/fixtures/programs", ""
		}, Options{FindSources: true}},
		{"directory named like the program", func(t *testing.T, tmp, fixture, program string) (string, string, string) {
			must(t, os.Mkdir(filepath.Join(tmp, "cwd", program), 0o755))
			return filepath.Join(tmp, "run", fixture), "/elsewhere/proj/fixtures/programs", ""
		}, Options{FindSources: true}},
		{"source root before the rest", func(t *testing.T, tmp, fixture, program string) (string, string, string) {
			copyFile(t, filepath.Join(repo, "fixtures", "programs", program), filepath.Join(tmp, "root", program))
			copyFile(t, filepath.Join(repo, "fixtures", "programs", program), filepath.Join(tmp, "cwd", program))
			return filepath.Join(tmp, "run", fixture), "/elsewhere/proj/fixtures/programs", "../root/" + program
		}, Options{SourceRoot: "../root", FindSources: true}},
		{"without FindSources nothing is searched", func(t *testing.T, tmp, fixture, program string) (string, string, string) {
			copyFile(t, filepath.Join(repo, "fixtures", "programs", program), filepath.Join(tmp, "cwd", program))
			return filepath.Join(repo, "fixtures", fixture), filepath.Join(tmp, "cwd"), ""
		}, Options{}},
	}
	for _, fx := range []struct{ fixture, program string }{
		{"syncs_backtrace.sqlite.gz", "syncs.py"},
		{"patterns_backtrace.sqlite.gz", "patterns.py"},
	} {
		withRoot := load(t, filepath.Join(repo, "fixtures", fx.fixture))
		relocate(t, withRoot, "/elsewhere/proj/fixtures/programs")
		want := Options{SourceRoot: filepath.Join(repo, "fixtures", "programs")}.Verdicts(withRoot)
		without := Options{}.Verdicts(withRoot)
		for _, tc := range cases {
			t.Run(fx.program+"/"+tc.name, func(t *testing.T) {
				tmp := t.TempDir()
				must(t, os.MkdirAll(filepath.Join(tmp, "cwd"), 0o755))
				must(t, os.MkdirAll(filepath.Join(tmp, "run"), 0o755))
				export, checkout, read := tc.setUp(t, tmp, fx.fixture, fx.program)
				t.Chdir(filepath.Join(tmp, "cwd"))
				tr := load(t, filepath.Join(repo, "fixtures", fx.fixture))
				relocate(t, tr, checkout)
				tr.Path = export

				done := make(chan []Verdict, 1)
				go func() { done <- tc.opt.Verdicts(tr) }()
				var got []Verdict
				select {
				case got = <-done:
				case <-time.After(30 * time.Second):
					t.Fatal("the search hangs")
				}
				if read == "" {
					sameDecisions(t, got, without)
				} else {
					sameDecisions(t, got, want)
				}
				readsFrom(t, got, read)
			})
		}
	}
}

// readsFrom checks that the verdicts that read the program's line read it
// from path (none when path is ""), and say so in their evidence.
func readsFrom(t *testing.T, vs []Verdict, path string) {
	t.Helper()
	n := 0
	for i, v := range vs {
		if v.SourceFile == "" {
			continue
		}
		n++
		if v.SourceFile != path {
			t.Fatalf("sync e%d read %s, want %q", i+1, v.SourceFile, path)
		}
		if !strings.HasPrefix(v.Evidence[len(v.Evidence)-1], "source read from "+path+":") {
			t.Fatalf("sync e%d: evidence %q does not end with the file read", i+1, v.Evidence)
		}
	}
	if path != "" && n == 0 {
		t.Fatalf("no verdict read %s", path)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSiteSourceFile: a site whose syncs read the program's line names
// the file in its SourceFile and, as the last line, in its evidence.
func TestSiteSourceFile(t *testing.T) {
	tr := load(t, filepath.Join(fixturesDir, "syncs_backtrace.sqlite.gz"))
	relocate(t, tr, "/elsewhere/proj/fixtures/programs")
	tr.Path = "fixtures/syncs_backtrace.sqlite.gz"
	t.Chdir("..")
	const read = "./fixtures/programs/syncs.py"
	n := 0
	for _, s := range (Options{FindSources: true}).Sites(tr) {
		if s.Location.File == "" {
			continue
		}
		n++
		if s.SourceFile != read {
			t.Errorf("site %s at %s:%d read %q, want %s", s.ID, s.Location.File, s.Location.Line, s.SourceFile, read)
			continue
		}
		want := fmt.Sprintf("source read from %s:%d", read, s.Location.Line)
		if n := len(s.Evidence); n == 0 || s.Evidence[n-1] != want || n > maxSiteEvidence {
			t.Errorf("site %s: evidence %q, want it to end with %q", s.ID, s.Evidence, want)
		}
		// The line `return y.cpu()` does not say what the caller does with
		// the data, so a copy to the host may stay unknown.
		if s.Dependency == DepUnknown && s.Category != CatDeviceToHost {
			t.Errorf("site %s at line %d: unknown with the program's source", s.ID, s.Location.Line)
		}
	}
	if n == 0 {
		t.Fatal("no site has a program location")
	}
}
