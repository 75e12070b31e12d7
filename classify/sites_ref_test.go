package classify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/program"
	"github.com/nsyssync/nsyssync/trace"
)

// refSites is the straightforward grouping Sites does in O(n) and without
// an allocation per sync: string keys built per sync, and each site's
// verdict folded from the verdicts of all its syncs; api| sites are told
// apart by the rule of the verdict without CPU samples (unsampled).
func refSites(t *trace.Trace, verdicts, unsampled []Verdict) []Site {
	phases := newPhaser(t)
	byKey := map[string]*Site{}
	var order []*Site
	for i := range t.Syncs {
		s := &t.Syncs[i]
		key, loc := refSiteKey(s)
		if strings.HasPrefix(key, "api|") {
			key += "|rule " + unsampled[i].Rule
		}
		phase, why := phases.phase(s)
		if phase != PhaseSteady {
			key += "|phase " + string(phase)
		}
		site := byKey[key]
		if site == nil {
			if loc.File == "" && loc.Function == "" {
				loc = refSampledLocation(t, s)
			}
			site = &Site{Key: key, APIs: s.APIs(), Reason: s.Reason.String(), Location: loc, NVTX: nvtxPath(s),
				Dependency: DepUnknown, Category: "unknown", Phase: phase, PhaseReason: why}
			byKey[key] = site
			order = append(order, site)
		}
		site.Syncs = append(site.Syncs, i)
		site.BlockedNs += s.Duration()
		site.NeededCopyBytes = max(site.NeededCopyBytes, neededCopyBytes(s))
	}
	refFingerprints(t, order, unsampled)
	sort.SliceStable(order, func(a, b int) bool { return order[a].BlockedNs > order[b].BlockedNs })
	identity := make([]int32, len(t.Syncs)) // verdicts are per sync here
	for i := range identity {
		identity[i] = int32(i)
	}
	out := make([]Site, len(order))
	for i, s := range order {
		s.ID = fmt.Sprintf("s%d", i+1)
		// One tally per sync: the fold over every sync, in order.
		tallies := make([]tally, len(s.Syncs))
		table := make([]Verdict, len(s.Syncs))
		for j, k := range s.Syncs {
			tallies[j], table[j] = tally{id: int32(j), n: 1}, verdicts[k]
		}
		fillVerdict(s, tallies, table)
		printedSite(s, t, identity, verdicts)
		copyGuardSite(s, t)
		explainNeeded(s, allByRule(tallies, table, ruleCopyOnlyKept))
		hostMappedSite(s, t)
		librarySite(s, t, program.Detect(t))
		refNVTXShown(s, t)
		out[i] = *s
	}
	return out
}

// refNVTXShown is fillNVTXShown the plain way: the first sync's names as
// written, and every sync's path as written in a set.
func refNVTXShown(s *Site, t *trace.Trace) {
	var first []string
	paths := map[string]bool{}
	for j, k := range s.Syncs {
		var names []string
		for _, r := range t.Syncs[k].NVTX() {
			names = append(names, shownName(r.Name))
		}
		if j == 0 {
			first = names
		}
		paths[strings.Join(names, "\x00")] = true
	}
	s.NVTXShown = first
	if !reflect.DeepEqual(first, s.NVTX) && !(len(first) == 0 && len(s.NVTX) == 0) {
		s.NVTXOthers = len(paths) - 1
	}
}

// refSampledLocation is the call path of the CPU samples inside the
// syncs of s's site (as Sites groups them before the rules split them):
// the most common stack, the first seen of those, cut to the frames more
// than half of the samples hold; no location when none.
func refSampledLocation(t *trace.Trace, s *trace.Sync) Location {
	if len(UserFrames(s.Native())) > 0 {
		return Location{}
	}
	phases := newPhaser(t)
	group := func(s *trace.Sync) string {
		k, _ := refSiteKey(s)
		p, _ := phases.phase(s)
		return k + "|" + string(p)
	}
	want := group(s)
	n := 0
	holding := map[string]int{}
	stacks := map[string]int{}
	var order [][]trace.Frame
	for i := range t.Syncs {
		o := &t.Syncs[i]
		if len(UserFrames(o.Native())) > 0 || group(o) != want {
			continue
		}
		for _, st := range o.Samples() {
			user := sampleUserFrames(nil, st)
			if len(user) == 0 {
				continue
			}
			n++
			var syms []string
			seen := map[string]bool{}
			for _, f := range user {
				syms = append(syms, f.Symbol)
				if !seen[f.Symbol] {
					seen[f.Symbol] = true
					holding[f.Symbol]++
				}
			}
			k := strings.Join(syms, "\x00")
			if stacks[k] == 0 {
				order = append(order, user)
			}
			stacks[k]++
		}
	}
	var best []trace.Frame
	bestN := 0
	for _, st := range order {
		var syms []string
		for _, f := range st {
			syms = append(syms, f.Symbol)
		}
		if c := stacks[strings.Join(syms, "\x00")]; c > bestN {
			best, bestN = st, c
		}
	}
	var loc Location
	for _, f := range best {
		if 2*holding[f.Symbol] > n {
			loc.Frames = append(loc.Frames, f.Symbol)
		}
	}
	if len(loc.Frames) > 0 {
		loc.Function = loc.Frames[0]
	}
	return loc
}

