package report

import (
	"strings"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/internal/words"
)

// IdleAfterLegend says what the GPU IDLE AFTER column of LONGEST SYNCS
// holds, "busy" and "end" included (trace.Gap: the ops of the sync's
// process on the sync's device).
const IdleAfterLegend = "GPU IDLE AFTER: time from the sync's return to its process's next GPU work on its device; " +
	"busy: that work was still running when the sync returned (no gap); end: none followed."

// idleAfterLegendHTML is IdleAfterLegend for the HTML report's sections,
// which say "GPU idle after" in a sentence.
const idleAfterLegendHTML = "GPU idle after: time from the sync's return to its process's next GPU work on its device; " +
	"busy: that work was still running when the sync returned (no gap); end: none followed."

// plural is n with the noun that fits it: "1 site", "2 sites".
func plural(n int, one, many string) string { return words.Count(n, one, many) }

// noun is the form of a noun that fits a count of n.
func noun(n int, one, many string) string { return words.Noun(n, one, many) }

// categoryAbbrev shortens the long words of a category for a narrow
// table; the TOP SITES details spell the category out.
var categoryAbbrev = strings.NewReplacer("host-to-device", "HtoD", "device-to-host", "DtoH", "device-to-device", "DtoD",
	"management", "mgmt")

// categoryCell is a category with its abbreviation as the alternative for
// a narrow table (altSep).
func categoryCell(cat string) string {
	if short := categoryAbbrev.Replace(cat); short != cat {
		return cat + altSep + short
	}
	return cat
}

// savingsCell is a site's savings, without the share of the region (its
// interval kept) as the alternative for a narrow table (altSep).
func (a *Analysis) savingsCell(s *classify.Site) string {
	text := a.savingsText(s)
	head, rest, ok := strings.Cut(text, " (")
	if !ok || !strings.Contains(rest, "%)") {
		return text
	}
	short := head
	if interval, _, ok := strings.Cut(rest, ", "); ok { // "1.87–1.96ms, 2.7%)"
		short += " (" + interval + ")"
	}
	if strings.HasSuffix(rest, " sampled") {
		short += " sampled"
	}
	return text + altSep + short
}

// shortFunction drops a C++ function's parameter list ("copy(int, long)"
// → "copy(…)"), for a narrow table.
func shortFunction(fn string) string {
	if i := strings.IndexByte(fn, '('); i > 0 && strings.HasSuffix(strings.TrimSpace(fn), ")") && i < len(fn)-2 {
		return fn[:i] + "(…)"
	}
	return fn
}

// compactRange drops the sequence numbers the PyTorch profiler's NVTX
// emitter appends to an op's range ("aten::copy_, seq = 12, op_id = 3"
// → "aten::copy_"), for a narrow table.
func compactRange(name string) string {
	for _, suffix := range []string{", seq = ", ", op_id = ", ", sizes = "} {
		if i := strings.Index(name, suffix); i > 0 {
			name = name[:i]
		}
	}
	return name
}

// shortAPIs names a site's calls in a narrow table: the first, "+…" when
// there are more.
func shortAPIs(apis []string) string {
	switch len(apis) {
	case 0:
		return ""
	case 1:
		return apis[0]
	}
	return apis[0] + "+…"
}
