package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/nsyssync/nsyssync/contract"
)

// TestAnalyzeFindsSources: without --source-root, analyze reads the
// program's lines where it finds the file (its recorded path, the current
// directory, or here beside the export: ../../fixtures/programs/syncs.py),
// so that every site with a Python line gets a verdict and names the file.
func TestAnalyzeFindsSources(t *testing.T) {
	code, out, errOut := runCLI(t, "analyze", "--format", "json", "--no-estimate", fixture)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc contract.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range doc.Sites {
		if s.Location.File == "" {
			continue
		}
		n++
		// `return y.cpu()` may stay unknown: its line does not use the data.
		undecided := s.Dependency == "unknown" && s.Category != "device-to-host-copy"
		if filepath.Base(s.SourceFile) != "syncs.py" || undecided {
			t.Errorf("site %s at %s:%d: %s, source_file %q", s.ID, s.Location.File, s.Location.Line, s.Dependency, s.SourceFile)
		}
	}
	if n == 0 {
		t.Fatal("no site has a Python line")
	}
}
