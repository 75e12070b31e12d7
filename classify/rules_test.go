package classify

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/testexport"
	"github.com/nsyssync/nsyssync/trace"
)

var vocabulary = map[string]bool{CatLogging: true, CatControlFlow: true, CatDynamicShape: true, CatDeviceToHost: true,
	CatHostToDevice: true, CatExplicitSync: true, CatStreamSync: true, CatEventSync: true, CatMemory: true, CatUnknown: true}

// TestRulesTable checks the table's own promises: the vocabulary of docs/design.md,
// a fix for every decided verdict, unknown means confidence 0, and no rule
// that sees only the call pattern says "false" with high confidence.
func TestRulesTable(t *testing.T) {
	names := map[string]bool{}
	for _, r := range Rules {
		if names[r.Name] {
			t.Errorf("rule %q appears twice", r.Name)
		}
		names[r.Name] = true
		if !vocabulary[r.Category] {
			t.Errorf("rule %q: category %q is not in the vocabulary of docs/design.md", r.Name, r.Category)
		}
		switch r.Dependency {
		case DepTrue, DepFalse:
			if r.Fix == "" || r.Subject == "" || r.Confidence <= 0 || r.Confidence > 1 {
				t.Errorf("rule %q: a decided verdict needs a fix, a subject and a confidence in (0, 1]", r.Name)
			}
		case DepUnknown:
			// The category may still say what the sync is (a copy to the
			// host whose use is not known): the dependency is what stays open.
			if r.Confidence != 0 {
				t.Errorf("rule %q: an unknown dependency must have confidence 0", r.Name)
			}
		default:
			t.Errorf("rule %q: dependency %q", r.Name, r.Dependency)
		}
		patternOnly := len(r.Python) == 0 && len(r.ATen) == 0 && len(r.Native) == 0 && r.When == nil && r.Use == UseNone
		if patternOnly && r.Dependency == DepFalse && r.Confidence >= 0.8 {
			t.Errorf("rule %q says false with confidence %.2f from the call pattern alone", r.Name, r.Confidence)
		}
		if r.When != nil && r.WhenDoc == "" {
			t.Errorf("rule %q: a When condition needs WhenDoc", r.Name)
		}
	}
}

// TestREADMEDocumentsRules: the README's "How verdicts are reached"
// section names every rule, in the table's order.
func TestREADMEDocumentsRules(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i := strings.Index(readme, "## How verdicts are reached")
	if i < 0 {
		t.Fatal("README.md has no section \"How verdicts are reached\"")
	}
	section := readme[i:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	at := 0
	for n, r := range Rules {
		k := strings.Index(section[at:], "| "+strconv.Itoa(n+1)+" | "+r.Name+" |")
		if k < 0 {
			t.Errorf("README rule table lacks row %d %q (in the table's order)", n+1, r.Name)
			continue
		}
		at += k
	}
}

// TestSourceRootDecidesScalarReads: on the real backtrace fixture, a bare
// .item() is unknown without the source and is decided by its line with
// it, the line quoted as evidence.
func TestSourceRootDecidesScalarReads(t *testing.T) {
	tr := load(t, "../fixtures/patterns_backtrace.sqlite.gz")
	want := map[int64]struct {
		dep Dependency
		cat string
	}{21: {DepFalse, CatLogging}, 41: {DepTrue, CatControlFlow}}
	for _, opt := range []Options{{}, {SourceRoot: ".."}} {
		found := 0
		for _, s := range opt.Sites(tr) {
			w, ok := want[s.Location.Line]
			if !ok || filepath.Base(s.Location.File) != "patterns.py" {
				continue
			}
			found++
			if opt.SourceRoot == "" {
				if s.Dependency != DepUnknown {
					t.Errorf("no source root, line %d: %s/%s, want unknown", s.Location.Line, s.Dependency, s.Category)
				}
				continue
			}
			if s.Dependency != w.dep || s.Category != w.cat || !strings.Contains(strings.Join(s.Evidence, "\n"), "Python line `") {
				t.Errorf("source root, line %d: %s/%s %q, want %s/%s with the line as evidence", s.Location.Line, s.Dependency, s.Category, s.Evidence, w.dep, w.cat)
			}
		}
		if found != 2 {
			t.Errorf("found %d of the 2 .item() sites", found)
		}
	}
}

// TestCorpusVerdicts classifies every real export of the shared corpus
// and checks each site's verdict is well formed.
func TestCorpusVerdicts(t *testing.T) {
	files, _ := filepath.Glob("../../shared/corpus/*.sqlite")
	if len(files) == 0 {
		t.Skip("no shared corpus at ../../shared/corpus (it sits beside the repository in CI)")
	}
	decided := 0
	for _, p := range files {
		x, err := trace.Open(context.Background(), p)
		if err != nil {
			continue // bad input is the reader's test
		}
		tr, err := x.Load(context.Background(), trace.LoadOptions{})
		x.Close()
		if err != nil {
			continue
		}
		sites := Options{SourceRoot: t.TempDir()}.Sites(tr)
		n := 0
		for _, s := range sites {
			n += len(s.Syncs)
			if !vocabulary[s.Category] || s.Confidence < 0 || s.Confidence > 1 || len(s.Evidence) == 0 {
				t.Errorf("%s %s: %s/%s %.2f, evidence %q", filepath.Base(p), s.ID, s.Dependency, s.Category, s.Confidence, s.Evidence)
			}
			if s.Dependency != DepUnknown {
				decided++
				if s.Fix == "" {
					t.Errorf("%s %s: %s/%s without a fix", filepath.Base(p), s.ID, s.Dependency, s.Category)
				}
			}
		}
		if n != len(tr.Syncs) {
			t.Errorf("%s: sites hold %d syncs of %d", filepath.Base(p), n, len(tr.Syncs))
		}
	}
	if decided == 0 {
		t.Error("no corpus site got a verdict")
	}
}

func load(t *testing.T, path string) *trace.Trace {
	t.Helper()
	_, tr := testexport.Load(t, path, "")
	return tr
}
