// Package classify turns each host sync of a trace into a verdict — whether
// the program needed the wait (a true dependency) or not (a false one), the
// kind of sync (a category of the vocabulary in docs/design.md), how sure it is, the
// facts that decided it, and the sync-free rewrite — and groups syncs into
// sites: one place in the program, with counts, blocked time and the
// verdict its syncs share.
//
// Verdicts come from one table, Rules, tried in order: Python frames of
// torch and the program's own source line (Options.SourceRoot and
// Options.FindSources say where its files are looked for), aten
// op ranges from --pytorch=autograd-nvtx and the ops just before a sync,
// native callchains from --cudabacktrace, and, with none of these, the call
// pattern (copy direction, size, memory kinds, the API). Where the evidence
// does not decide, the verdict is unknown. Each verdict records the kind
// of evidence it rests on (Basis): frames, the program's line or aten
// ranges decide it; the call pattern alone makes a dependency only likely
// (Site.Likely).
package classify

import (
	"bytes"
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
	// NVTX is the enclosing NVTX path, outer to inner, digits folded
	// ("Batch #"): the path the site is grouped by.
	NVTX []string
	// NVTXShown is the NVTX path of the site's first sync as the program
	// wrote it ("Batch 17"), for reports; NVTXOthers counts the other
	// paths as written among its syncs that fold to NVTX.
	NVTXShown  []string
	NVTXOthers int
	// SourceFile is the file the site's program line was read from
	// (Verdict.SourceFile); "" when none was read.
	SourceFile string
	// Basis is the weakest basis of its syncs' verdicts: a site is decided
	// only when every sync is (see Likely and Decided).
	Basis Basis
	// Phase is the part of the run its syncs belong to (set-up, tear-down,
	// the profiler's own; empty: the program's steady work), and
	// PhaseReason says how the trace shows it. Syncs of different phases
	// are different sites.
	Phase       Phase
	PhaseReason string
	// NeededCopyBytes is the largest device-to-host copy of its syncs
	// that brings more than a scalar to the host: data the program uses,
	// which a rewrite still copies (0: none).
	NeededCopyBytes int64
	// Fingerprint names the site across runs and machines
	// (fingerprint.go): the program, the place without its line, NVTX
	// path or stream, and its rank among the run's sites that share those.
	Fingerprint string
	// HostRead, when set, says how the trace shows that the process reads
	// memory the GPU writes without a copy call (managed or mapped
	// memory): the site's explicit syncs may guard such a read, so its
	// dependency is at most unknown and it counts in no removable total.
	HostRead string
}

// Location is where a site is in the program.
type Location struct {
	File     string
	Line     int64
	Function string
	Frames   []string
	// Library is the function of another library (not torch) that made
	// the sync, as "package/file.py:function", when one did: one program
	// line calling into a library may hold several sites.
	Library string
}

// Sites groups the trace's syncs into sites, largest blocked time first,
// with the verdicts of Options{} (no source root).
func Sites(t *trace.Trace) []Site { return Options{}.Sites(t) }

