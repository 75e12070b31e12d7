package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/contract"
	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/trace"
)

// documentHead fills the JSON contract but for the syncs.
func (a *Analysis) documentHead() contract.Document {
	t := a.Trace
	d := contract.Document{Schema: contract.SchemaVersion, Sites: []contract.SiteJSON{}, Syncs: []contract.SyncJSON{}, Notes: bounded(t.Warnings)}
	d.Trace = contract.TraceInfo{Path: textsafe.Bound(t.Path), NsysVersion: textsafe.Bound(t.Schema.NsysVersion), SchemaVersion: textsafe.Bound(t.Schema.SchemaVersion),
		GPU: textsafe.Bound(a.GPUName()), Region: contract.RegionJSON{Name: textsafe.Bound(t.Region.Name), StartNs: t.Region.Start, EndNs: t.Region.End, DurationNs: t.Region.Duration, Occurrences: len(t.Region.Intervals)},
		Program: a.programJSON()}
	d.Totals = contract.Totals{Syncs: len(t.Syncs), BlockedNs: t.BlockedNs()}
	if e := a.Estimates; e != nil {
		d.Totals.EstimatedSavingsNs = e.TotalNs
		d.Totals.EstimatedSavingsFraction = fraction(e.TotalNs, a.shareBase())
		d.Totals.EstimateBaselineNs = e.BaselineNs
		d.Totals.FalseDependencySavingsNs = e.FalseDependencyNs
		po := e.ProfilerOverhead
		d.Totals.ProfilerOverhead = &po
		d.Totals.EstimatedSavingsLowNs, d.Totals.EstimatedSavingsHighNs = intervalEnds(e.TotalInterval)
		d.Totals.FalseDependencySavingsLowNs, d.Totals.FalseDependencySavingsHighNs = intervalEnds(e.FalseDependencyInterval)
		d.Totals.EstimateSelfCheckError = &e.SelfCheckError
		d.Totals.EstimateSampled = e.Sampled
	}
	d.Totals.EstimateAbsentReason = textsafe.Bound(a.NoEstimate)
	for _, s := range a.Ordered() {
		sj := contract.SiteJSON{ID: s.ID, Fingerprint: classify.Fingerprint(s), LegacyFingerprint: classify.LegacyFingerprint(s), APIs: bounded(s.APIs), Count: len(s.Syncs), BlockedNs: s.BlockedNs, Dependency: string(s.Dependency),
			Category: textsafe.Bound(s.Category), Confidence: s.Confidence, Evidence: nonNil(bounded(s.Evidence)), Fix: textsafe.Bound(s.Fix),
			NVTX: nonNil(bounded(s.NVTX)), Location: contract.LocationJSON{File: textsafe.Bound(s.Location.File), Line: s.Location.Line,
				Function: textsafe.Bound(s.Location.Function), Frames: nonNil(bounded(s.Location.Frames)),
				Library: textsafe.Bound(s.Location.Library)},
			SourceFile: textsafe.Bound(s.SourceFile), Basis: string(s.Basis), Decided: s.Decided(),
			NVTXAsWritten: bounded(s.NVTXShown), NVTXOtherPaths: s.NVTXOthers}
		if a.Estimates != nil {
			e := a.Estimates.Sites[s.ID]
			sj.EstimatedSavingsNs, sj.EstimateSampled = e.SavingsNs, e.Sampled
			sj.EstimatedSavingsFraction = fraction(e.SavingsNs, a.shareBase())
			sj.EstimatedSavingsLowNs, sj.EstimatedSavingsHighNs = intervalEnds(e.Interval)
			parts, del := e.Parts, e.DeleteNs
			sj.SavingsParts, sj.DeleteSavingsNs, sj.UncountedSavingsNs, sj.SavingsBound = &parts, &del, e.UncountedNs, e.Bound
			if s.NeededCopyBytes > 0 {
				bound := e.CopyBoundNs
				sj.CopyOverlapBoundNs = &bound
			}
		}
		sj.Phase, sj.PhaseReason, sj.NeededCopyBytes = string(s.Phase), textsafe.Bound(s.PhaseReason), s.NeededCopyBytes
		sj.HostRead = textsafe.Bound(s.HostRead)
		sj.SavingsExplained = textsafe.Bound(a.SavingsExplanation(s))
		if rw, ok := a.RewriteAssumed(s); ok {
			sj.Rewrite = &rw
		}
		if s.Counting() == classify.CountNone {
			d.Totals.UncountedSites++
		}
		if reason, ok := a.Allowed[s.ID]; ok {
			sj.Allowed = &contract.AllowedJSON{Reason: textsafe.Bound(reason)}
		}
		d.Sites = append(d.Sites, sj)
	}
	return d
}

// HeadDocument fills the JSON contract without its syncs: the trace,
// totals and sites, all that batch triage keeps of each export.
func (a *Analysis) HeadDocument() contract.Document { return a.documentHead() }

