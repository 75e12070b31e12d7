package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/internal/format"
	"github.com/nsyssync/nsyssync/internal/textsafe"
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

func itoa(n int) string { return strconv.Itoa(n) }

func quote(s string) string { return strconv.Quote(s) }

// shortPath keeps the end of a path that says the most: the part after
// site-packages, else the last two elements; at most MaxDisplay
// characters of it, so that a site's label costs the same however long
// the trace's name.
func shortPath(p string) string {
	if i := strings.LastIndex(p, "/site-packages/"); i >= 0 {
		return textsafe.Shorten(p[i+len("/site-packages/"):], textsafe.MaxDisplay)
	}
	if strings.Count(p, "/") >= 3 {
		tail := format.PathTail(p, 2)
		return ".../" + textsafe.Shorten(p[len(p)-len(tail[0])-len(tail[1])-1:], textsafe.MaxDisplay)
	}
	return textsafe.Shorten(p, textsafe.MaxDisplay)
}

// Where names a site's location in one short line, of bounded length.
func Where(s *classify.Site) string {
	switch {
	case s.Location.File != "":
		return fmt.Sprintf("%s:%d %s", shortPath(s.Location.File), s.Location.Line, textsafe.Shorten(s.Location.Function, textsafe.MaxDisplay))
	case s.Location.Function != "":
		return textsafe.Shorten(s.Location.Function, textsafe.MaxDisplay)
	case len(s.NVTX) > 0:
		names := nvtxNames(s)
		for i, n := range names {
			names[i] = textsafe.Shorten(n, textsafe.MaxDisplay)
		}
		return textsafe.Shorten("nvtx "+strings.Join(names, " > ")+nvtxOthers(s), textsafe.MaxDisplay)
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
		label += " in " + nvtxText(s)
	}
	return label
}

// WhatShort describes a sync in fewer words than What, for a narrow
// table: its first call ("+…" when it made more), then what tells syncs
// of one call apart: copy direction and size, and stream
// ("cudaMemcpyAsync+… HtoD 1.0 MB s7").
func WhatShort(s *trace.Sync) string {
	return whatShortCalls(s) + whatShortRest(s)
}

// whatShortCalls is the head of WhatShort: the first call, "+…" when
// there are more.
func whatShortCalls(s *trace.Sync) string {
	calls := s.Calls()
	if len(calls) == 0 {
		return ""
	}
	head := textsafe.Bound(calls[0].Name)
	if len(calls) > 1 {
		head += "+…"
	}
	return head
}

// whatShortRest is the rest of WhatShort: copy direction and size, stream.
func whatShortRest(s *trace.Sync) string {
	var b []byte
	if c := s.Copy; c != nil && c.FromActivity {
		b = append(append(append(b, ' '), DirectionName(c)...), ' ')
		b = append(b, bytesText(c.Bytes)...)
	}
	switch {
	case s.Scope == trace.ScopeContext:
		b = append(b, " all streams"...)
	case s.Legacy:
		b = append(b, " legacy stream"...)
	case s.Stream >= 0:
		b = strconv.AppendInt(append(b, " s"...), int64(s.Stream), 10)
	}
	return string(b)
}

// What describes a sync in a few words.
func What(s *trace.Sync) string { return string(appendWhat(nil, s)) }

// appendWhat appends What(s).
func appendWhat(b []byte, s *trace.Sync) []byte {
	for i, c := range s.Calls() {
		if i > 0 {
			b = append(b, '+')
		}
		// A name of the export is bounded (textsafe.Bound): What goes into
		// every sync's Perfetto event.
		b = append(b, textsafe.Bound(c.Name)...)
	}
	switch {
	case s.Scope == trace.ScopeContext:
		b = append(b, ", all streams"...)
	case s.Legacy:
		b = strconv.AppendInt(append(b, ", legacy stream "...), int64(s.Stream), 10)
	case s.Stream >= 0:
		b = strconv.AppendInt(append(b, ", stream "...), int64(s.Stream), 10)
	}
	if c := s.Copy; c != nil && c.FromActivity {
		b = append(append(append(b, ", "...), DirectionName(c)...), ' ')
		b = append(append(append(b, MemName(c.SrcKind)...), "→"...), MemName(c.DstKind)...)
		b = append(strconv.AppendInt(append(b, ' '), c.Bytes, 10), 'B')
	}
	return b
}

func waited(s *trace.Sync) string { return string(appendWaited(nil, s)) }

// appendWaited appends waited(s).
func appendWaited(b []byte, s *trace.Sync) []byte {
	if s.Waited.Ops == 0 {
		return append(b, "nothing"...)
	}
	b = strconv.AppendInt(b, int64(s.Waited.Ops), 10)
	if s.Waited.Ops == 1 {
		b = append(b, " op, "...)
	} else {
		b = append(b, " ops, "...)
	}
	return format.AppendDuration(b, s.Waited.BusyNs)
}

func idleAfter(s *trace.Sync) string { return string(appendIdleAfter(nil, s)) }

// appendIdleAfter appends idleAfter(s).
func appendIdleAfter(b []byte, s *trace.Sync) []byte {
	switch {
	case s.Gap.DeviceBusy:
		return append(b, "busy"...)
	case s.Gap.IdleAfterNs < 0:
		return append(b, "end"...)
	}
	return format.AppendDuration(b, s.Gap.IdleAfterNs)
}

// meanNs is a site's mean blocked time per sync.
func meanNs(s *classify.Site) int64 {
	if len(s.Syncs) == 0 {
		return 0
	}
	return s.BlockedNs / int64(len(s.Syncs))
}
