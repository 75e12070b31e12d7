package classify

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nsyssync/nsyssync/trace"
)

func TestClip(t *testing.T) {
	long := strings.Repeat("é", maxNameBytes) // two bytes a rune: a cut may fall inside one
	cases := []struct {
		name      string
		got       string
		wantLen   int // at most
		wantStart string
		wantEnd   string
	}{
		{"head of a short name", headClip("train.py", 10), 8, "train.py", "train.py"},
		{"head of a long name", headClip("abcdefghij", 6), 6, "abc", "…"},
		{"head on a rune boundary", headClip(long, 100), 100, "éé", "é…"},
		{"tail of a short name", tailClip("train.py", 10), 8, "train.py", "train.py"},
		{"tail of a long name", tailClip("/a/b/c/train.py", 11), 11, "…", "train.py"},
		{"tail on a rune boundary", tailClip(long+"x.py", 100), 100, "…é", "éx.py"},
		{"shown file keeps the end", shownFile(strings.Repeat("d/", maxNameBytes) + "x.py"), maxNameBytes, "…", "d/x.py"},
		{"shown name keeps the head", shownName("f" + strings.Repeat("<T>", maxNameBytes)), maxNameBytes, "f<T>", "…"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(c.got) > c.wantLen || !utf8.ValidString(c.got) || !strings.HasPrefix(c.got, c.wantStart) || !strings.HasSuffix(c.got, c.wantEnd) {
				t.Errorf("got %.40q… (%d bytes), want at most %d bytes, from %q to %q", c.got, len(c.got), c.wantLen, c.wantStart, c.wantEnd)
			}
		})
	}
}

func TestNameKeys(t *testing.T) {
	nm := newNames()
	long := strings.Repeat("/x", maxNameBytes)
	other := long[:len(long)-1] + "y"
	same := strings.Clone(long) // equal text, other bytes
	if got := nm.key("train.py"); got != "train.py" {
		t.Errorf("key of a short name = %q, want it unchanged", got)
	}
	k := nm.key(long)
	if len(k) <= maxNameBytes || len(k) > maxNameBytes+64 {
		t.Errorf("key of a %d-byte name is %d bytes: want just over %d, so that no short name has it", len(long), len(k), maxNameBytes)
	}
	if nm.key(other) == k {
		t.Error("two long names that differ in their last byte share a key")
	}
	if nm.key(same) != k {
		t.Error("two copies of one long name have different keys")
	}
	if len(nm.keys) != 3 {
		t.Errorf("%d long names remembered, want 3 (one per distinct bytes)", len(nm.keys))
	}

	// Folded keys group what foldDigits groups, however long the name.
	step := func(n string) string { return strings.Repeat("step"+n+" ", maxNameBytes) }
	cases := []struct {
		name  string
		a, b  string
		equal bool
	}{
		{"short names, digits differ", "step1", "step22", true},
		{"long names, digits differ", step("1"), step("22"), true},
		{"long names, letters differ", step("1"), strings.Repeat("stop1 ", maxNameBytes), false},
		{"runs of digits cut differently", "a1b" + strings.Repeat("c", maxNameBytes), "a11b" + strings.Repeat("c", maxNameBytes), true},
		{"long name of digits folds short", strings.Repeat("7", 3*maxNameBytes), "#", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ka, kb := nm.foldedKey(c.a), nm.foldedKey(c.b)
			if (ka == kb) != c.equal {
				t.Errorf("folded keys equal: %v, want %v (%.30q…, %.30q…)", ka == kb, c.equal, ka, kb)
			}
			if len(ka) > maxNameBytes+64 {
				t.Errorf("folded key of %d bytes", len(ka))
			}
			if len(c.a) <= maxNameBytes && ka != foldDigits(c.a) {
				t.Errorf("folded key of a short name %q = %q, want foldDigits's %q", c.a, ka, foldDigits(c.a))
			}
		})
	}
}

// TestLongNamesClassifyAlike checks that names past maxNameBytes still
// decide verdicts and sites as the rules say: a torch frame matched by its
// file's end, the program's frame told from a library's, and two sites
// whose files differ past the clipped head kept apart.
func TestLongNamesClassifyAlike(t *testing.T) {
	pad := strings.Repeat("d/", maxNameBytes)
	torchFile := "/opt/" + pad + "site-packages/torch/cuda/streams.py"
	calls := []trace.Call{{Name: "cudaStreamSynchronize", Kind: trace.CallStreamSync, Blocking: true, CallchainID: -1, TwinStart: -1}}
	mk := func(i int, file string) trace.Sync {
		s := trace.Sync{Index: int32(i), Start: int64(i) * 10, End: int64(i)*10 + 5, Stream: 7, Scope: trace.ScopeStream, Device: 0}
		s.SetCalls(calls)
		s.SetPython([]trace.PyFrame{{Function: "synchronize", File: torchFile, Line: 2}, {Function: "main", File: file, Line: 9}})
		return s
	}
	tr := &trace.Trace{Syncs: []trace.Sync{mk(0, "/home/"+pad+"a.py"), mk(1, "/home/"+pad+"b.py"), mk(2, "/home/"+pad+"a.py")}}
	sites := Sites(tr)
	if len(sites) != 2 {
		t.Fatalf("%d sites, want 2 (a.py twice, b.py)", len(sites))
	}
	for _, s := range sites {
		if len(s.Key) > 2*maxNameBytes {
			t.Errorf("site key of %d bytes", len(s.Key))
		}
		if !strings.HasSuffix(s.Location.File, ".py") || len(s.Location.File) < maxNameBytes {
			t.Errorf("location file %.30q… is not the frame's whole file", s.Location.File)
		}
		for _, f := range s.Location.Frames {
			if len(f) > 2*maxNameBytes+32 {
				t.Errorf("location frame of %d bytes", len(f))
			}
		}
		found := false
		for _, e := range s.Evidence {
			found = found || strings.Contains(e, "torch/cuda/streams.py:2 synchronize")
		}
		if !found {
			t.Errorf("site %s: no torch frame in the evidence %q", s.Location.File[len(s.Location.File)-4:], s.Evidence)
		}
	}
}