// BuildDocument fills the whole JSON contract in memory.
func (a *Analysis) BuildDocument() contract.Document {
	d := a.documentHead()
	t := a.Trace
	site := a.siteIndex()
	d.Syncs = make([]contract.SyncJSON, len(t.Syncs))
	for i := range t.Syncs {
		d.Syncs[i] = syncJSON(t, &t.Syncs[i], a.siteID(site, i))
	}
	return d
}

// WriteJSON writes the contract: the head indented, then the syncs one per
// line, encoded as they are written so that a trace with a million syncs
// never holds its whole document in memory.
func (a *Analysis) WriteJSON(w io.Writer) error {
	d := a.documentHead()
	notes := d.Notes
	d.Notes = nil
	head, err := json.MarshalIndent(struct {
		Schema string              `json:"schema"`
		Trace  contract.TraceInfo  `json:"trace"`
		Totals contract.Totals     `json:"totals"`
		Sites  []contract.SiteJSON `json:"sites"`
	}{d.Schema, d.Trace, d.Totals, d.Sites}, "", "  ")
	if err != nil {
		return fmt.Errorf("writing the JSON report: %w", err)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(bytes.TrimSuffix(head, []byte("\n}")))
	bw.WriteString(",\n  \"syncs\": [")
	t := a.Trace
	a.writeSyncLines(bw)
	if len(t.Syncs) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]")
	if len(notes) > 0 {
		b, _ := json.MarshalIndent(notes, "  ", "  ")
		bw.WriteString(",\n  \"warnings\": ")
		bw.Write(b)
	}
	bw.WriteString("\n}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the JSON report: %w", err)
	}
	return nil
}

func syncJSON(t *trace.Trace, s *trace.Sync, site string) contract.SyncJSON {
	j := contract.SyncJSON{ID: "e" + strconv.Itoa(int(s.Index)+1), Site: site, Kind: s.Kind.String(), Reason: s.Reason.String(), APIs: bounded(s.APIs()),
		Pid: s.GlobalTid.Pid(), Tid: s.GlobalTid.Tid(), Thread: textsafe.Bound(t.Threads[s.GlobalTid].Name),
		StartNs: s.Start, EndNs: s.End, BlockedNs: s.Duration(), Scope: s.Scope.String(), Legacy: s.Legacy, Resolved: s.Resolved,
		Waited: contract.WaitedJSON{Ops: s.Waited.Ops, BusyNs: s.Waited.BusyNs, LastEndNs: s.Waited.LastEnd},
		Gap:    contract.GapJSON{DeviceBusy: s.Gap.DeviceBusy, IdleBeforeNs: s.Gap.IdleBeforeNs, IdleAfterNs: s.Gap.IdleAfterNs},
		NVTX:   []string{}}
	if s.Device >= 0 {
		j.Device = (*int64)(&s.Device)
	}
	if s.Stream >= 0 {
		j.Stream = (*int64)(&s.Stream)
	}
	if s.Context >= 0 {
		j.Context = (*int64)(&s.Context)
	}
	if s.EventID >= 0 && s.EventID != 0xFFFFFFFF {
		j.Event = &s.EventID
	}
	if c := s.Copy; c != nil {
		j.Copy = &contract.CopyJSON{Direction: DirectionName(c), Src: MemName(c.SrcKind), Dst: MemName(c.DstKind), Bytes: c.Bytes}
	}
	if nvtx := s.NVTX(); len(nvtx) > 0 {
		j.NVTX = make([]string, len(nvtx))
		for i, r := range nvtx {
			j.NVTX[i] = textsafe.Bound(r.Name)
		}
	}
	return j
}

// bounded is textsafe.Bound of each string: the slice itself when none
// is cut.
func bounded(s []string) []string {
	if !slices.ContainsFunc(s, func(v string) bool { return len(v) > textsafe.MaxJSON }) {
		return s
	}
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = textsafe.Bound(v)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// writeSyncLines writes the syncs, one a line, in order. A trace may hold
// millions: blocks of them are encoded on all cores at once, then written
// one after the other, so that memory holds a few blocks, never the
// document.
func (a *Analysis) writeSyncLines(bw *bufio.Writer) {
	const block = 4096
	t := a.Trace
	site := a.siteIndex()
	encode := func(b []byte, lo, hi int) []byte {
		thread, threadOf := "", trace.NoThread
		for i := lo; i < hi; i++ {
			s := &t.Syncs[i]
			if i == lo || s.GlobalTid != threadOf {
				thread, threadOf = textsafe.Bound(t.Threads[s.GlobalTid].Name), s.GlobalTid
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = appendSyncJSON(append(b, "\n    "...), s, a.siteID(site, i), thread)
		}
		return b
	}
	bufs := make([][]byte, runtime.GOMAXPROCS(0))
	for lo := 0; lo < len(t.Syncs); lo += len(bufs) * block {
		var wg sync.WaitGroup
		for w := range bufs {
			from, to := min(lo+w*block, len(t.Syncs)), min(lo+(w+1)*block, len(t.Syncs))
			wg.Go(func() { bufs[w] = encode(bufs[w][:0], from, to) })
		}
		wg.Wait()
		for _, b := range bufs {
			bw.Write(b)
		}
	}
}
