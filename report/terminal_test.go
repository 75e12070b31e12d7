package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestTextWidth: at every width the table lines fit the terminal, and the
// location keeps what matters (file:line) as long as it can.
func TestTextWidth(t *testing.T) {
	l := load(t, "syncs_backtrace.sqlite.gz", "measured")
	for _, width := range []int{60, 80, 100, 140} {
		var b bytes.Buffer
		if err := l.analysis.WriteText(&b, TextOptions{Width: width}); err != nil {
			t.Fatal(err)
		}
		inSites := false
		for _, line := range strings.Split(b.String(), "\n") {
			if w := ansi.StringWidth(line); w > width && !strings.HasPrefix(line, "syncs ") {
				// The table's fixed columns alone may exceed a very narrow
				// terminal; everything else must fit.
				if !(width < 70 && (strings.HasPrefix(line, "ID ") || strings.HasPrefix(line, "SYNC ") || strings.HasPrefix(line, "s") || strings.HasPrefix(line, "e"))) {
					t.Errorf("width %d: line of %d cells: %q", width, w, line)
				}
			}
			if strings.HasPrefix(line, "ID ") {
				inSites = true
				continue
			}
			if inSites && strings.HasPrefix(line, "s") && !strings.Contains(line, "syncs.py:") {
				t.Errorf("width %d: location lost its file and line: %q", width, line)
			}
			if line == "" {
				inSites = false
			}
		}
	}
}

// TestTextColor: colour only when asked, and the same text either way.
func TestTextColor(t *testing.T) {
	l := load(t, "syncs_autograd.sqlite.gz", "")
	var plain, color bytes.Buffer
	if err := l.analysis.WriteText(&plain, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := l.analysis.WriteText(&color, TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Errorf("escape codes without colour")
	}
	if !strings.Contains(color.String(), "\x1b[") {
		t.Errorf("no escape codes with colour")
	}
	if got := ansi.Strip(color.String()); got != plain.String() {
		t.Errorf("coloured text differs from the plain text once the codes are stripped:\n%s", firstDiff([]byte(plain.String()), []byte(got)))
	}
}

func TestFit(t *testing.T) {
	tests := []struct {
		in       string
		width    int
		keepTail bool
		want     string
	}{
		{"short", 10, false, "short"},
		{"abcdefghij", 5, false, "abcd…"},
		{"abcdefghij", 5, true, "…ghij"},
		{".../a/b.py:3 f" + altSep + "b.py:3 f", 10, true, "b.py:3 f"},
		{".../a/b.py:3 function" + altSep + "b.py:3 function", 10, true, "b.py:3 fu…"},
		{"µµµµµ", 3, false, "µµ…"},
		{"x", 0, false, "x"},
	}
	for _, tc := range tests {
		if got := fit(tc.in, tc.width, tc.keepTail); got != tc.want {
			t.Errorf("fit(%q, %d, %v) = %q, want %q", tc.in, tc.width, tc.keepTail, got, tc.want)
		}
	}
}

func TestWordWrap(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  string
	}{
		{"add --cudabacktrace=all:1000 -s cpu", 26, "add\n--cudabacktrace=all:1000\n-s cpu"},
		{"add --cudabacktrace=all:1000", 20, "add\n--cudabacktrace=all:\n1000"},
		{"one two three", 7, "one two\nthree"},
		{"abcdefghij", 4, "abcd\nefgh\nij"},
		{"keep", 0, "keep"},
	}
	for _, tc := range tests {
		if got := wordWrap(tc.in, tc.width); got != tc.want {
			t.Errorf("wordWrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}
