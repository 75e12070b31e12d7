package classify

// Counting says how a site's saving enters a removable total: the one
// decision the simulator (estimate) and the GPU replay (cuda) both apply,
// so that neither re-derives it.
type Counting uint8

// Ways a site counts.
const (
	// CountWhole: the program's own syncs; the whole saving counts.
	CountWhole Counting = iota
	// CountBounded: the site copies data the host uses (NeededCopyBytes);
	// it counts at most what an asynchronous copy overlaps with other
	// work, and is never removed together with other sites.
	CountBounded
	// CountNone: outside every removable total — set-up, tear-down or
	// the profiler's own syncs (Phase), or syncs that may guard a host
	// read of managed or mapped memory (HostRead).
	CountNone
)

// Counting says how the site's saving enters a removable total.
func (s *Site) Counting() Counting {
	switch {
	case !s.Phase.Counted() || s.HostRead != "":
		return CountNone
	case s.NeededCopyBytes > 0:
		return CountBounded
	}
	return CountWhole
}
