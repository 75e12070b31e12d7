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
	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/trace"
)

// SchemaVersion names the JSON contract.
const SchemaVersion = "nsyssync/v1"

// Document is the JSON output contract (README "JSON output", docs/design.md); fields are only ever
// added.
type Document struct {
	Schema string     `json:"schema"`
	Trace  TraceInfo  `json:"trace"`
	Totals Totals     `json:"totals"`
	Sites  []SiteJSON `json:"sites"`
	Syncs  []SyncJSON `json:"syncs"`
	Notes  []string   `json:"warnings,omitempty"`
}

// TraceInfo describes the analysed export.
type TraceInfo struct {
	Path          string     `json:"path"`
	NsysVersion   string     `json:"nsys_version"`
	SchemaVersion string     `json:"export_schema_version,omitempty"`
	GPU           string     `json:"gpu"`
	Region        RegionJSON `json:"region"`
	// Program is the profiled program: framework, language, evidence.
	Program ProgramJSON `json:"program"`
}

// RegionJSON is the analysed time region.
type RegionJSON struct {
	Name        string `json:"name"`
	StartNs     int64  `json:"start_ns"`
	EndNs       int64  `json:"end_ns"`
	DurationNs  int64  `json:"duration_ns"`
	Occurrences int    `json:"occurrences"`
}

// Totals sums the region.
type Totals struct {
	Syncs                    int     `json:"syncs"`
	BlockedNs                int64   `json:"blocked_ns"`
	EstimatedSavingsNs       int64   `json:"estimated_savings_ns"`
	EstimatedSavingsFraction float64 `json:"estimated_savings_fraction"`
	FalseDependencySavingsNs int64   `json:"false_dependency_savings_ns"`
	// The intervals of estimated_savings_ns and false_dependency_savings_ns
	// (docs/estimator.md, "Intervals"); absent where they rest on one
	// window.
	EstimatedSavingsLowNs        *int64 `json:"estimated_savings_low_ns,omitempty"`
	EstimatedSavingsHighNs       *int64 `json:"estimated_savings_high_ns,omitempty"`
	FalseDependencySavingsLowNs  *int64 `json:"false_dependency_savings_low_ns,omitempty"`
	FalseDependencySavingsHighNs *int64 `json:"false_dependency_savings_high_ns,omitempty"`
	// EstimateSelfCheckError: the simulator's relative error replaying the
	// region unchanged; absent when no estimate ran.
	EstimateSelfCheckError *float64 `json:"estimate_self_check_error,omitempty"`
	// EstimateSampled: some estimate was extrapolated from a sample of the
	// region (see the warnings); absent otherwise.
	EstimateSampled bool `json:"estimate_sampled,omitempty"`
	// EstimateAbsentReason says why no savings were estimated (the savings
	// fields are then 0); absent when they were.
	EstimateAbsentReason string `json:"estimate_absent_reason,omitempty"`
	// UncountedSites counts the sites of set-up, tear-down or the
	// profiler (SiteJSON.Phase), and those that may guard a host read
	// (SiteJSON.HostRead), that no total or gate counts.
	UncountedSites int `json:"uncounted_sites,omitempty"`
}