func refSiteKey(s *trace.Sync) (string, Location) {
	apis := strings.Join(s.APIs(), "+")
	if py := s.Python(); len(py) > 0 {
		top := py[ProgramFrame(py)]
		dir := ""
		if c := s.Copy; c != nil && !c.Memset {
			dir = fmt.Sprintf("|copy%d", foldDirection(c.Direction))
		}
		for _, f := range py[:ProgramFrame(py)] {
			if !isTorchFile(f.File) {
				dir += "|lib " + f.File + ":" + f.Function
				break
			}
		}
		return fmt.Sprintf("py|%s%s|%s:%d", apis, dir, top.File, top.Line), siteLocation(newNames(), s)
	}
	if user := UserFrames(s.Native()); len(user) > 0 {
		var frames []string
		for _, f := range user {
			frames = append(frames, f.Symbol)
		}
		return "native|" + apis + "|" + strings.Join(frames, ";"), siteLocation(newNames(), s)
	}
	var nvtx []string
	for _, r := range s.NVTX() {
		var b strings.Builder
		inDigits := false
		for _, c := range r.Name {
			if c >= '0' && c <= '9' {
				if !inDigits {
					b.WriteString("#")
				}
				inDigits = true
				continue
			}
			inDigits = false
			b.WriteRune(c)
		}
		nvtx = append(nvtx, b.String())
	}
	stream := "" // the NVTX path names the place; without one, the stream does
	if len(nvtx) == 0 {
		stream = fmt.Sprint(s.Stream)
	}
	return fmt.Sprintf("api|%s|%s|%s|%s|%s", apis, s.Reason, stream, strings.Join(nvtx, "/"), s.Scope), Location{}
}

// TestSitesMatchReference groups every fixture and corpus export both ways,
// and a trace of mixed-up syncs (out of time order, odd NVTX names,
// unresolved and CUDA-library frames).
func TestSitesMatchReference(t *testing.T) {
	files, _ := filepath.Glob("../fixtures/*.sqlite*")
	corpus, _ := filepath.Glob("../../shared/corpus/*.sqlite")
	files = append(files, corpus...)
	if len(files) == 0 {
		t.Skip("no fixtures")
	}
	opt := Options{SourceRoot: ".."}
	var mixed trace.Trace
	for _, p := range files {
		x, err := trace.Open(context.Background(), p)
		if err != nil {
			continue
		}
		tr, err := x.Load(context.Background(), trace.LoadOptions{})
		x.Close()
		if err != nil {
			continue
		}
		compareSites(t, filepath.Base(p), opt, tr)
		if len(mixed.Syncs) < 5000 {
			mixed.Syncs = append(mixed.Syncs, tr.Syncs...)
		}
	}
	names := []string{"step12", "é3x\xff45", "", "a/b", "日本0"}
	for i := range mixed.Syncs {
		s := &mixed.Syncs[i]
		s.Start = int64((i * 7919) % 1013)
		if i%3 == 0 {
			n := s.NVTX()
			s.SetNVTX(append(n[:len(n):len(n)], trace.RangeRef{Name: names[i%len(names)]}))
		}
		if i%5 == 0 {
			s.SetNative(append([]trace.Frame{{Module: "libcuda.so.1", Symbol: "cuLaunch"}, {Unresolved: true}}, s.Native()...))
		}
		if n := s.Native(); i%7 == 0 && len(n) > 0 {
			s.SetNative(append(n[:len(n):len(n)], trace.Frame{Unresolved: true, Symbol: "x"}, trace.Frame{Symbol: fmt.Sprint("f", i%4)}))
		}
	}
	compareSites(t, "mixed", opt, &mixed)
}

func compareSites(t *testing.T, name string, opt Options, tr *trace.Trace) {
	t.Helper()
	// Sites are keyed by the verdicts the syncs get without CPU samples.
	bare := *tr
	bare.Syncs = slices.Clone(tr.Syncs)
	for i := range bare.Syncs {
		bare.Syncs[i].SetSamples(nil)
	}
	got, want := opt.Sites(tr), refSites(tr, opt.Verdicts(tr), opt.Verdicts(&bare))
	if len(got) != len(want) {
		t.Fatalf("%s: %d sites, reference %d", name, len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s site %d:\n got  %+v\n want %+v", name, i, got[i], want[i])
		}
	}
}

// refFingerprints is assignFingerprints the plain way: each site's base
// from its first sync, its rank the number of sites with the same base
// whose first sync ran earlier, counted pair by pair.
func refFingerprints(t *trace.Trace, sites []*Site, unsampled []Verdict) {
	nm := newNames()
	ids := newProgramIDs(t, program.Detect(t).Framework)
	bases := make([]string, len(sites))
	for k, site := range sites {
		first := site.Syncs[0]
		bases[k] = identityBase(ids, nm, &t.Syncs[first], unsampled[first].Rule, site.Phase)
	}
	for k, site := range sites {
		rank := 0
		for j := range sites {
			if bases[j] == bases[k] && sites[j].Syncs[0] < site.Syncs[0] {
				rank++
			}
		}
		h := sha256.Sum256([]byte("v2|" + bases[k] + "#" + strconv.Itoa(rank)))
		site.Fingerprint = hex.EncodeToString(h[:6])
	}
}
