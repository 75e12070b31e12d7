package classify

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/nsyssync/nsyssync/trace"
)

// appendSiteKey appends the sync's site key to b: the place a sync comes
// from — its Python frames, else its native call path, else its API
// sequence, stream and NVTX path. Grouping a sync with a known site
// allocates nothing.
func appendSiteKey(b []byte, s *trace.Sync) []byte {
	if py := s.Python(); len(py) > 0 {
		// One place in the program: its innermost frame of its own code,
		// whatever the path that led there (warm-up or loop).
		top := &py[ProgramFrame(py)]
		b = appendAPIs(append(b, "py|"...), s, "+")
		b = append(append(append(b, '|'), top.File...), ':')
		return strconv.AppendInt(b, top.Line, 10)
	}
	if native := s.Native(); hasUserFrame(native) {
		b = appendAPIs(append(b, "native|"...), s, "+")
		b = append(b, '|')
		sep := false
		for _, f := range native[userStart(native):] {
			if f.Unresolved {
				continue
			}
			if sep {
				b = append(b, ';')
			}
			b = append(b, f.Symbol...)
			sep = true
		}
		return b
	}
	b = appendAPIs(append(b, "api|"...), s, "+")
	b = append(append(b, '|'), s.Reason.String()...)
	b = strconv.AppendInt(append(b, '|'), s.Stream, 10)
	b = append(b, '|')
	for i, r := range s.NVTX() {
		if i > 0 {
			b = append(b, '/')
		}
		b = appendFoldDigits(b, r.Name)
	}
	return append(append(b, '|'), s.Scope.String()...)
}

// siteLocation is where the sync's site is in the program (see
// appendSiteKey).
func siteLocation(s *trace.Sync) Location {
	if py := s.Python(); len(py) > 0 {
		var frames []string
		for _, f := range py {
			frames = append(frames, fmt.Sprintf("%s:%d %s", f.File, f.Line, f.Function))
		}
		top := py[ProgramFrame(py)]
		return Location{File: top.File, Line: top.Line, Function: top.Function, Frames: frames}
	}
	if user := UserFrames(s.Native()); len(user) > 0 {
		var frames []string
		for _, f := range user {
			frames = append(frames, f.Symbol)
		}
		return Location{Function: user[0].Symbol, Frames: frames}
	}
	return Location{}
}

// hasUserFrame reports whether UserFrames(frames) is not empty.
func hasUserFrame(frames []trace.Frame) bool {
	for _, f := range frames[userStart(frames):] {
		if !f.Unresolved {
			return true
		}
	}
	return false
}

// appendAPIs appends the names of the sync's calls, joined by sep.
func appendAPIs(b []byte, s *trace.Sync, sep string) []byte {
	for i, c := range s.Calls() {
		if i > 0 {
			b = append(b, sep...)
		}
		b = append(b, c.Name...)
	}
	return b
}

// appendFoldDigits appends foldDigits(name) to b.
func appendFoldDigits(b []byte, name string) []byte {
	inDigits := false
	for _, r := range name {
		if r >= '0' && r <= '9' {
			if !inDigits {
				b = append(b, '#')
			}
			inDigits = true
			continue
		}
		inDigits = false
		b = utf8.AppendRune(b, r)
	}
	return b
}