// SiteJSON is one site of the contract.
type SiteJSON struct {
	ID string `json:"id"`
	// Fingerprint names the site across runs (allow-lists use it).
	Fingerprint string `json:"fingerprint"`
	// LegacyFingerprint is the fingerprint of reports before site
	// identities (allow-lists still accept it).
	LegacyFingerprint string       `json:"legacy_fingerprint,omitempty"`
	APIs              []string     `json:"apis"`
	Count             int          `json:"count"`
	BlockedNs         int64        `json:"blocked_ns"`
	Dependency        string       `json:"dependency"`
	Category          string       `json:"category"`
	Confidence        float64      `json:"confidence"`
	Evidence          []string     `json:"evidence"`
	Location          LocationJSON `json:"location"`
	NVTX              []string     `json:"nvtx"`
	// NVTXAsWritten is the NVTX path of the site's first sync as the
	// program wrote it (nvtx folds digits: "Batch #"), and
	// NVTXOtherPaths counts the other paths as written among its syncs
	// that fold to nvtx; both absent when no range encloses the site.
	NVTXAsWritten            []string    `json:"nvtx_as_written,omitempty"`
	NVTXOtherPaths           int         `json:"nvtx_other_paths,omitempty"`
	Fix                      string      `json:"fix"`
	EstimatedSavingsNs       int64       `json:"estimated_savings_ns"`
	EstimatedSavingsFraction float64     `json:"estimated_savings_fraction"`
	Replay                   *ReplayJSON `json:"replay"`
	// EstimateSampled: the estimator simulated a sample of the site's
	// occurrences.
	EstimateSampled bool `json:"estimate_sampled,omitempty"`
	// EstimatedSavingsLowNs and EstimatedSavingsHighNs: the interval of
	// estimated_savings_ns from the spread of the repeated windows it
	// rests on (docs/estimator.md, "Intervals"); absent where it rests on
	// one.
	EstimatedSavingsLowNs  *int64 `json:"estimated_savings_low_ns,omitempty"`
	EstimatedSavingsHighNs *int64 `json:"estimated_savings_high_ns,omitempty"`
	// Allowed is set when an allow-list accepts the site.
	Allowed *AllowedJSON `json:"allowed,omitempty"`
	// SourceFile is the file the site's program line was read from (the
	// --source-root, the recorded path, or found under the current or the
	// export's directory); absent when none was read.
	SourceFile string `json:"source_file,omitempty"`
	// Basis is the kind of evidence the verdict rests on: "source",
	// "backtrace", "samples" (CPU samples inside the site's syncs), "nvtx",
	// "pattern" (the call pattern alone) or "none".
	Basis string `json:"basis"`
	// Decided: the dependency is known and rests on frames, the program's
	// line or aten ranges; false for unknown and likely verdicts.
	Decided bool `json:"decided"`
	// Phase is "setup", "teardown" or "profiler" for a site no total or
	// gate counts (its estimated_savings_ns is 0), with PhaseReason saying
	// how the trace shows it; absent for the program's own syncs.
	Phase       string `json:"phase,omitempty"`
	PhaseReason string `json:"phase_reason,omitempty"`
	// NeededCopyBytes: the site copies this much data the host uses to
	// the host; its saving is bounded (SavingsBound).
	NeededCopyBytes int64 `json:"needed_copy_bytes,omitempty"`
	// HostRead: the process reads managed or mapped memory without a
	// copy call, as this says the trace shows; the site's waits may guard
	// such a read and count in no total (estimated_savings_ns 0).
	HostRead string `json:"host_read,omitempty"`
	// SavingsExplained is the one line saying what the saving includes;
	// SavingsParts its parts (absent without estimates).
	SavingsExplained string                 `json:"savings_explained,omitempty"`
	SavingsParts     *estimate.SavingsParts `json:"savings_parts,omitempty"`
	// DeleteSavingsNs is what deleting the site's waits saves in the
	// replay before any bound; UncountedSavingsNs that saving for a site
	// no total counts; CopyOverlapBoundNs and SavingsBound the bound of
	// a site that copies needed data ("copy-overlap" or "delete": which
	// limit gave the saving).
	DeleteSavingsNs    *int64 `json:"delete_savings_ns,omitempty"`
	UncountedSavingsNs int64  `json:"uncounted_savings_ns,omitempty"`
	CopyOverlapBoundNs *int64 `json:"copy_overlap_bound_ns,omitempty"`
	SavingsBound       string `json:"savings_bound,omitempty"`
}

// AllowedJSON says why an allow-list accepts a site.
type AllowedJSON struct {
	Reason string `json:"reason"`
}

// LocationJSON is where a site is.
type LocationJSON struct {
	File     string   `json:"file,omitempty"`
	Line     int64    `json:"line,omitempty"`
	Function string   `json:"function,omitempty"`
	Frames   []string `json:"frames"`
	// Library: the function of another library that made the site's
	// syncs ("transformers/generation/utils.py:_prepare_special_tokens").
	Library string `json:"library,omitempty"`
}

