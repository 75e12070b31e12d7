package triage

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// hostile is text no table may pass through raw: terminal escape
// sequences (OSC title, BEL, CSI clear), C1's CSI, a right-to-left
// override, a tab and line breaks that would break a row.
const hostile = "step\x1b]0;PWNED\x07\x1b[2J\u009b31m\u202etxt.exe\tcol\n![x](http://evil.example)\r\nrow"

// hostileResults analyses a real fixture, puts the hostile text in every
// string of its document a results file could carry, and adds a failure
// whose path and error carry it too.
func hostileResults(t *testing.T) []Result {
	t.Helper()
	doc := directDocument(t, filepath.Join(fixturesDir, "multiproc_lean.sqlite.gz"))
	doc.Trace.Path = "fixtures/" + hostile
	for i := range doc.Sites {
		s := &doc.Sites[i]
		s.Fingerprint = s.Fingerprint + hostile
		s.APIs = append(s.APIs, hostile)
		s.Category, s.Dependency = hostile, hostile
		s.Location.File, s.Location.Function = "/src/"+hostile+".py", hostile
	}
	return []Result{
		{Path: doc.Trace.Path, Doc: &doc},
		{Path: hostile + ".sqlite", Err: errors.New("open " + hostile + ".sqlite: not an export")},
	}
}

// TestHostileTables renders the batch summary, the diff and the history
// tables of hostile text, compares them with testdata/*.golden (go test
// ./triage -run TestHostileTables -update rewrites them), and checks that
// no raw control character or override reaches the output and that every
// row stays one line.
func TestHostileTables(t *testing.T) {
	results := hostileResults(t)
	summary := NewSummary()
	for _, r := range results {
		summary.Add(r)
	}
	old, cur := NewSnapshot("old "+hostile), NewSnapshot("new "+hostile)
	cur.AddResult(results[0])
	cur.AddResult(results[1])
	diff := Compare(old, cur, 5)
	run := func(id int64, label string) Run {
		return Run{ID: id, Label: label, Started: "2025-01-0" + string(rune('0'+id)) + " " + hostile, Shard: hostile, Traces: 1}
	}
	site := &SiteHistory{Fingerprint: "ab12" + hostile, APIs: []string{"cudaMemcpyAsync", hostile}, Location: hostile,
		Points: []HistoryPoint{{Run: run(1, hostile)}, {Run: run(2, "v2"), Traces: 1, Count: 3, BlockedNs: 1500, Dependency: hostile, Category: hostile}}}

	cases := []struct {
		golden string
		render func(*bytes.Buffer) error
		// rows: the lines the output must have, whatever the text.
		rows int
	}{
		{"batch.txt", func(b *bytes.Buffer) error { return summary.Report(0).WriteText(b) }, 0},
		{"diff.txt", func(b *bytes.Buffer) error {
			for _, r := range diff.Regressions(1) {
				b.WriteString(r + "\n")
			}
			return diff.WriteText(b, true)
		}, 0},
		{"history.txt", func(b *bytes.Buffer) error {
			if err := site.WriteText(b); err != nil {
				return err
			}
			if err := WriteTopText(b, []*SiteHistory{site}); err != nil {
				return err
			}
			return WriteRunsText(b, []Run{run(1, hostile), run(2, "v2")})
		}, 13},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			var b bytes.Buffer
			if err := c.render(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, raw := range []string{"\x1b", "\x07", "\r", "\t", "\u009b", "\u202e", "\n![x]", "\nrow"} {
				if strings.Contains(out, raw) {
					t.Errorf("raw %q from the input in the output", raw)
				}
			}
			if !strings.Contains(out, `step\x1b]0;PWNED\x07\x1b[2J\u009b31m\u202etxt.exe\tcol\n`) {
				t.Errorf("the hostile text is not shown in its visible form:\n%s", out)
			}
			if n := strings.Count(out, "\n"); c.rows > 0 && n != c.rows {
				t.Errorf("%d lines, want %d:\n%s", n, c.rows, out)
			}
			path := filepath.Join("testdata", "hostile."+c.golden+".golden")
			if *update {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run: go test ./triage -run TestHostileTables -update)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s differs from the output:\n%s", path, out)
			}
		})
	}
}
