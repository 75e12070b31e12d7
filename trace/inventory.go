package trace

// linkWindowNs bounds the time between a copy's return and the stream
// synchronize that completes it for the two to count as one event when
// other calls of the process may have come between them.
const linkWindowNs = 20_000

// buildSyncs turns the calls of interest into host-blocking events. Calls
// are in time order. A copy followed at once on the same thread by a
// synchronize of the same stream (PyTorch's .item(), .cpu(), nonzero) is one
// event. It walks the calls twice: first to decide which make syncs, then
// to build only those, into a slice sized once (a trace may have
// millions).
func buildSyncs(calls []Call, act *activity, si *streamInfo) []Sync {
	plan, n := planSyncs(calls, act, si)
	out := make([]Sync, 0, n)
	var kept copyArena
	lastOnThread := map[GlobalTid]int{} // -> index in calls of its previous call
	// linked[i]: index in out of the slot that call i (a copy blocking on
	// its own) keeps for the stream sync that completes it, -1 for none.
	linked := make([]int32, len(calls))
	for i := range calls {
		c := &calls[i]
		prev := lastOnThread[c.GlobalTid]
		lastOnThread[c.GlobalTid] = i
		linked[i] = -1
		switch plan[i] {
		case planNone:
			continue
		case planReplaced: // a slot in time order, filled by the stream sync
			linked[i] = int32(len(out))
			out = append(out, Sync{})
			continue
		}
		s, _ := describeCall(calls[i:i+1:i+1], act, si)
		if plan[i] == planAlone {
			s.Copy = kept.keep(s.Copy)
			out = append(out, s)
			continue
		}
		p := &calls[prev]
		cp := copyOf(p, act)
		if prev == i-1 {
			s.SetCalls(calls[prev : i+1])
		} else {
			s.SetCalls([]Call{*p, *c})
		}
		s.Start = p.Start
		if !s.Resolved && cp.FromActivity {
			s.setStream(cp.Device, cp.Context, cp.Stream, si)
			s.Resolved = true
		}
		s.Kind = Implicit
		s.Copy = kept.keep(cp)
		s.Reason = copyReason(cp, p).ThenStreamSync()
		if j := linked[prev]; j >= 0 { // the copy blocks on its own: take its place
			out[j] = s
		} else {
			out = append(out, s)
		}
	}
	for i := range out {
		out[i].Index = int32(i)
	}
	return out
}

// What a call makes, decided by planSyncs.
const (
	planNone     = iota // no sync
	planAlone           // a sync of its own
	planLinked          // a stream sync completing the thread's previous call, a copy
	planReplaced        // a copy that blocks on its own, replaced by its planLinked stream sync
)

// planSyncs decides what each call makes, marks the calls that block on
// their own, and counts the syncs.
func planSyncs(calls []Call, act *activity, si *streamInfo) ([]uint8, int) {
	plan := make([]uint8, len(calls))
	n := 0
	lastOnThread := map[GlobalTid]int{}
	for i := range calls {
		c := &calls[i]
		prev, hasPrev := lastOnThread[c.GlobalTid]
		lastOnThread[c.GlobalTid] = i
		s, blocking := describeCall(calls[i:i+1:i+1], act, si)
		c.Blocking = blocking
		if c.Kind == CallStreamSync && hasPrev {
			p := &calls[prev]
			if cp := copyOf(p, act); p.Kind == CallMemcpy && cp != nil && linksTo(p, cp, c, &s) {
				plan[i] = planLinked
				if plan[prev] == planAlone { // this sync replaces the copy's
					plan[prev] = planReplaced
				} else {
					n++
				}
				continue
			}
		}
		if blocking {
			plan[i] = planAlone
			n++
		}
	}
	return plan, n
}

// copyArena holds the copies of the syncs, so that a sync does not keep
// the activity's copies (most of which block nothing) alive; it allocates
// them in blocks.
type copyArena struct{ block []Copy }

func (a *copyArena) keep(cp *Copy) *Copy {
	if cp == nil {
		return nil
	}
	if len(a.block) == cap(a.block) {
		a.block = make([]Copy, 0, 1024)
	}
	a.block = append(a.block, *cp)
	return &a.block[len(a.block)-1]
}

// linksTo reports whether stream sync c completes copy p: same thread (the
// caller checked), same stream when both are known, and nothing else of the
// process between them or only a moment apart.
func linksTo(p *Call, cp *Copy, c *Call, s *Sync) bool {
	if cp.Direction == CopyDtoD || cp.Direction == CopyPtoP || cp.Memset {
		return false
	}
	if s.Stream >= 0 && cp.FromActivity && cp.Stream != s.Stream {
		return false
	}
	return c.CorrelationID-p.CorrelationID == 1 || c.Start-p.End <= linkWindowNs
}

