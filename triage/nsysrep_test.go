package triage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
)

// fakeNsys writes an nsys stand-in into a directory put first on the
// PATH. It records its arguments, one a line, in argvLog and its working
// directory in cwdLog, then copies fixture to the path after -o, as the
// real one writes its export there.
func fakeNsys(t *testing.T, fixture string) (argvLog, cwdLog string) {
	t.Helper()
	bin, logs := t.TempDir(), t.TempDir()
	argvLog, cwdLog = filepath.Join(logs, "argv"), filepath.Join(logs, "cwd")
	script := `#!/bin/sh
pwd > '` + cwdLog + `'
: > '` + argvLog + `'
out=''
prev=''
for a in "$@"; do
	printf '%s\n' "$a" >> '` + argvLog + `'
	[ "$prev" = -o ] && out=$a
	prev=$a
done
[ -n "$out" ] && cp '` + fixture + `' "$out"
`
	if err := os.WriteFile(filepath.Join(bin, "nsys"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return argvLog, cwdLog
}

// Reports given by a relative path, and one whose name reads as an nsys
// option, reach nsys (found on the PATH) as absolute paths, after every
// option, while nsys runs in the temporary directory of the export; the
// analysis is the fixture's, and nothing is left in the temporary
// directory or written beside the reports (issue 14, item 9).
func TestNsysRepArguments(t *testing.T) {
	fixture, err := filepath.Abs(fixturegz.Plain(t, fixturesDir, "syncs_lean")) // nsys writes a plain export
	if err != nil {
		t.Fatal(err)
	}
	want := directDocument(t, fixture).Totals
	argvLog, cwdLog := fakeNsys(t, fixture)
	work := t.TempDir()
	t.Chdir(work)
	for _, dir := range []string{"w2", "tmp"} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ input, export string }{
		{"w2/r.nsys-rep", "r.sqlite"},
		{"--force-overwrite.nsys-rep", "--force-overwrite.sqlite"},
		{"w2/-o.nsys-rep", "-o.sqlite"},
	} {
		t.Run(tc.input, func(t *testing.T) {
			if err := os.WriteFile(tc.input, []byte("report bytes"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A relative temporary directory too: nsys runs in it.
			conv := NewConverter()
			conv.TempDir = "tmp"
			results := collect(t, []Input{{Path: tc.input}}, Options{Analysis: noEstimate, Converter: conv, Jobs: 1})
			if r := results[0]; r.Err != nil || r.Path != tc.input || r.Doc.Totals != want {
				t.Fatalf("converted %s: path %q, err %v", tc.input, r.Path, r.Err)
			}
			argvData, err := os.ReadFile(argvLog)
			if err != nil {
				t.Fatal(err)
			}
			cwdData, err := os.ReadFile(cwdLog)
			if err != nil {
				t.Fatal(err)
			}
			argv := strings.Split(strings.TrimSuffix(string(argvData), "\n"), "\n")
			cwd := strings.TrimSpace(string(cwdData))
			if filepath.Dir(cwd) != filepath.Join(work, "tmp") || !strings.HasPrefix(filepath.Base(cwd), "nsyssync-export-") {
				t.Errorf("nsys ran in %s, want a directory under %s", cwd, filepath.Join(work, "tmp"))
			}
			wantArgv := []string{"export", "-q", "true", "--include-json=true", "--type", "sqlite", "--force-overwrite", "true",
				"-o", filepath.Join(cwd, tc.export), filepath.Join(work, tc.input)}
			if !slices.Equal(argv, wantArgv) {
				t.Errorf("nsys argv\n%q\nwant\n%q", argv, wantArgv)
			}
			if left, _ := os.ReadDir("tmp"); len(left) != 0 {
				t.Errorf("temporary export left behind: %v", left)
			}
		})
	}
	if entries, _ := os.ReadDir(filepath.Join(work, "w2")); len(entries) != 2 {
		t.Errorf("files beside the reports in w2: %v", entries)
	}
}
