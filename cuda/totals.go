package cuda

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/trace"
)

// Bounds of a site that copies data the host uses (SiteReplay.Bound), as
// the simulator names them, and the replay's own for a site whose bound
// it was not given.
const (
	BoundCopyOverlap = "copy-overlap" // counted: the copy-overlap bound, below the measured saving
	BoundDelete      = "delete"       // counted: the measured saving, at most the bound
	BoundUnmeasured  = "unmeasured"   // counted: 0; no bound was given, and the copy stays
)

// GroupsOf turns sites into the groups a replay removes, each with
// classify's decision on how its saving counts (Site.Counting).
func GroupsOf(sites []classify.Site) []Group {
	groups := make([]Group, len(sites))
	for i := range sites {
		s := &sites[i]
		groups[i] = Group{ID: s.ID, Syncs: s.Syncs, Counting: s.Counting(), Phase: string(s.Phase), HostRead: s.HostRead != ""}
	}
	return groups
}

// copyBounds gives each group of a site that copies data the host uses
// the simulator's copy-overlap bound (the same model, so the replay's
// total bounds those sites as the simulator's does); without GPU
// activity the simulator cannot bound them and they count 0.
func copyBounds(ctx context.Context, x *trace.Export, t *trace.Trace, sites []classify.Site, groups []Group) error {
	var bounded []classify.Site
	for i := range sites {
		if groups[i].Counting == classify.CountBounded {
			bounded = append(bounded, sites[i])
		}
	}
	if len(bounded) == 0 || estimate.Unestimable(t) != "" {
		return nil
	}
	est, err := estimate.Run(ctx, x, t, bounded, estimate.Options{FalseSites: []string{}})
	if err != nil {
		return fmt.Errorf("bounding the sites that copy needed data: %w", err)
	}
	for _, e := range est.Sites {
		for i := range groups {
			if groups[i].ID == e.ID {
				b := e.CopyOverlapBoundNs
				groups[i].CopyBoundNs = &b
			}
		}
	}
	return nil
}

// Total is the replay's removable total: the sites that count whole
// removed together (one plan), plus the bounded savings of the sites that
// copy data the host uses. Sites of set-up, tear-down or the profiler
// are never in it, as in the simulator's scenarios.
type Total struct {
	// SiteIDs are the sites replayed removed together; Syncs their syncs.
	SiteIDs []string `json:"site_ids"`
	Syncs   int      `json:"syncs"`
	// SavedNs: the median saving of the plan without SiteIDs' syncs,
	// plus each bounded site's CountedNs; SavedFraction of BaselineNs.
	SavedNs         int64    `json:"measured_savings_ns"`
	SavedFraction   float64  `json:"measured_savings_fraction"`
	ExcludedSiteIDs []string `json:"excluded_site_ids,omitempty"`
	BoundedSiteIDs  []string `json:"bounded_site_ids,omitempty"`
}

// wholeGroups returns the indices of the groups that count whole: the
// ones a total replays removed together.
func wholeGroups(groups []Group) []int {
	var out []int
	for i, g := range groups {
		if g.Counting == classify.CountWhole {
			out = append(out, i)
		}
	}
	return out
}

// jointRemove is what the total's plan removes: every whole group's syncs
// (nil when fewer than two: a single group's own plan measures it).
func jointRemove(groups []Group) [][]int {
	whole := wholeGroups(groups)
	if len(whole) < 2 {
		return nil
	}
	out := make([][]int, len(whole))
	for k, i := range whole {
		out[k] = groups[i].Syncs
	}
	return out
}

// count sets what site s, measured removing g, adds to a removable
// total: all of it, nothing for a phase site, at most the copy-overlap
// bound for a site that copies data the host uses.
func count(g Group, s *SiteReplay) {
	s.CountedNs = s.SavedNs
	switch g.Counting {
	case classify.CountNone:
		s.Phase, s.HostRead, s.CountedNs = g.Phase, g.HostRead, 0
	case classify.CountBounded:
		switch {
		case g.CopyBoundNs == nil:
			s.Bound, s.CountedNs = BoundUnmeasured, 0
		case *g.CopyBoundNs < s.SavedNs:
			s.Bound, s.CountedNs = BoundCopyOverlap, *g.CopyBoundNs
		default:
			s.Bound = BoundDelete
		}
	}
}

// total sums the replay's removable total: jointNs is the measured saving
// of the plan without every whole group's syncs (used with two or more).
func total(groups []Group, sites []SiteReplay, jointNs int64, baselineNs int64) Total {
	var t Total
	whole := wholeGroups(groups)
	for i, g := range groups {
		switch g.Counting {
		case classify.CountNone:
			t.ExcludedSiteIDs = append(t.ExcludedSiteIDs, g.ID)
		case classify.CountBounded:
			t.BoundedSiteIDs = append(t.BoundedSiteIDs, g.ID)
			t.SavedNs += sites[i].CountedNs
		default:
			t.SiteIDs = append(t.SiteIDs, g.ID)
			t.Syncs += sites[i].Syncs
		}
	}
	switch len(whole) {
	case 0:
	case 1:
		t.SavedNs += sites[whole[0]].SavedNs
	default:
		t.SavedNs += jointNs
	}
	if baselineNs > 0 {
		t.SavedFraction = float64(t.SavedNs) / float64(baselineNs)
	}
	return t
}

// CountNote says, for a site's row, how its saving counts in the total
// ("" when whole).
func (s SiteReplay) CountNote() string {
	switch {
	case s.Phase != "":
		return fmt.Sprintf("not counted (%s)", classify.Phase(s.Phase).Label())
	case s.HostRead:
		return "not counted (may guard a host read of managed or mapped memory)"
	case s.Bound == BoundUnmeasured:
		return "not counted (needed data: the copy stays)"
	case s.Bound != "":
		return fmt.Sprintf("counts %s (needed data, %s bound)", time.Duration(s.CountedNs).Round(time.Microsecond), s.Bound)
	}
	return ""
}

// Note says which sites the total bounds or leaves out ("" when none),
// for the line after the sites.
func (t Total) Note() string {
	var s string
	if len(t.BoundedSiteIDs) > 0 {
		s += fmt.Sprintf("; bounded (needed data): %s", strings.Join(t.BoundedSiteIDs, ", "))
	}
	if len(t.ExcludedSiteIDs) > 0 {
		s += fmt.Sprintf("; not counted (set-up, tear-down, profiler, host reads): %s", strings.Join(t.ExcludedSiteIDs, ", "))
	}
	return s
}
