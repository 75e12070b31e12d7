package report

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/classify"
)

// NVTX names in reports. A site is grouped by its NVTX path with digits
// folded ("Epoch # > Batch #"), but reports show the path of its first
// sync as the program wrote it, so that a name copied from a report works
// with --nvtx, and say how many other paths fold to it:
// "Epoch 3 > Train > Batch 17 (and 41 more like it)".

// maxMarkerRunes is the longest NVTX name a report shows whole; a longer
// one is clipped. maxStructuredRunes is the longest structured marker
// (tools such as DLProf name ranges with whole JSON or Python documents)
// shown whole; a longer one is shown by its name field.
const (
	maxMarkerRunes     = 100
	maxStructuredRunes = 40
)

// markerNameKeys are the fields that name a structured marker, in the
// order they are tried.
var markerNameKeys = []string{"name", "Name", "op", "Op", "funcStack"}

// markerField finds a quoted field of a structured marker that is not
// strict JSON (a Python dict's repr, as DLProf writes): 'op': 'conv2d'.
var markerField = regexp.MustCompile(`['"](name|Name|op|Op|mod|funcStack)['"]\s*:\s*['"]([^'"]+)['"]`)

// markerName is the form of an NVTX range name a report shows: the name
// itself when short; a structured marker's name field followed by "{…}";
// else the head of the name and an ellipsis.
func markerName(name string) string {
	runes := len([]rune(name))
	if runes <= maxStructuredRunes {
		return name
	}
	if trimmed := strings.TrimSpace(name); strings.HasPrefix(trimmed, "{") {
		if n := structuredName(trimmed); n != "" {
			return n + " {…}"
		}
	}
	if runes <= maxMarkerRunes {
		return name
	}
	r := []rune(name)
	return string(r[:maxMarkerRunes-1]) + "…"
}

// structuredName reads the name field of a JSON object, or of a Python
// dict's repr; "" when it has none.
func structuredName(doc string) string {
	fields := map[string]string{}
	var obj map[string]any
	if err := json.Unmarshal([]byte(doc), &obj); err == nil {
		for k, v := range obj {
			if s, ok := v.(string); ok {
				fields[k] = s
			}
		}
	} else {
		for _, m := range markerField.FindAllStringSubmatch(doc, -1) {
			if _, ok := fields[m[1]]; !ok {
				fields[m[1]] = m[2]
			}
		}
	}
	if mod, op := strings.TrimSpace(fields["mod"]), strings.TrimSpace(fields["op"]); mod != "" && op != "" &&
		len([]rune(mod))+len([]rune(op)) < maxStructuredRunes {
		return mod + "." + op
	}
	for _, k := range markerNameKeys {
		v := strings.TrimSpace(fields[k])
		if k == "funcStack" {
			// A call path: its innermost function names the range.
			v = v[strings.LastIndexByte(v, '/')+1:]
		}
		if v != "" && len([]rune(v)) <= maxStructuredRunes {
			return v
		}
	}
	return ""
}

// nvtxNames is the site's NVTX path as a report shows it: its first
// sync's names as written, each long marker shortened to its name.
func nvtxNames(s *classify.Site) []string {
	names := s.NVTXShown
	if len(names) != len(s.NVTX) {
		names = s.NVTX
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = markerName(n)
	}
	return out
}

// nvtxOthers says how many other NVTX paths as written the site groups:
// " (and 41 more like it)"; "" when none.
func nvtxOthers(s *classify.Site) string {
	if s.NVTXOthers <= 0 || len(s.NVTXShown) != len(s.NVTX) {
		return ""
	}
	return " (and " + strconv.Itoa(s.NVTXOthers) + " more like it)"
}

// nvtxText is the site's NVTX path in one line, outer to inner, with the
// count of the other paths it groups.
func nvtxText(s *classify.Site) string {
	return strings.Join(nvtxNames(s), " > ") + nvtxOthers(s)
}
