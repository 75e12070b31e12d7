// Package classify turns each host sync of a trace into a verdict — whether
// the program needed the wait (a true dependency) or not (a false one), the
// kind of sync (a category of DESIGN.md's vocabulary), how sure it is, the
// facts that decided it, and the sync-free rewrite — and groups syncs into
// sites: one place in the program, with counts, blocked time and the
// verdict its syncs share.
//
// Verdicts come from one table, Rules, tried in order: Python frames of
// torch and the program's own source line (with Options.SourceRoot), aten
// op ranges from --pytorch=autograd-nvtx and the ops just before a sync,
// native callchains from --cudabacktrace, and, with none of these, the call
// pattern (copy direction, size, memory kinds, the API). Where the evidence
// does not decide, the verdict is unknown.
package classify

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// Dependency says whether the host needed to wait.
type Dependency string

// Dependencies.
const (
	DepFalse   Dependency = "false"
	DepTrue    Dependency = "true"
	DepUnknown Dependency = "unknown"
)

// Site is one place in the program that synchronises, with its syncs.
type Site struct {
	ID         string
	Key        string
	APIs       []string
	Reason     string
	Syncs      []int // indices into Trace.Syncs
	BlockedNs  int64
	Dependency Dependency
	Category   string
	Confidence float64
	Evidence   []string
	Fix        string
	Location   Location
	NVTX       []string
}

// Location is where a site is in the program.
type Location struct {
	File     string
	Line     int64
	Function string
	Frames   []string
}

// Sites groups the trace's syncs into sites, largest blocked time first,
// with the verdicts of Options{} (no source root).
func Sites(t *trace.Trace) []Site { return Options{}.Sites(t) }

// Sites groups the trace's syncs into sites, largest blocked time first, and
// gives each the verdict its syncs share.
func (o Options) Sites(t *trace.Trace) []Site {
	verdicts := o.Verdicts(t)
	byKey := map[string]*Site{}
	var order []*Site
	for i := range t.Syncs {
		s := &t.Syncs[i]
		key, loc := siteKey(s)
		site := byKey[key]
		if site == nil {
			site = &Site{Key: key, APIs: s.APIs(), Reason: s.Reason, Location: loc, NVTX: nvtxPath(s),
				Dependency: DepUnknown, Category: "unknown"}
			byKey[key] = site
			order = append(order, site)
		}
		site.Syncs = append(site.Syncs, i)
		site.BlockedNs += s.Duration()
	}
	sort.SliceStable(order, func(a, b int) bool { return order[a].BlockedNs > order[b].BlockedNs })
	out := make([]Site, len(order))
	for i, s := range order {
		s.ID = fmt.Sprintf("s%d", i+1)
		fillVerdict(s, verdicts)
		out[i] = *s
	}
	return out
}

// siteKey names the place a sync comes from: its Python frames, else its
// native call path, else its API sequence, stream and NVTX path.
func siteKey(s *trace.Sync) (string, Location) {
	apis := strings.Join(s.APIs(), "+")
	if len(s.Python) > 0 {
		var frames []string
		for _, f := range s.Python {
			frames = append(frames, fmt.Sprintf("%s:%d %s", f.File, f.Line, f.Function))
		}
		// One place in the program: its innermost frame of its own code,
		// whatever the path that led there (warm-up or loop).
		top := s.Python[ProgramFrame(s.Python)]
		key := fmt.Sprintf("py|%s|%s:%d", apis, top.File, top.Line)
		return key, Location{File: top.File, Line: top.Line, Function: top.Function, Frames: frames}
	}
	if user := UserFrames(s.Native); len(user) > 0 {
		var frames []string
		for _, f := range user {
			frames = append(frames, f.Symbol)
		}
		return "native|" + apis + "|" + strings.Join(frames, ";"), Location{Function: user[0].Symbol, Frames: frames}
	}
	return fmt.Sprintf("api|%s|%s|%d|%s|%s", apis, s.Reason, s.Stream, strings.Join(nvtxPath(s), "/"), s.Scope), Location{}
}

// ProgramFrame returns the index of the innermost Python frame that belongs
// to the program rather than to an installed library or the interpreter; 0
// when every frame does.
func ProgramFrame(frames []trace.PyFrame) int {
	for i, f := range frames {
		if !isLibraryFile(f.File) {
			return i
		}
	}
	return 0
}

func isLibraryFile(file string) bool {
	return strings.Contains(file, "/site-packages/") || strings.Contains(file, "/dist-packages/") ||
		strings.HasPrefix(file, "<frozen") || strings.Contains(file, "/lib/python3") || strings.HasPrefix(file, "<")
}

// UserFrames drops the profiler's and the CUDA libraries' own frames from
// the top of a native stack and unresolved addresses anywhere.
func UserFrames(frames []trace.Frame) []trace.Frame {
	i := 0
	for ; i < len(frames); i++ {
		m := frames[i].Module
		if frames[i].Unresolved || strings.Contains(m, "libcupti") || strings.Contains(m, "libcuda.so") || strings.Contains(m, "libcudart") {
			continue
		}
		break
	}
	var out []trace.Frame
	for _, f := range frames[i:] {
		if !f.Unresolved {
			out = append(out, f)
		}
	}
	return out
}

// nvtxPath names the enclosing NVTX ranges outer to inner, with digits
// folded so that iterations ("step12") share a path.
func nvtxPath(s *trace.Sync) []string {
	var out []string
	for _, r := range s.NVTX {
		out = append(out, foldDigits(r.Name))
	}
	return out
}

func foldDigits(name string) string {
	var b strings.Builder
	inDigits := false
	for _, r := range name {
		if r >= '0' && r <= '9' {
			if !inDigits {
				b.WriteString("#")
			}
			inDigits = true
			continue
		}
		inDigits = false
		b.WriteRune(r)
	}
	return b.String()
}
