package triage

import (
	"cmp"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/contract"
	"github.com/nsyssync/nsyssync/internal/format"
)

// SiteTotal is one site (one fingerprint) summed over the traces of a
// snapshot.
type SiteTotal struct {
	Fingerprint string   `json:"fingerprint"`
	APIs        []string `json:"apis"`
	// Location says where the site is in a few words: the program's file
	// (last two path elements) and line, else the innermost user native
	// frame, else the NVTX path.
	Location string `json:"location"`
	// Dependency and Category are the classifier's verdict; "mixed" when
	// traces disagree.
	Dependency         string `json:"dependency"`
	Category           string `json:"category"`
	Traces             int    `json:"traces"`
	Count              int    `json:"count"`
	BlockedNs          int64  `json:"blocked_ns"`
	EstimatedSavingsNs int64  `json:"estimated_savings_ns"`
	// TracePaths are the traces the site was found in, as their results
	// name them (batch: the input as given; a recorded run: the path
	// recorded), in the order they were added.
	TracePaths []string `json:"trace_paths"`
}

// Snapshot is what one side of a comparison holds: the sites of a set of
// traces (one export, one JSON report, one recorded run), by fingerprint.
type Snapshot struct {
	// Label names the snapshot in reports (a path, "run 3").
	Label string
	// Traces analysed, and inputs that failed.
	Traces, Failed     int
	Syncs              int
	BlockedNs          int64
	EstimatedSavingsNs int64
	Sites              map[string]*SiteTotal
	// Failures are the inputs that could not be analysed.
	Failures []Failure
}

// NewSnapshot returns an empty snapshot.
func NewSnapshot(label string) *Snapshot {
	return &Snapshot{Label: label, Sites: map[string]*SiteTotal{}}
}

// AddResult adds an analysed trace, or counts a failed one.
func (s *Snapshot) AddResult(r Result) {
	if r.Err != nil || r.Doc == nil {
		s.Failed++
		msg := "no document"
		if r.Err != nil {
			msg = r.Err.Error()
		}
		s.Failures = append(s.Failures, Failure{Path: r.Path, Error: msg})
		return
	}
	s.AddDocument(r.Doc)
}

// AddDocument adds a trace's sites.
func (s *Snapshot) AddDocument(d *contract.Document) {
	s.Traces++
	s.Syncs += d.Totals.Syncs
	s.BlockedNs += d.Totals.BlockedNs
	s.EstimatedSavingsNs += d.Totals.EstimatedSavingsNs
	inTrace := map[string]bool{}
	for i := range d.Sites {
		site := &d.Sites[i]
		s.add(SiteTotal{Fingerprint: site.Fingerprint, APIs: site.APIs, Location: Where(site), Dependency: site.Dependency,
			Category: site.Category, Count: site.Count, BlockedNs: site.BlockedNs, EstimatedSavingsNs: site.EstimatedSavingsNs,
			TracePaths: []string{d.Trace.Path}}, !inTrace[site.Fingerprint])
		inTrace[site.Fingerprint] = true
	}
}

// add merges one trace's share of a site; newTrace counts the trace.
func (s *Snapshot) add(st SiteTotal, newTrace bool) {
	t := s.Sites[st.Fingerprint]
	if t == nil {
		st.Traces = 0
		t = &st
		s.Sites[st.Fingerprint] = t
	} else {
		t.Count += st.Count
		t.BlockedNs += st.BlockedNs
		t.EstimatedSavingsNs += st.EstimatedSavingsNs
		t.Dependency = agree(t.Dependency, st.Dependency)
		t.Category = agree(t.Category, st.Category)
		if newTrace {
			t.TracePaths = append(t.TracePaths, st.TracePaths...)
		}
	}
	if newTrace {
		t.Traces++
	}
}

func agree(a, b string) string {
	if a == b {
		return a
	}
	return "mixed"
}

// Ordered returns the sites that cost most first: largest estimated
// savings, then largest blocked time, then fingerprint.
func (s *Snapshot) Ordered() []*SiteTotal {
	out := make([]*SiteTotal, 0, len(s.Sites))
	for _, t := range s.Sites {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *SiteTotal) int {
		return cmp.Or(cmp.Compare(b.EstimatedSavingsNs, a.EstimatedSavingsNs), cmp.Compare(b.BlockedNs, a.BlockedNs),
			strings.Compare(a.Fingerprint, b.Fingerprint))
	})
	return out
}

// Widespread returns the sites seen in at least two traces, in the most
// traces first (then by cost).
func (s *Snapshot) Widespread() []*SiteTotal {
	out := slices.DeleteFunc(s.Ordered(), func(t *SiteTotal) bool { return t.Traces < 2 })
	slices.SortStableFunc(out, func(a, b *SiteTotal) int { return cmp.Compare(b.Traces, a.Traces) })
	return out
}

// Where says where a site of the contract is, in a few words that do not
// depend on the machine: the program's file (its last two path elements)
// and line with the function, else the innermost user native frame, else
// the NVTX path.
func Where(s *contract.SiteJSON) string {
	loc := s.Location
	if loc.File != "" {
		w := path.Join(format.PathTail(loc.File, 2)...) + ":" + strconv.FormatInt(loc.Line, 10)
		if loc.Function != "" {
			w += " " + loc.Function
		}
		return w
	}
	if len(loc.Frames) > 0 {
		return loc.Frames[0]
	}
	if len(s.NVTX) > 0 {
		return "nvtx " + nvtxWhere(s.NVTX)
	}
	return ""
}

// Limits of an NVTX path in a location: some tools name ranges with whole
// JSON documents.
const (
	maxNVTXRanges    = 3
	maxNVTXNameRunes = 40
)

// nvtxWhere writes the innermost ranges of an NVTX path, each name cut
// short.
func nvtxWhere(path []string) string {
	var parts []string
	if len(path) > maxNVTXRanges {
		parts = append(parts, "…")
		path = path[len(path)-maxNVTXRanges:]
	}
	for _, name := range path {
		if r := []rune(name); len(r) > maxNVTXNameRunes {
			name = string(r[:maxNVTXNameRunes-1]) + "…"
		}
		parts = append(parts, name)
	}
	return strings.Join(parts, " > ")
}
