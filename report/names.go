package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
)

// DirectionName names a copy's direction ("DtoH", "memset", …).
func DirectionName(c *trace.Copy) string {
	if c.Memset {
		return "memset"
	}
	switch c.Direction {
	case trace.CopyHtoD:
		return "HtoD"
	case trace.CopyDtoH:
		return "DtoH"
	case trace.CopyDtoD:
		return "DtoD"
	case trace.CopyHtoH:
		return "HtoH"
	case trace.CopyPtoP:
		return "PtoP"
	case trace.CopyUnknown:
		return "unknown"
	}
	return fmt.Sprintf("kind%d", c.Direction)
}

// MemName names a memory kind.
func MemName(k trace.MemKind) string { return k.String() }

// Duration formats nanoseconds for people: 812ns, 14.2µs, 3.41ms, 2.07s.
func Duration(ns int64) string {
	switch {
	case ns < 0:
		return "-"
	case ns < 1_000:
		return fmt.Sprintf("%dns", ns)
	case ns < 1_000_000:
		return fmt.Sprintf("%.1fµs", float64(ns)/1e3)
	case ns < 1_000_000_000:
		return fmt.Sprintf("%.2fms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.2fs", float64(ns)/1e9)
}

func itoa(n int) string { return strconv.Itoa(n) }

func quote(s string) string { return strconv.Quote(s) }

// percent formats part as a percentage of whole, "-" when whole is not
// positive.
func percent(part, whole int64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

// shortPath keeps the end of a path that says the most: the part after
// site-packages, else the last two elements.
func shortPath(p string) string {
	if i := strings.LastIndex(p, "/site-packages/"); i >= 0 {
		return p[i+len("/site-packages/"):]
	}
	if parts := strings.Split(p, "/"); len(parts) > 3 {
		return ".../" + strings.Join(parts[len(parts)-2:], "/")
	}
	return p
}

// Where names a site's location in one short line.
func Where(s *classify.Site) string {
	switch {
	case s.Location.File != "":
		return fmt.Sprintf("%s:%d %s", shortPath(s.Location.File), s.Location.Line, s.Location.Function)
	case s.Location.Function != "":
		return s.Location.Function
	case len(s.NVTX) > 0:
		return "nvtx " + strings.Join(s.NVTX, " > ")
	}
	return s.Reason
}

// siteLabel names a site in a table: its program location, else its APIs
// and whatever else tells it apart (NVTX path, stream).
func siteLabel(s *classify.Site) string {
	if s.Location.File != "" || s.Location.Function != "" {
		return Where(s)
	}
	label := strings.Join(s.APIs, "+")
	if len(s.NVTX) > 0 {
		label += " in " + strings.Join(s.NVTX, " > ")
	}
	return label
}

// What describes a sync in a few words.
func What(s *trace.Sync) string {
	var parts []string
	parts = append(parts, strings.Join(s.APIs(), "+"))
	switch {
	case s.Scope == trace.ScopeContext:
		parts = append(parts, "all streams")
	case s.Legacy:
		parts = append(parts, fmt.Sprintf("legacy stream %d", s.Stream))
	case s.Stream >= 0:
		parts = append(parts, fmt.Sprintf("stream %d", s.Stream))
	}
	if c := s.Copy; c != nil && c.FromActivity {
		parts = append(parts, fmt.Sprintf("%s %s→%s %dB", DirectionName(c), MemName(c.SrcKind), MemName(c.DstKind), c.Bytes))
	}
	return strings.Join(parts, ", ")
}

func waited(s *trace.Sync) string {
	if s.Waited.Ops == 0 {
		return "nothing"
	}
	return fmt.Sprintf("%d ops, %s", s.Waited.Ops, Duration(s.Waited.BusyNs))
}

func idleAfter(s *trace.Sync) string {
	switch {
	case s.Gap.DeviceBusy:
		return "busy"
	case s.Gap.IdleAfterNs < 0:
		return "end"
	}
	return Duration(s.Gap.IdleAfterNs)
}

// meanNs is a site's mean blocked time per sync.
func meanNs(s *classify.Site) int64 {
	if len(s.Syncs) == 0 {
		return 0
	}
	return s.BlockedNs / int64(len(s.Syncs))
}
