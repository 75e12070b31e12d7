package classify

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/nsyssync/nsyssync/trace"
)

// maxNameBytes bounds how much of one name of the trace — a file, a
// function, a native symbol, an API or NVTX range name — the classifier
// copies into what it builds per sync, per verdict or per site (grouping
// keys, evidence, locations). It is Linux's PATH_MAX: no real file name,
// and hardly a real symbol, is longer. The trace holds each name once, in
// full; a longer name is shown clipped and keyed by a digest, so that one
// absurd string of an export costs its own size, not its size times the
// syncs, frames or sites that name it.
const maxNameBytes = 4096

// digestHexBytes is how much of a long name's SHA-256 its key form keeps.
const digestHexBytes = 32

// nameRef identifies a string by its bytes: their address and length. The
// trace gives every use of one name of the export the same bytes, so a
// long name's derived forms are worked out once, however many frames or
// syncs name it. Holding the pointer keeps the bytes alive, so a ref is
// never reused by another string while it is in a map.
type nameRef struct {
	p *byte
	n int
}

func refOf(s string) nameRef { return nameRef{unsafe.StringData(s), len(s)} }

// names remembers, per long name, the bounded forms the classifier uses
// in its keys. Names of at most maxNameBytes are used as they are and
// never looked up. One names serves one classification.
type names struct {
	keys   map[nameRef]string // long name → its key form
	folded map[nameRef]string // long NVTX name → key form of its digits folded
	clean  map[nameRef]string // long file → cleanFile of it
	lib    map[nameRef]bool   // long file → isLibraryFile of it
}

func newNames() *names {
	return &names{keys: map[nameRef]string{}, folded: map[nameRef]string{}, clean: map[nameRef]string{}, lib: map[nameRef]bool{}}
}

// isLibrary is isLibraryFile(file), searched once per long file.
func (nm *names) isLibrary(file string) bool {
	if len(file) <= maxNameBytes {
		return isLibraryFile(file)
	}
	r := refOf(file)
	lib, ok := nm.lib[r]
	if !ok {
		lib = isLibraryFile(file)
		nm.lib[r] = lib
	}
	return lib
}

// programFrame is ProgramFrame(frames).
func (nm *names) programFrame(frames []trace.PyFrame) int {
	for i, f := range frames {
		if !nm.isLibrary(f.File) {
			return i
		}
	}
	return 0
}

// key returns the form of a name that grouping and memo keys hold: the
// name itself, or for a long name its clipped head and a digest of the
// whole, so that two long names share a key only when they are equal.
func (nm *names) key(s string) string {
	if len(s) <= maxNameBytes {
		return s
	}
	return memoLong(nm.keys, s, digestKey)
}

// memoLong returns long(s), worked out once per distinct long string.
func memoLong(m map[nameRef]string, s string, long func(string) string) string {
	r := refOf(s)
	if v, ok := m[r]; ok {
		return v
	}
	v := long(s)
	m[r] = v
	return v
}

// foldedKey returns the key form of foldDigits(s) (see key).
func (nm *names) foldedKey(s string) string {
	if len(s) <= maxNameBytes {
		return foldDigits(s)
	}
	return memoLong(nm.folded, s, foldedDigestKey)
}

// appendFolded appends the key form of foldDigits(s) to b, without
// allocating for a name of at most maxNameBytes.
func (nm *names) appendFolded(b []byte, s string) []byte {
	if len(s) <= maxNameBytes {
		return appendFoldDigits(b, s)
	}
	return append(b, nm.foldedKey(s)...)
}

// cleanFile is a frame's file with forward slashes, cleaned, for matching
// the Python signatures of the rules by suffix.
func (nm *names) cleanFile(file string) string {
	if len(file) <= maxNameBytes {
		return cleanPath(file)
	}
	return memoLong(nm.clean, file, cleanPath)
}

// digestKey is the key form of a long name: its head and its digest. It
// is longer than maxNameBytes, so no name used as it is has the same key.
func digestKey(s string) string {
	h := sha256.New()
	h.Write(unsafe.Slice(unsafe.StringData(s), len(s))) // read only: no copy of s
	return headClip(s, maxNameBytes) + " #" + hex.EncodeToString(h.Sum(nil))[:digestHexBytes]
}

// foldedDigestKey is the key form of foldDigits(s) for a long s, folded a
// chunk at a time rather than copied whole: the folded name when it is
// short, else its head and its digest.
func foldedDigestKey(s string) string {
	const chunk = 32 << 10
	h := sha256.New()
	head := make([]byte, 0, maxNameBytes+utf8.UTFMax)
	buf := make([]byte, 0, chunk+utf8.UTFMax)
	total := 0
	flush := func() {
		h.Write(buf)
		total += len(buf)
		if n := min(cap(head)-len(head), len(buf)); n > 0 {
			head = append(head, buf[:n]...)
		}
		buf = buf[:0]
	}
	inDigits := false
	for _, r := range s {
		if r >= '0' && r <= '9' {
			if !inDigits {
				buf = append(buf, '#')
			}
			inDigits = true
		} else {
			inDigits = false
			buf = utf8.AppendRune(buf, r)
		}
		if len(buf) >= chunk {
			flush()
		}
	}
	flush()
	if total <= maxNameBytes {
		return string(head)
	}
	return headClip(string(head), maxNameBytes) + " #" + hex.EncodeToString(h.Sum(nil))[:digestHexBytes]
}

// headClip shortens s to at most n bytes, on a rune boundary, marking the
// cut with "…".
func headClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n-len("…"), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// tailClip shortens s to at most n bytes keeping its end — what names a
// file — on a rune boundary, marking the cut with "…".
func tailClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - max(n-len("…"), 0)
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return "…" + s[cut:]
}

// shownName bounds a symbol or function name for evidence and locations.
func shownName(s string) string { return headClip(s, maxNameBytes) }

// shownFile bounds a file name for evidence and locations.
func shownFile(s string) string { return tailClip(s, maxNameBytes) }

// cleanPath turns backslashes into slashes and cleans the path.
func cleanPath(file string) string {
	return path.Clean(strings.ReplaceAll(file, `\`, "/"))
}
