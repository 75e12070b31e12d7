package classify

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nsyssync/nsyssync/trace"
)

// Options tune the classifier.
type Options struct {
	// SourceRoot is a directory holding the profiled program's sources.
	// When set, a Python frame's file is looked up under it by trying the
	// path's suffixes (see Resolve), and the program's own line decides
	// what a value read back is used for. Empty: sources are not read.
	SourceRoot string
}

// Verdict is the classifier's judgement of one sync.
type Verdict struct {
	Dependency Dependency
	Category   string
	Confidence float64
	Evidence   []string // facts, strongest first
	Fix        string
	Rule       string // the deciding rule's Name; "" when none matched
}

// maxSiteEvidence bounds a site's evidence list.
const maxSiteEvidence = 6

// Verdicts classifies every sync of the trace, in the order of t.Syncs.
// Syncs are visited in time order per thread, so a rule may look at what
// the thread's previous sync was. Syncs with the same facts (the syncs of
// one site, mostly) share one Verdict, Evidence slice included: treat the
// verdicts as read-only.
func (o Options) Verdicts(t *trace.Trace) []Verdict {
	src := newSourceReader(o.SourceRoot)
	states := map[int64]*threadState{}
	order := make([]int, len(t.Syncs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return t.Syncs[order[a]].Start < t.Syncs[order[b]].Start })
	out := make([]Verdict, len(t.Syncs))
	type decided struct {
		verdict Verdict
		rule    *Rule
	}
	memo := map[string]decided{}
	symbols := symbolIndex{}
	var key []byte
	for _, i := range order {
		s := &t.Syncs[i]
		st := states[s.GlobalTid]
		if st == nil {
			st = &threadState{}
			states[s.GlobalTid] = st
		}
		native := UserFrames(s.Native)
		nativeAt := symbols.nativeMatches(native)
		key = factsKey(key, s, nativeKey(native, nativeAt), st.printing)
		m, ok := memo[string(key)]
		if !ok {
			m.verdict, m.rule = classifySync(newFacts(s, native, nativeAt, src, st))
			memo[string(key)] = m
		}
		st.printing = m.rule != nil && m.rule.Printing
		out[i] = m.verdict
	}
	return out
}

// factsKey identifies everything the rules and the evidence read of a
// sync, so that the syncs of one site are classified once. buf is reused.
func factsKey(buf []byte, s *trace.Sync, native string, printing bool) []byte {
	b := strconv.AppendBool(buf[:0], printing)
	b = append(b, '|')
	b = append(b, s.Scope...)
	b = strconv.AppendInt(append(b, '|'), s.Stream, 10)
	b = strconv.AppendBool(append(b, '|'), s.Legacy)
	for _, c := range s.Calls {
		b = append(append(b, '|'), c.Name...)
		b = strconv.AppendInt(append(b, ','), int64(c.Kind), 10)
	}
	if c := s.Copy; c != nil {
		b = strconv.AppendBool(append(b, "|copy "...), c.Memset)
		for _, n := range []int64{int64(c.Direction), int64(c.SrcKind), int64(c.DstKind), c.Bytes} {
			b = strconv.AppendInt(append(b, ' '), n, 10)
		}
		b = strconv.AppendBool(append(b, ' '), c.FromActivity)
	}
	b = append(append(b, "|native "...), native...)
	b = append(b, "|python "...)
	for _, f := range s.Python {
		b = append(append(b, f.File...), ':')
		b = strconv.AppendInt(b, f.Line, 10)
		b = append(append(append(b, ':'), f.Function...), 0)
	}
	b = append(b, "|nvtx "...)
	for _, r := range s.NVTX {
		b = append(append(b, r.Name...), 0)
	}
	b = append(b, "|before "...)
	for _, r := range s.OpsBefore {
		b = append(append(b, r.Name...), 0)
	}
	return b
}

// classifySync applies the first rule that matches.
func classifySync(f *facts) (Verdict, *Rule) {
	for i := range Rules {
		r := &Rules[i]
		if ev, ok := r.match(f); ok {
			return r.verdict(f, ev), r
		}
	}
	v := Verdict{Dependency: DepUnknown, Category: CatUnknown, Evidence: []string{callFact(f.sync)}}
	if f.stmt != nil {
		v.Evidence = append(v.Evidence, lineEvidence(f.stmt))
	}
	return v, nil
}

// verdict builds the verdict of a matched rule: its evidence, the call
// pattern and the program's line, and the fix phrased for the site.
func (r *Rule) verdict(f *facts, ev []string) Verdict {
	ev = appendNew(ev, callFact(f.sync))
	if f.stmt != nil {
		ev = appendNew(ev, lineEvidence(f.stmt))
	}
	subject := r.Subject
	if f.stmt != nil {
		subject = fmt.Sprintf("`%s` (%s:%d)", clip(f.stmt.text), displayFile(f.stmt.file), f.stmt.line)
	}
	return Verdict{Dependency: r.Dependency, Category: r.Category, Confidence: r.Confidence, Evidence: ev,
		Fix: capitalize(strings.ReplaceAll(r.Fix, "{site}", subject)), Rule: r.Name}
}

// fillVerdict gives a site the verdict its syncs share. When they differ,
// the site's dependency and category are those all agree on (else
// unknown), and the evidence says how they split.
func fillVerdict(site *Site, vs []Verdict) {
	type group struct {
		dep   Dependency
		cat   string
		n     int
		fixes map[string]int
		first int
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, i := range site.Syncs {
		v := vs[i]
		k := string(v.Dependency) + "|" + v.Category
		g := byKey[k]
		if g == nil {
			g = &group{dep: v.Dependency, cat: v.Category, fixes: map[string]int{}, first: i}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.n++
		if v.Fix != "" {
			g.fixes[v.Fix]++
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
	for _, i := range site.Syncs {
		for _, e := range vs[i].Evidence {
			if len(evidence) >= maxSiteEvidence {
				break
			}
			evidence = appendNew(evidence, e)
		}
	}
	site.Evidence = evidence

	site.Dependency, site.Category = groups[0].dep, groups[0].cat
	site.Confidence = 1
	for _, i := range site.Syncs {
		site.Confidence = min(site.Confidence, vs[i].Confidence)
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

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
