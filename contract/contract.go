// Package contract is the JSON output contract, nsyssync/v1: the document
// `analyze --format json` writes for one export (its trace, totals, sites
// and syncs; README "JSON output"), the schema that names it, and reading
// a stream of such documents back. Fields are only ever added.
//
// Package report fills a Document from an analysis and writes it; the
// findings database, batch, diff and merge (package triage) read it here
// without importing the renderers.
package contract

import "github.com/nsyssync/nsyssync/estimate"

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
	// EstimateBaselineNs is the region's duration as the program would
	// run it without the profiler: every estimated_savings_fraction is a
	// share of it (0: of the recorded region).
	EstimateBaselineNs       int64 `json:"estimate_baseline_ns,omitempty"`
	FalseDependencySavingsNs int64 `json:"false_dependency_savings_ns"`
	// The intervals of estimated_savings_ns and false_dependency_savings_ns
	// (docs/estimator.md, "Intervals"); absent where they rest on one
	// window.
	// ProfilerOverhead is the profiler's per-call host overhead the
	// simulator took off the recorded host time, per API kind, and where
	// each value came from; absent when no estimate ran.
	ProfilerOverhead             *ProfilerOverheadJSON `json:"profiler_overhead,omitempty"`
	EstimatedSavingsLowNs        *int64                `json:"estimated_savings_low_ns,omitempty"`
	EstimatedSavingsHighNs       *int64                `json:"estimated_savings_high_ns,omitempty"`
	FalseDependencySavingsLowNs  *int64                `json:"false_dependency_savings_low_ns,omitempty"`
	FalseDependencySavingsHighNs *int64                `json:"false_dependency_savings_high_ns,omitempty"`
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
	// "kernels" (the GPU ops around the read), "lines" (every place of the
	// program's files that can make the read agrees; no frame names the
	// line), "pattern" (the call pattern alone) or "none".
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
	SavingsExplained string `json:"savings_explained,omitempty"`
	// Rewrite is the rewrite the estimated saving models (absent without
	// estimates and for sites no total counts).
	Rewrite      *RewriteJSON           `json:"rewrite,omitempty"`
	SavingsParts *estimate.SavingsParts `json:"savings_parts,omitempty"`
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

// ProgramJSON is the profiled program as package program detected it.
type ProgramJSON struct {
	// Framework: pytorch, jax, tensorrt, rapids, cupy, openacc, openmp,
	// mpi, cuda (a CUDA program of its own) or unknown.
	Framework string `json:"framework"`
	// Language: Python, C/C++, C/C++/Fortran or unknown.
	Language string `json:"language"`
	// Also: other models the program uses beside its framework.
	Also []string `json:"also"`
	// Evidence: what decided, strongest first.
	Evidence []string `json:"evidence"`
}

// ProfilerOverheadJSON is the per-call overhead of the profiler that the
// simulator takes off (docs/estimator.md): flat, and per API kind
// (launches, asynchronous copies, syncs and blocking copies, other calls),
// with the source of each value ("default", "option", "calibration: …",
// "trace (n=…)").
type ProfilerOverheadJSON struct {
	FlatNs      int64             `json:"flat_ns"`
	LaunchNs    int64             `json:"launch_ns"`
	AsyncCopyNs int64             `json:"async_copy_ns"`
	SyncNs      int64             `json:"sync_ns"`
	OtherNs     int64             `json:"other_ns"`
	Sources     map[string]string `json:"sources"`
}

// RewriteJSON is the rewrite a site's estimated saving models: Kind is one
// of "pinned-async-copy", "async-copy", "copy-overlap",
// "gpu-side-ordering", "keep-on-gpu", "fixed-shape-op", "reuse-allocation"
// (a device free: the free and the re-allocation after it go),
// "wait-removed" and "wait-removed-only" (the recommended rewrite changes more than the
// wait, and the saving does not count it); Assumes says it in words.
type RewriteJSON struct {
	Kind    string `json:"kind"`
	Assumes string `json:"assumes"`
}
