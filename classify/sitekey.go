package classify

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/nsyssync/nsyssync/trace"
)

// appendSiteKey appends the sync's site key to b: the place a sync comes
// from — its Python frames, else its native call path, else its API
// sequence and NVTX path, and its stream when no NVTX range encloses it. Grouping a sync with a known site
// allocates nothing. Names enter it in their key form (names.key), so a
// key is the same from run to run and bounded however long a name is.
func appendSiteKey(b []byte, nm *names, s *trace.Sync) []byte {
	if py := s.Python(); len(py) > 0 {
		// One place in the program: its innermost frame of its own code,
		// whatever the path that led there (warm-up or loop).
		at := nm.programFrame(py)
		top := &py[at]
		b = appendAPIs(append(b, "py|"...), nm, s, "+")
		b = appendCopyDirection(b, s)
		// A sync made inside another library: the library's function that
		// made it, for one program line may call into several.
		if lib := libraryFrame(nm, py[:at]); lib != nil {
			b = append(append(append(append(b, "|lib "...), nm.key(lib.File)...), ':'), nm.key(lib.Function)...)
		}
		b = append(append(append(b, '|'), nm.key(top.File)...), ':')
		return strconv.AppendInt(b, top.Line, 10)
	}
	if native := s.Native(); hasUserFrame(native) {
		b = appendAPIs(append(b, "native|"...), nm, s, "+")
		b = append(b, '|')
		sep := false
		for _, f := range native[userStart(native):] {
			if f.Unresolved {
				continue
			}
			if sep {
				b = append(b, ';')
			}
			b = append(b, nm.key(f.Symbol)...)
			sep = true
		}
		return b
	}
	b = appendAPIs(append(b, "api|"...), nm, s, "+")
	b = append(append(b, '|'), s.Reason.String()...)
	b = append(b, '|')
	ranges := s.NVTX()
	if len(ranges) == 0 {
		// Nothing but the stream tells two such places apart. Inside an
		// NVTX range, the range names the place (a library function such
		// as ncclCommInitRank, a step of the program): the same call there
		// on several streams is one site.
		b = strconv.AppendInt(b, int64(s.Stream), 10)
	}
	b = append(b, '|')
	for i, r := range ranges {
		if i > 0 {
			b = append(b, '/')
		}
		b = nm.appendFolded(b, r.Name)
	}
	return append(append(b, '|'), s.Scope.String()...)
}

// libraryFrame is the innermost frame of a library other than torch among
// the frames inside the program's, nil when there is none.
func libraryFrame(nm *names, inside []trace.PyFrame) *trace.PyFrame {
	for i := range inside {
		if !isTorchFile(nm.cleanFile(inside[i].File)) {
			return &inside[i]
		}
	}
	return nil
}

// appendCopyDirection appends the direction of the sync's copy, if any:
// one line (a library call such as generate()) may both copy a constant to
// the GPU and read a flag back, two waits with two different fixes.
func appendCopyDirection(b []byte, s *trace.Sync) []byte {
	if c := s.Copy; c != nil && !c.Memset {
		b = strconv.AppendInt(append(b, "|copy"...), int64(foldDirection(c.Direction)), 10)
	}
	return b
}

// siteLocation is where the sync's site is in the program (see
// appendSiteKey). Its File and Function are the trace's names; its Frames
// are built from at most maxNameBytes of each.
func siteLocation(nm *names, s *trace.Sync) Location {
	if py := s.Python(); len(py) > 0 {
		var frames []string
		for _, f := range py {
			frames = append(frames, fmt.Sprintf("%s:%d %s", shownFile(f.File), f.Line, shownName(f.Function)))
		}
		at := nm.programFrame(py)
		top := py[at]
		loc := Location{File: top.File, Line: top.Line, Function: top.Function, Frames: frames}
		if lib := libraryFrame(nm, py[:at]); lib != nil {
			loc.Library = shortFile(lib.File) + ":" + shownName(lib.Function)
		}
		return loc
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

// appendAPIs appends the names of the sync's calls in key form, joined by
// sep.
func appendAPIs(b []byte, nm *names, s *trace.Sync, sep string) []byte {
	for i, c := range s.Calls() {
		if i > 0 {
			b = append(b, sep...)
		}
		b = append(b, nm.key(c.Name)...)
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
