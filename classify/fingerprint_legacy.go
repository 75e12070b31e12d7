package classify

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/internal/format"
)

// Fingerprint names a site across runs: the identity Sites gives it
// (Site.Fingerprint: the program, the place without its line,
// NVTX path or stream, and a rank), or, for a site made without one, the
// legacy fingerprint.
func Fingerprint(s *Site) string {
	if s.Fingerprint != "" {
		return s.Fingerprint
	}
	return LegacyFingerprint(s)
}

// LegacyFingerprint is the fingerprint reports gave before sites had an
// identity of their own, still accepted by allow-lists: a short hash of
// what groups its syncs — its APIs and the program's file (its last two
// path elements) and line, else the site's grouping key (native call path,
// or APIs, stream and NVTX path). It changes when lines move or NVTX
// ranges are added, and unrelated programs can share it.
func LegacyFingerprint(s *Site) string {
	h := sha256.New()
	if f := s.Location.File; f != "" {
		// "py|APIs|dir/file.py:line", hashed piece by piece: a name is
		// never copied, however long.
		elems := format.PathTail(f, 2)
		tail := len(elems) - 1 // the slash between them
		for _, e := range elems {
			tail += len(e)
		}
		hashString(h, "py|"+strings.Join(s.APIs, "+")+"|")
		hashString(h, f[len(f)-tail:])
		hashString(h, ":"+strconv.FormatInt(s.Location.Line, 10))
		// Sites a line holds apart keep apart: the library function that
		// made the sync, and a set-up, tear-down or profiler phase. A site
		// with neither keeps the fingerprint it always had.
		if s.Location.Library != "" {
			hashString(h, "|lib "+s.Location.Library+copyDirection(s.Key))
		}
		if s.Phase != PhaseSteady {
			hashString(h, "|phase "+string(s.Phase))
		}
	} else {
		hashString(h, s.Key)
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

// copyDirection is the "|copyN" part of a Python-frame site's key (the
// direction of its copy), "" when it has none.
func copyDirection(key string) string {
	i := strings.Index(key, "|copy")
	if i < 0 {
		return ""
	}
	end := strings.IndexByte(key[i+1:], '|')
	if end < 0 {
		return key[i:]
	}
	return key[i : i+1+end]
}

// hashString writes s to h through a small buffer, without a copy of s.
func hashString(h hash.Hash, s string) {
	var buf [4096]byte
	for len(s) > 0 {
		n := copy(buf[:], s)
		h.Write(buf[:n])
		s = s[n:]
	}
}
