package classify

import (
	"slices"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// The NVTX path a site shows: Site.NVTX folds digits ("Batch #") so that
// iterations share a site, but a folded name is not one the program
// wrote, and --nvtx does not find it. A site therefore also keeps the
// path of its first sync as written (Site.NVTXShown) and how many other
// paths as written fold to the same (Site.NVTXOthers), so that a report
// can say "Batch 17 (and 41 more like it)".

// nvtxShown names the enclosing NVTX ranges outer to inner as written,
// at most maxNameBytes of each.
func nvtxShown(s *trace.Sync) []string {
	var out []string
	for _, r := range s.NVTX() {
		out = append(out, shownName(r.Name))
	}
	return out
}

// fillNVTXShown sets the site's NVTX path as written (its first sync's)
// and counts the other paths as written among its syncs. Only a site
// whose folded path differs from the written one can have others: the
// count is made for those alone.
func fillNVTXShown(site *Site, t *trace.Trace) {
	if len(site.Syncs) == 0 {
		return
	}
	site.NVTXShown = nvtxShown(&t.Syncs[site.Syncs[0]])
	if slices.Equal(site.NVTXShown, site.NVTX) {
		return
	}
	seen := map[*trace.RangeRef]bool{}
	paths := map[string]bool{}
	var key strings.Builder
	for _, i := range site.Syncs {
		ranges := t.Syncs[i].NVTX()
		if len(ranges) > 0 {
			// Syncs inside the same ranges share one list: read it once.
			if seen[&ranges[0]] {
				continue
			}
			seen[&ranges[0]] = true
		}
		key.Reset()
		for _, r := range ranges {
			key.WriteString(shownName(r.Name))
			key.WriteByte(0)
		}
		paths[key.String()] = true
	}
	site.NVTXOthers = len(paths) - 1
}