// Sites groups the trace's syncs into sites, largest blocked time first, and
// gives each the verdict its syncs share.
func (o Options) Sites(t *trace.Trace) []Site {
	nm := newNames()
	prog := o.program(t)
	o.Program = &prog // detected once: the verdicts' fixes and the sites use it
	phases := newPhaser(t)
	sampledOf := newSampledSites(t, nm, phases)
	ids, keyIDs, table := o.verdicts(t, nm, sampledOf)
	if keyIDs == nil {
		keyIDs = ids
	}
	siteOf := make([]int32, len(t.Syncs)) // per sync, its site in order
	byKey := map[string]int32{}
	var order []*Site
	var bases []string // per site, its identity before the rank (fingerprint.go)
	programs := newProgramIDs(t, prog.Framework)
	var key []byte
	for i := range t.Syncs {
		s := &t.Syncs[i]
		key = appendSiteKey(key[:0], nm, s)
		if bytes.HasPrefix(key, []byte("api|")) {
			// Without frames, syncs of one call pattern and NVTX path that
			// the rules explain apart (a bool read, a mask count, a scalar)
			// are different places in the program.
			// The rule is the one without CPU samples (verdicts): samples
			// add evidence to a site, never change which it is.
			key = append(append(key, "|rule "...), table[keyIDs[i]].Rule...)
		}
		phase, why := phases.phase(s)
		if phase != PhaseSteady {
			key = append(append(key, "|phase "...), phase...)
		}
		k, ok := byKey[string(key)]
		if !ok {
			bases = append(bases, identityBase(programs, nm, s, table[keyIDs[i]].Rule, phase))
			k = int32(len(order))
			byKey[string(key)] = k
			loc := siteLocation(nm, s)
			if st := sampledOf.of(i); st != nil && loc.File == "" && loc.Function == "" {
				loc = st.location()
			}
			order = append(order, &Site{Key: string(key), APIs: s.APIs(), Reason: s.Reason.String(), Location: loc, NVTX: nvtxPath(s),
				Dependency: DepUnknown, Category: "unknown", Basis: BasisNone, Phase: phase, PhaseReason: why})
		}
		siteOf[i] = k
		order[k].BlockedNs += s.Duration()
		order[k].NeededCopyBytes = max(order[k].NeededCopyBytes, neededCopyBytes(s))
	}
	// Every site's syncs, in index order, in one array cut per site.
	counts := make([]int, len(order))
	for _, k := range siteOf {
		counts[k]++
	}
	all := make([]int, len(t.Syncs))
	at := 0
	for k, site := range order {
		site.Syncs = all[at : at : at+counts[k]]
		at += counts[k]
	}
	for i, k := range siteOf {
		order[k].Syncs = append(order[k].Syncs, i)
	}
	assignFingerprints(order, bases) // in the order the sites' first syncs ran
	sort.SliceStable(order, func(a, b int) bool { return order[a].BlockedNs > order[b].BlockedNs })
	out := make([]Site, len(order))
	tl := newTallier(len(table))
	for i, s := range order {
		s.ID = fmt.Sprintf("s%d", i+1)
		tallies := tl.tally(s.Syncs, ids)
		fillVerdict(s, tallies, table)
		fillNVTXShown(s, t)
		printedSite(s, t, ids, table)
		copyGuardSite(s, t)
		explainNeeded(s, allByRule(tallies, table, ruleCopyOnlyKept))
		hostMappedSite(s, t)
		librarySite(s, t, prog)
		out[i] = *s
	}
	return out
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
	return appendUserFrames(nil, frames)
}

// appendUserFrames appends the user frames of frames (see UserFrames) to
// dst.
func appendUserFrames(dst, frames []trace.Frame) []trace.Frame {
	for _, f := range frames[userStart(frames):] {
		if !f.Unresolved {
			dst = append(dst, f)
		}
	}
	return dst
}

// userStart is the index of the first frame past the profiler's and the
// CUDA libraries' own frames at the top of a native stack.
func userStart(frames []trace.Frame) int {
	i := 0
	for ; i < len(frames); i++ {
		m := frames[i].Module
		if frames[i].Unresolved || strings.Contains(m, "libcupti") || strings.Contains(m, "libcuda.so") || strings.Contains(m, "libcudart") {
			continue
		}
		break
	}
	return i
}

// nvtxPath names the enclosing NVTX ranges outer to inner, with digits
// folded so that iterations ("step12") share a path; at most maxNameBytes
// of each.
func nvtxPath(s *trace.Sync) []string {
	var out []string
	for _, r := range s.NVTX() {
		out = append(out, foldDigits(shownName(r.Name)))
	}
	return out
}

func foldDigits(name string) string {
	return string(appendFoldDigits(nil, name))
}
