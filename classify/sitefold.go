package classify

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// tally is one distinct verdict of a site's syncs and how many share it.
type tally struct {
	id int32 // index into the verdict table
	n  int
}

// tallier counts the distinct verdicts of each site's syncs, reusing its
// memory from site to site.
type tallier struct {
	slot []int32 // per verdict id, 1 + its index in out; 0: not seen
	out  []tally
}

func newTallier(verdicts int) *tallier { return &tallier{slot: make([]int32, verdicts)} }

// tally lists the distinct verdicts of syncs in order of first appearance,
// with their counts. The result is valid until the next call.
func (tl *tallier) tally(syncs []int, ids []int32) []tally {
	for _, x := range tl.out {
		tl.slot[x.id] = 0
	}
	tl.out = tl.out[:0]
	for _, i := range syncs {
		id := ids[i]
		if j := tl.slot[id]; j > 0 {
			tl.out[j-1].n++
			continue
		}
		tl.out = append(tl.out, tally{id: id, n: 1})
		tl.slot[id] = int32(len(tl.out))
	}
	return tl.out
}

// fillVerdict gives a site the verdict its syncs share — tallies are their
// distinct verdicts in order of first appearance. When they differ, the
// site's dependency and category are those all agree on (else unknown),
// and the evidence says how they split.
func fillVerdict(site *Site, tallies []tally, table []Verdict) {
	type group struct {
		dep   Dependency
		cat   string
		n     int
		fixes map[string]int
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, tl := range tallies {
		v := &table[tl.id]
		k := string(v.Dependency) + "|" + v.Category
		g := byKey[k]
		if g == nil {
			g = &group{dep: v.Dependency, cat: v.Category, fixes: map[string]int{}}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.n += tl.n
		if v.Fix != "" {
			g.fixes[v.Fix] += tl.n
		}
	}
	sort.SliceStable(groups, func(a, b int) bool { return groups[a].n > groups[b].n })

	var evidence []string
	if len(groups) > 1 {
		var parts []string
		for _, g := range groups {
			parts = append(parts, fmt.Sprintf("%d × %s/%s", g.n, g.dep, g.cat))
		}
		evidence = append(evidence, "the syncs of this site differ: "+strings.Join(parts, ", "))
	}
	// A verdict seen before adds no evidence: what it had is in already,
	// or the list was full.
	site.SourceFile = ""
	sourceLine := ""
	for _, tl := range tallies {
		v := &table[tl.id]
		if site.SourceFile == "" && v.SourceFile != "" {
			site.SourceFile = v.SourceFile
		}
		for _, e := range v.Evidence {
			if sourceLine == "" && site.SourceFile != "" && strings.HasPrefix(e, sourcePrefix) {
				sourceLine = e
			}
			if len(evidence) >= maxSiteEvidence {
				break
			}
			evidence = appendNew(evidence, e)
		}
	}
	// The file the program's line came from always shows, last.
	if sourceLine != "" && !slices.Contains(evidence, sourceLine) {
		if len(evidence) >= maxSiteEvidence {
			evidence = evidence[:maxSiteEvidence-1]
		}
		evidence = append(evidence, sourceLine)
	}
	site.Evidence = evidence

	site.Dependency, site.Category = groups[0].dep, groups[0].cat
	site.Confidence = 1
	site.Basis = BasisSource
	for _, tl := range tallies {
		site.Confidence = min(site.Confidence, table[tl.id].Confidence)
		site.Basis = weaker(site.Basis, table[tl.id].Basis)
	}
	for _, g := range groups[1:] {
		if g.dep != site.Dependency {
			site.Dependency = DepUnknown
		}
		if g.cat != site.Category {
			site.Category = CatUnknown
		}
	}
	if site.Dependency == DepUnknown || site.Category == CatUnknown {
		site.Confidence = 0
	}
	var fixes []string
	for _, g := range groups {
		fix := mostCommon(g.fixes)
		if fix == "" {
			continue
		}
		if len(groups) > 1 {
			fix = fmt.Sprintf("For the %d %s syncs: %s", g.n, g.cat, fix)
		}
		fixes = appendNew(fixes, fix)
	}
	site.Fix = strings.Join(fixes, " ")
}

func mostCommon(m map[string]int) string {
	best, n := "", 0
	for k, c := range m {
		if c > n || (c == n && k < best) {
			best, n = k, c
		}
	}
	return best
}
