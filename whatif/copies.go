package whatif

import (
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// CopiesToDevice reports whether sync s is a host-to-device copy (its
// reason says so: pageable or not, array and unified copies folded in).
// Its sync-free rewrite keeps the copy, made asynchronous: the data must
// still reach the GPU.
func CopiesToDevice(s *trace.Sync) bool {
	return s.Copy != nil && strings.Contains(s.Reason.String(), "htod")
}

// KeepsCopy reports whether the call of sync s with correlation id corr
// is the host-to-device copy that removing the sync keeps, made
// asynchronous (AsyncCopyCallNs). The simulator used to keep any copy
// call of a sync whose reason says host-to-device, the replay the copy's
// own call when its recorded direction is host-to-device (not an array or
// unified copy): on every fixture and shared-corpus export both kept the
// same calls.
func KeepsCopy(s *trace.Sync, corr int64) bool {
	return CopiesToDevice(s) && s.Copy.CorrelationID == corr
}