// ReplayJSON is a GPU replay's measurement; null until one ran.
type ReplayJSON struct {
	MeasuredSavingsNs int64  `json:"measured_savings_ns"`
	GPU               string `json:"gpu"`
}

// SyncJSON is one host-blocking event of the inventory.
type SyncJSON struct {
	ID        string     `json:"id"`
	Site      string     `json:"site"`
	Kind      string     `json:"kind"`
	Reason    string     `json:"reason"`
	APIs      []string   `json:"apis"`
	Pid       int64      `json:"pid"`
	Tid       int64      `json:"tid"`
	Thread    string     `json:"thread,omitempty"`
	StartNs   int64      `json:"start_ns"`
	EndNs     int64      `json:"end_ns"`
	BlockedNs int64      `json:"blocked_ns"`
	Scope     string     `json:"scope"`
	Device    *int64     `json:"device"`
	Context   *int64     `json:"context,omitempty"`
	Event     *int64     `json:"event,omitempty"`
	Stream    *int64     `json:"stream"`
	Legacy    bool       `json:"legacy_stream,omitempty"`
	Resolved  bool       `json:"resolved"`
	Copy      *CopyJSON  `json:"copy,omitempty"`
	Waited    WaitedJSON `json:"waited_for"`
	Gap       GapJSON    `json:"gpu_gap"`
	NVTX      []string   `json:"nvtx"`
}

// CopyJSON describes the copy behind an implicit sync.
type CopyJSON struct {
	Direction string `json:"direction"`
	Src       string `json:"src"`
	Dst       string `json:"dst"`
	Bytes     int64  `json:"bytes"`
}

// WaitedJSON is the GPU work the host waited for.
type WaitedJSON struct {
	Ops       int   `json:"ops"`
	BusyNs    int64 `json:"busy_ns"`
	LastEndNs int64 `json:"last_end_ns,omitempty"`
}

// GapJSON is the GPU idle time around the sync's return.
type GapJSON struct {
	DeviceBusy   bool  `json:"device_busy"`
	IdleBeforeNs int64 `json:"idle_before_ns"`
	IdleAfterNs  int64 `json:"idle_after_ns"`
}

