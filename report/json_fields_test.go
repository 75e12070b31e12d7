package report

import (
	"bytes"
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
	tr := load(t, "syncs_backtrace.sqlite", "").analysis.Trace
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
