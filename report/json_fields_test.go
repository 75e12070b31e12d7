package report

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
)

// jsonSites renders an analysis as JSON and returns its sites as generic
// objects, so that a test sees which keys are present.
func jsonSites(t *testing.T, a *Analysis) []map[string]any {
	t.Helper()
	var buf bytes.Buffer
	if err := a.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Sites []map[string]any `json:"sites"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Sites) == 0 {
		t.Fatal("no site")
	}
	return doc.Sites
}

// TestJSONSourceFile: a site whose program line was read names the file in
// "source_file"; without a source the key is absent (the contract only
// grows: older readers see the same document).
func TestJSONSourceFile(t *testing.T) {
	tr := load(t, "syncs_backtrace.sqlite.gz", "").analysis.Trace
	programs := filepath.Join(fixtureDir, "programs")
	for _, tc := range []struct {
		name string
		opt  classify.Options
		want string // "": no source_file key
	}{
		{"source root", classify.Options{SourceRoot: programs}, filepath.Join(programs, "syncs.py")},
		{"no source", classify.Options{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withFile := 0
			for _, s := range jsonSites(t, NewWith(tr, tc.opt)) {
				got, ok := s["source_file"]
				loc, _ := s["location"].(map[string]any)
				hasLine := loc["file"] != nil
				switch {
				case tc.want == "" && ok:
					t.Errorf("site %v: source_file %v without a source", s["id"], got)
				case tc.want != "" && hasLine && got != tc.want:
					t.Errorf("site %v at %v: source_file %v, want %s", s["id"], loc["file"], got, tc.want)
				case ok:
					withFile++
					ev, _ := s["evidence"].([]any)
					if len(ev) == 0 || !strings.HasPrefix(ev[len(ev)-1].(string), "source read from "+tc.want+":") {
						t.Errorf("site %v: evidence %v does not name the file read", s["id"], ev)
					}
				}
			}
			if tc.want != "" && withFile == 0 {
				t.Error("no site names its source file")
			}
		})
	}
}

// TestLikelyVerdicts: a lean trace's false sites rest on the call pattern
// alone: JSON says "basis": "pattern", "decided": false, and text,
// Markdown and HTML write "likely false"; a backtrace trace's are decided
// and read "false".
func TestLikelyVerdicts(t *testing.T) {
	for _, tc := range []struct {
		fixture     string
		wantLikely  bool
		wantBasis   map[string]bool // bases its false sites may have
		wantDecided bool
	}{
		{"syncs_lean.sqlite.gz", true, map[string]bool{"pattern": true}, false},
		{"multiproc_lean.sqlite.gz", true, map[string]bool{"pattern": true}, false},
		{"syncs_backtrace.sqlite.gz", false, map[string]bool{"backtrace": true, "source": true}, true},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			a := load(t, tc.fixture, "").analysis
			falses := 0
			for _, s := range jsonSites(t, a) {
				basis, hasBasis := s["basis"].(string)
				decided, hasDecided := s["decided"].(bool)
				if !hasBasis || !hasDecided {
					t.Fatalf("site %v lacks basis or decided: %v", s["id"], s)
				}
				if s["dependency"] == "unknown" && decided {
					t.Errorf("site %v: unknown yet decided", s["id"])
				}
				if s["dependency"] != "false" {
					continue
				}
				falses++
				if !tc.wantBasis[basis] || decided != tc.wantDecided {
					t.Errorf("false site %v: basis %q decided %v, want one of %v, decided %v", s["id"], basis, decided, tc.wantBasis, tc.wantDecided)
				}
			}
			if falses == 0 {
				t.Fatal("no false site")
			}
			var text, md, html bytes.Buffer
			must(t, a.WriteText(&text, TextOptions{}))
			must(t, a.WriteMarkdown(&md, MarkdownOptions{}))
			must(t, a.WriteHTML(context.Background(), &html, HTMLOptions{}))
			for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": html.String()} {
				if got := strings.Contains(out, "likely false"); got != tc.wantLikely {
					t.Errorf("%s report: says \"likely false\" %v, want %v", name, got, tc.wantLikely)
				}
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
