package report

import (
	"fmt"
	"strconv"

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
func MemName(k trace.MemKind) string {
	switch k {
	case trace.MemPageable:
		return "pageable"
	case trace.MemPinned:
		return "pinned"
	case trace.MemDevice:
		return "device"
	case trace.MemManaged:
		return "managed"
	case trace.MemUnknown:
		return "unknown"
	}
	return fmt.Sprintf("kind%d", k)
}

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