// copyOf returns the copy activity of a memcpy/memset call, or one guessed
// from the API name when the export has no activity row.
func copyOf(c *Call, act *activity) *Copy {
	if cp, ok := act.copyRow(c.GlobalTid.Process(), c.CorrelationID); ok {
		return cp
	}
	switch c.Kind {
	case CallMemcpy:
		return &Copy{Direction: directionFromName(c.Name), SrcKind: MemUnknown, DstKind: MemUnknown, Stream: NoStream, Device: NoDevice, Context: NoContext, CorrelationID: c.CorrelationID}
	case CallMemset:
		return &Copy{Memset: true, SrcKind: MemUnknown, DstKind: MemUnknown, Stream: NoStream, Device: NoDevice, Context: NoContext, CorrelationID: c.CorrelationID}
	}
	return nil
}

// describeCall builds the sync a call (a one-element slice of the calls,
// shared rather than copied) would be and says whether it blocks the host on
// its own.
func describeCall(one []Call, act *activity, si *streamInfo) (Sync, bool) {
	c := &one[0]
	pid := c.GlobalTid.Process()
	s := Sync{
		calls: c, nCalls: 1, GlobalTid: c.GlobalTid, GlobalPid: pid, Start: c.Start, End: c.End,
		Scope: ScopeContext, Device: NoDevice, Context: NoContext, Stream: NoStream, EventID: -1, Kind: Explicit,
		Reason: reasonOf(c.Kind), waitCorr: c.CorrelationID,
	}
	rec, hasRec := act.syncRow(pid, c.CorrelationID)
	switch c.Kind {
	case CallStreamSync:
		if hasRec && rec.stream != invalidID {
			s.setStream(rec.device, rec.context, rec.stream, si)
			s.Resolved = true
		}
		return s, true
	case CallEventSync:
		if hasRec {
			s.EventID = rec.eventID
			if r, ok := act.eventRecordFor(pid, rec, c.CorrelationID); ok {
				s.setStream(r.device, r.context, r.stream, si)
				s.Scope = ScopeEvent
				s.waitCorr = r.corr
				s.Resolved = true
			}
		}
		return s, true
	case CallContextSync:
		if hasRec {
			s.Device, s.Context = rec.device, rec.context
		}
		s.Resolved = true
		return s, true
	case CallFree:
		s.Kind = Implicit
		s.Resolved = true
		return s, true
	case CallMemcpy, CallMemset:
		s.Kind = Implicit
		cp := copyOf(c, act)
		s.Copy = cp
		s.Reason = copyReason(cp, c)
		s.waitCorr = c.CorrelationID + 1 // the copy itself is waited for
		if cp.FromActivity {
			s.setStream(cp.Device, cp.Context, cp.Stream, si)
			s.Resolved = true
		}
		return s, blocks(c, cp)
	}
	return s, false
}

func (s *Sync) setStream(device DeviceID, context ContextID, stream StreamID, si *streamInfo) {
	s.Scope = ScopeStream
	s.Device, s.Context, s.Stream = device, context, stream
	s.Legacy = si.isLegacy(s.GlobalPid.Pid(), context, stream)
}

// blocks applies CUDA's API synchronization rules to a copy or memset
// (docs.nvidia.com/cuda/cuda-runtime-api/api-sync-behavior.html).
func blocks(c *Call, cp *Copy) bool {
	async := c.async
	if cp.Memset {
		return !async && (cp.DstKind == MemPinned || cp.DstKind == MemManaged)
	}
	switch dir := normDirection(cp.Direction); dir {
	case CopyDtoH:
		return !async || cp.DstKind == MemPageable
	case CopyHtoD:
		return cp.SrcKind == MemPageable || !async
	case CopyHtoH:
		return !async
	case CopyDtoD, CopyPtoP:
		return false
	}
	// Unknown direction (no activity row): a non-Async copy that is not
	// peer-to-peer blocks in every other case.
	return !async && !c.peer
}

// normDirection folds array copies into host/device directions.
func normDirection(k CopyKind) CopyKind {
	switch k {
	case 4, 12: // AtoH, unified DtoH
		return CopyDtoH
	case 3, 11: // HtoA, unified HtoD
		return CopyHtoD
	case 5, 6, 7, 13: // AtoA, AtoD, DtoA, unified DtoD
		return CopyDtoD
	}
	return k
}

// copyReason is the reason of a sync made by copy or memset cp of call c.
func copyReason(cp *Copy, c *Call) Reason {
	if cp.Memset {
		return ReasonMemset
	}
	switch normDirection(cp.Direction) {
	case CopyDtoH:
		if cp.DstKind == MemPageable {
			return ReasonPageableDtoH
		}
		return ReasonDtoH
	case CopyHtoD:
		if cp.SrcKind == MemPageable {
			return ReasonPageableHtoD
		}
		return ReasonHtoD
	case CopyHtoH:
		return ReasonHtoH
	case CopyDtoD, CopyPtoP:
		return ReasonDtoD
	}
	return ReasonCopy
}
