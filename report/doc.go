// Package report renders an analysed trace for people and for tools:
//
//   - the terminal report (lipgloss; colour only on a terminal),
//   - GitHub-flavoured Markdown, ready to paste into a ticket or
//     $GITHUB_STEP_SUMMARY,
//   - the versioned JSON contract (nsyssync/v1, package contract) that CI
//     scripts read, filled from the analysis and streamed,
//   - a self-contained HTML page with a timeline picture of each top site,
//   - a Chrome-trace JSON of the region for ui.perfetto.dev.
//
// It also holds the doctor's diagnosis of what an export contains. The CI
// gate and the allow-list are package gate; a site's fingerprint is
// package classify's.
//
// Every renderer reads an *Analysis and nothing else, and every output is
// deterministic: the same export gives the same bytes.
package report

import (
	"cmp"
	"slices"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/program"
	"github.com/nsyssync/nsyssync/trace"
)

// Analysis is what the renderers show: one trace, its sites and, once they
// are computed, the savings estimates and the allow-list's decisions.
type Analysis struct {
	Trace *trace.Trace
	// Sites as classify returns them (largest blocked time first).
	Sites []classify.Site
	// Estimates holds the estimator's savings; nil until it ran.
	Estimates *Estimates
	// Allowed maps the IDs of the sites an allow-list accepts to the
	// reason it gives.
	Allowed map[string]string
	// NoEstimate says why no savings were estimated ("" when they were, or
	// when no reason is known): the export has no GPU activity, say.
	NoEstimate string
	// Program is what kind of program the trace profiled (package
	// program); NewWith detects it.
	Program program.Program
}

// New groups the trace's syncs into sites, classifies them, and wraps both
// for rendering.
func New(t *trace.Trace) *Analysis {
	return NewWith(t, classify.Options{})
}

// NewWith is New with classifier options (a source root for Python lines).
func NewWith(t *trace.Trace, opt classify.Options) *Analysis {
	if opt.Program == nil {
		p := program.Detect(t)
		opt.Program = &p
	}
	return &Analysis{Trace: t, Sites: opt.Sites(t), Program: *opt.Program}
}

// Ordered returns the sites in report order: largest estimated savings
// first, then largest blocked time (the order classify gives), so that
// without estimates the order is classify's; the sites of set-up,
// tear-down and the profiler, which no total counts, last.
func (a *Analysis) Ordered() []*classify.Site {
	out := make([]*classify.Site, len(a.Sites))
	for i := range a.Sites {
		out[i] = &a.Sites[i]
	}
	slices.SortStableFunc(out, func(x, y *classify.Site) int {
		if c := cmp.Compare(phaseRank(x), phaseRank(y)); c != 0 {
			return c
		}
		return cmp.Compare(a.SavingsNs(y), a.SavingsNs(x))
	})
	return out
}

// siteIndex maps each sync index to its site's index in a.Sites, -1 when
// no site holds it (the last site, should two).
func (a *Analysis) siteIndex() []int32 {
	out := make([]int32, len(a.Trace.Syncs))
	for i := range out {
		out[i] = -1
	}
	for si := range a.Sites {
		for _, i := range a.Sites[si].Syncs {
			if i >= 0 && i < len(out) {
				out[i] = int32(si)
			}
		}
	}
	return out
}

// siteID names the site of sync i by siteIndex's map, "" when none.
func (a *Analysis) siteID(index []int32, i int) string {
	if si := index[i]; si >= 0 {
		return a.Sites[si].ID
	}
	return ""
}

// dependencyText is how reports write a site's dependency: "likely
// false" when only the call pattern suggests it (classify.Site.Likely).
func dependencyText(s *classify.Site) string {
	if s.Likely() {
		return "likely " + string(s.Dependency)
	}
	return string(s.Dependency)
}

// siteByID finds a site by its ID.
func (a *Analysis) siteByID(id string) *classify.Site {
	for i := range a.Sites {
		if a.Sites[i].ID == id {
			return &a.Sites[i]
		}
	}
	return nil
}

// GPUName names the GPU(s) the trace ran on.
func (a *Analysis) GPUName() string {
	gpus := a.Trace.UsedGPUs()
	if len(gpus) == 0 {
		return ""
	}
	name := gpus[0].Name
	same := 0
	for _, g := range gpus {
		if g.Name == name {
			same++
		}
	}
	if len(gpus) > 1 && same == len(gpus) {
		return itoa(len(gpus)) + "x " + name
	}
	return name
}

// RegionName describes the analysed region in a few words.
func (a *Analysis) RegionName() string {
	r := a.Trace.Region
	if r.Name == "" {
		return "whole trace"
	}
	name := "NVTX " + quote(r.Name)
	if r.Domain != "" {
		name += " in domain " + quote(r.Domain)
	}
	if len(r.Intervals) > 1 {
		name += " (" + itoa(len(r.Intervals)) + " occurrences)"
	}
	return name
}

// fraction is part/whole, 0 when whole is not positive.
func fraction(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

// phaseRank puts the sites every total counts first.
func phaseRank(s *classify.Site) int {
	if s.Phase.Counted() {
		return 0
	}
	return 1
}