// documentHead fills the JSON contract but for the syncs.
func (a *Analysis) documentHead() Document {
	t := a.Trace
	d := Document{Schema: SchemaVersion, Sites: []SiteJSON{}, Syncs: []SyncJSON{}, Notes: bounded(t.Warnings)}
	d.Trace = TraceInfo{Path: textsafe.Bound(t.Path), NsysVersion: textsafe.Bound(t.Schema.NsysVersion), SchemaVersion: textsafe.Bound(t.Schema.SchemaVersion),
		GPU: textsafe.Bound(a.GPUName()), Region: RegionJSON{Name: textsafe.Bound(t.Region.Name), StartNs: t.Region.Start, EndNs: t.Region.End, DurationNs: t.Region.Duration, Occurrences: len(t.Region.Intervals)},
		Program: a.programJSON()}
	d.Totals = Totals{Syncs: len(t.Syncs), BlockedNs: t.BlockedNs()}
	if e := a.Estimates; e != nil {
		d.Totals.EstimatedSavingsNs = e.TotalNs
		d.Totals.EstimatedSavingsFraction = fraction(e.TotalNs, t.Region.Duration)
		d.Totals.FalseDependencySavingsNs = e.FalseDependencyNs
		d.Totals.EstimatedSavingsLowNs, d.Totals.EstimatedSavingsHighNs = intervalEnds(e.TotalInterval)
		d.Totals.FalseDependencySavingsLowNs, d.Totals.FalseDependencySavingsHighNs = intervalEnds(e.FalseDependencyInterval)
		d.Totals.EstimateSelfCheckError = &e.SelfCheckError
		d.Totals.EstimateSampled = e.Sampled
	}
	d.Totals.EstimateAbsentReason = textsafe.Bound(a.NoEstimate)
	for _, s := range a.Ordered() {
		sj := SiteJSON{ID: s.ID, Fingerprint: Fingerprint(s), LegacyFingerprint: LegacyFingerprint(s), APIs: bounded(s.APIs), Count: len(s.Syncs), BlockedNs: s.BlockedNs, Dependency: string(s.Dependency),
			Category: textsafe.Bound(s.Category), Confidence: s.Confidence, Evidence: nonNil(bounded(s.Evidence)), Fix: textsafe.Bound(s.Fix),
			NVTX: nonNil(bounded(s.NVTX)), Location: LocationJSON{File: textsafe.Bound(s.Location.File), Line: s.Location.Line,
				Function: textsafe.Bound(s.Location.Function), Frames: nonNil(bounded(s.Location.Frames)),
				Library: textsafe.Bound(s.Location.Library)},
			SourceFile: textsafe.Bound(s.SourceFile), Basis: string(s.Basis), Decided: s.Decided(),
			NVTXAsWritten: bounded(s.NVTXShown), NVTXOtherPaths: s.NVTXOthers}
		if a.Estimates != nil {
			e := a.Estimates.Sites[s.ID]
			sj.EstimatedSavingsNs, sj.EstimateSampled = e.SavingsNs, e.Sampled
			sj.EstimatedSavingsFraction = fraction(e.SavingsNs, t.Region.Duration)
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
		if s.Counting() == classify.CountNone {
			d.Totals.UncountedSites++
		}
		if reason, ok := a.Allowed[s.ID]; ok {
			sj.Allowed = &AllowedJSON{Reason: textsafe.Bound(reason)}
		}
		d.Sites = append(d.Sites, sj)
	}
	return d
}

// HeadDocument fills the JSON contract without its syncs: the trace,
// totals and sites, all that batch triage keeps of each export.
func (a *Analysis) HeadDocument() Document { return a.documentHead() }

// BuildDocument fills the whole JSON contract in memory.
func (a *Analysis) BuildDocument() Document {
	d := a.documentHead()
	t := a.Trace
	site := a.siteIndex()
	d.Syncs = make([]SyncJSON, len(t.Syncs))
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
		Schema string     `json:"schema"`
		Trace  TraceInfo  `json:"trace"`
		Totals Totals     `json:"totals"`
		Sites  []SiteJSON `json:"sites"`
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

func syncJSON(t *trace.Trace, s *trace.Sync, site string) SyncJSON {
	j := SyncJSON{ID: "e" + strconv.Itoa(int(s.Index)+1), Site: site, Kind: s.Kind.String(), Reason: s.Reason.String(), APIs: bounded(s.APIs()),
		Pid: trace.PidOf(s.GlobalTid), Tid: trace.TidOf(s.GlobalTid), Thread: textsafe.Bound(t.Threads[s.GlobalTid].Name),
		StartNs: s.Start, EndNs: s.End, BlockedNs: s.Duration(), Scope: s.Scope.String(), Legacy: s.Legacy, Resolved: s.Resolved,
		Waited: WaitedJSON{Ops: s.Waited.Ops, BusyNs: s.Waited.BusyNs, LastEndNs: s.Waited.LastEnd},
		Gap:    GapJSON{DeviceBusy: s.Gap.DeviceBusy, IdleBeforeNs: s.Gap.IdleBeforeNs, IdleAfterNs: s.Gap.IdleAfterNs},
		NVTX:   []string{}}
	if s.Device >= 0 {
		j.Device = &s.Device
	}
	if s.Stream >= 0 {
		j.Stream = &s.Stream
	}
	if s.Context >= 0 {
		j.Context = &s.Context
	}
	if s.EventID >= 0 && s.EventID != 0xFFFFFFFF {
		j.Event = &s.EventID
	}
	if c := s.Copy; c != nil {
		j.Copy = &CopyJSON{Direction: DirectionName(c), Src: MemName(c.SrcKind), Dst: MemName(c.DstKind), Bytes: c.Bytes}
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
		thread, threadOf := "", int64(0)
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
