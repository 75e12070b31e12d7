package safefile

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What stands at the fuzzed output path before Create.
const (
	placeNothing = iota
	placeRegular
	placeLinkToInput
	placeLinkToRegular
	placeHardLinkToInput
	placeDirectory
	placeFIFO
	placeDanglingLink
	placeLinkLoop
	placeCount
)

// FuzzCreate writes a report to an output path built from the input (any
// name inside a directory, with whatever the selector puts there first:
// nothing, a file, links to the run's input, a directory, a FIFO, a link
// loop). Whatever the name, the run's input keeps its bytes, a link stays
// a link, no temporary file is left and nothing is written outside the
// directory.
func FuzzCreate(f *testing.F) {
	for _, seed := range []struct {
		name  string
		place byte
	}{
		{"r.txt", placeNothing}, {"r.txt", placeRegular}, {"a.sqlite", placeLinkToInput},
		{"l", placeLinkToRegular}, {"h.sqlite", placeHardLinkToInput}, {"d", placeDirectory},
		{"p.fifo", placeFIFO}, {"dangling", placeDanglingLink}, {"loop", placeLinkLoop},
		{"sub/r.txt", placeNothing}, {".r.txt.1.tmp", placeRegular}, {"-o", placeNothing},
		{"\x1b]0;x\x07.txt", placeRegular}, {"a b\nc", placeNothing}, {strings.Repeat("n", 300), placeNothing},
	} {
		f.Add(seed.name, seed.place)
	}
	f.Fuzz(func(t *testing.T, name string, place byte) {
		if !filepath.IsLocal(name) || strings.ContainsRune(name, 0) || name == "input.sqlite" || name == "other" {
			return
		}
		dir := t.TempDir()
		input := filepath.Join(dir, "input.sqlite")
		other := filepath.Join(dir, "other")
		for _, p := range []string{input, other} {
			if err := os.WriteFile(p, []byte("keep "+p), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return // a parent is the input or other: not a case
		}
		setUp(out, input, other, place%placeCount)
		before, _ := os.Lstat(out)

		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		o, err := Create(ctx, out, []string{input})
		if err == nil {
			io.WriteString(o, "report")
			err = o.Commit()
		}
		if place%placeCount == placeLinkToInput || place%placeCount == placeHardLinkToInput {
			if err == nil {
				t.Fatalf("%q: the input was accepted as the output", name)
			}
		}
		for _, p := range []string{input, other} {
			if b, _ := os.ReadFile(p); !bytes.Equal(b, []byte("keep "+p)) && !(p == other && place%placeCount == placeLinkToRegular && string(b) == "report") {
				t.Fatalf("%q (place %d): %s changed to %q", name, place%placeCount, p, b)
			}
		}
		if before != nil && before.Mode()&fs.ModeSymlink != 0 {
			if after, _ := os.Lstat(out); after == nil || after.Mode()&fs.ModeSymlink == 0 {
				t.Fatalf("%q: the link was replaced", name)
			}
		}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, _ error) error {
			if d != nil && strings.HasSuffix(d.Name(), ".tmp") && d.Name() != filepath.Base(name) {
				t.Fatalf("%q: temporary file left: %s", name, p)
			}
			return nil
		})
	})
}

// setUp puts what place names at out.
func setUp(out, input, other string, place byte) {
	switch place {
	case placeRegular:
		os.WriteFile(out, []byte("old"), 0o600)
	case placeLinkToInput:
		os.Symlink(input, out)
	case placeLinkToRegular:
		os.Symlink(other, out)
	case placeHardLinkToInput:
		os.Link(input, out)
	case placeDirectory:
		os.Mkdir(out, 0o755)
	case placeFIFO:
		syscall.Mkfifo(out, 0o644)
	case placeDanglingLink:
		os.Symlink(filepath.Join(filepath.Dir(out), "made-by-link"), out)
	case placeLinkLoop:
		os.Symlink(filepath.Base(out), out)
	}
}
