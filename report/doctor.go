package report

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nsyssync/nsyssync/contract"
	"github.com/nsyssync/nsyssync/program"
	"github.com/nsyssync/nsyssync/trace"
)

// Diagnosis is what `nsyssync doctor` says about an export: which kinds of
// evidence it holds for this analysis, what each missing one costs, the
// NVTX ranges around its syncs, and the nsys command lines that would give
// better evidence.
type Diagnosis struct {
	Path          string         `json:"path"`
	NsysVersion   string         `json:"nsys_version,omitempty"`
	SchemaVersion string         `json:"export_schema_version,omitempty"`
	Analysable    bool           `json:"analysable"`
	Problem       string         `json:"problem,omitempty"`
	Checks        []Check        `json:"checks"`
	GPUs          []string       `json:"gpus"`
	Syncs         int            `json:"syncs"`
	Sites         int            `json:"sites"`
	Ranges        []RangeSummary `json:"nvtx_ranges"`
	// AtenRanges summarises the autograd ranges (aten::…) around syncs.
	AtenRanges []RangeSummary `json:"aten_ranges,omitempty"`
	// Profile and Export are the recommended command lines; ReexportOnly
	// says the export command alone (on the same .nsys-rep) is enough.
	Profile      string `json:"profile_command,omitempty"`
	Export       string `json:"export_command"`
	ReexportOnly bool   `json:"reexport_only"`
	// Program is the profiled program (absent when the export could not
	// be read); the advice is phrased for it.
	Program *contract.ProgramJSON `json:"program,omitempty"`
	capture capture
}

// Check is one kind of evidence.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // "yes", "no" or "partial"
	Detail string `json:"detail"`
	// Impact says what the analysis loses without it, and how to get it.
	Impact string `json:"impact,omitempty"`
	// remedy is what would give it: remedyProfile (profile again with
	// other options), remedyExport (export the same report again), or
	// none (the program or the nsys version decides).
	remedy string
}

const (
	remedyProfile = "profile"
	remedyExport  = "export"
)

// RangeSummary is one NVTX range name with the syncs inside it.
type RangeSummary struct {
	Name        string `json:"name"`
	Domain      string `json:"domain,omitempty"`
	Occurrences int    `json:"occurrences"`
	TotalNs     int64  `json:"total_ns"`
	Syncs       int    `json:"syncs"`
}

// Check statuses.
const (
	statusYes     = "yes"
	statusNo      = "no"
	statusPartial = "partial"
)

// Recommended capture, as tested for the fixtures (fixtures/README.md).
const (
	profileBase     = "nsys profile -t cuda,nvtx --cudabacktrace=all:1000 -s cpu --cpuctxsw=none"
	profilePython   = " --python-backtrace=cuda"
	profileAutograd = " --pytorch=autograd-nvtx"
)

// Diagnose tells what a loaded export (the whole trace) holds for this
// analysis.
func Diagnose(a *Analysis) *Diagnosis {
	t := a.Trace
	e := t.Evidence
	d := &Diagnosis{Path: t.Path, NsysVersion: t.Schema.NsysVersion, SchemaVersion: t.Schema.SchemaVersion, Analysable: true,
		Syncs: len(t.Syncs), Sites: len(a.Sites), GPUs: []string{}}
	for _, g := range t.GPUs {
		d.GPUs = append(d.GPUs, g.Name)
	}
	python := e.PythonMarks || e.PythonSamples || isPythonProgram(t)
	c := captureFor(a.programOf(), python, e.PythonFrames && a.programOf().Framework == program.Unknown)
	python = c.python
	pj := a.programJSON()
	d.Program = &pj
	add := func(name string, ok bool, detail, impact, remedy string) {
		c := Check{Name: name, Status: statusYes, Detail: detail}
		if !ok {
			c.Status, c.Impact, c.remedy = statusNo, impact, remedy
		}
		d.Checks = append(d.Checks, c)
	}
	add("CUDA API trace", true, fmt.Sprintf("%d API calls of interest, %d host syncs", t.Stats.APICalls, len(t.Syncs)), "", "")
	add("GPU activity", e.GPUActivity, fmt.Sprintf("%d kernels, copies and memsets", t.Stats.GPUOps),
		"no kernels or copies: what each sync waited for and the GPU idle time after it are unknown", "")
	if guessed := guessedCopies(t); !e.MemcpyActivity && guessed > 0 {
		add("memcpy activity", false, "", fmt.Sprintf("%d copies judged by their API name alone: pageable and pinned memory cannot be told apart", guessed), "")
	} else if e.MemcpyActivity {
		add("memcpy activity", true, "copy directions, sizes and memory kinds", "", "")
	}
	add("sync records", e.SyncRecords, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
		"event syncs cannot be tied to the stream and work they waited for", "")
	add("GPU info", len(t.GPUs) > 0, strings.Join(d.GPUs, ", "), "the report cannot name the GPU", "")
	add("native backtraces", e.Backtraces, "CUDA_CALLCHAINS joined to the calls",
		nativeImpact(c), remedyProfile)
	switch {
	case e.PythonFrames:
		add("Python backtraces", true, "file:line of each call", "", "")
	case e.PythonMarks && len(t.Syncs) == 0:
		add("Python backtraces", true, "marks present; no sync to read frames for", "", "")
	case e.PythonMarks:
		d.Checks = append(d.Checks, Check{Name: "Python backtraces", Status: statusPartial,
			Detail: "the marks are there but their payload was not exported",
			Impact: "no file:line: export the same .nsys-rep again with --include-json=true (no need to profile again)", remedy: remedyExport})
	case python:
		add("Python backtraces", false, "", "no file:line; sites are grouped by native frames, or by API, stream and NVTX path: "+
			"add --python-backtrace=cuda (with --cudabacktrace and -s cpu)", remedyProfile)
	}
	if e.PythonSamples {
		add("Python periodic samples", true, fmt.Sprintf("the Python line of %d of %d syncs without a backtrace, from a sample taken while each waited", e.PythonSampledSyncs, unframed(t)), "", "")
	}
	add("NVTX ranges", e.NVTX, "ranges name the phases around syncs; --nvtx limits the analysis to one",
		"no --nvtx regions and no phase names: add -t nvtx and annotate the program ("+c.annotate+")", remedyProfile)
	d.traceChecks(a.programOf())
	if c.torch {
		add("autograd NVTX", e.AutogradNVTX, "aten op ranges (aten::item, aten::nonzero, …) around syncs",
			"the PyTorch op behind each sync is unknown: add --pytorch=autograd-nvtx", remedyProfile)
	}
	schema := Check{Name: "export schema", Status: statusYes, Detail: t.Schema.Version()}
	if t.Schema.SchemaVersion == "" {
		schema.Status, schema.remedy = statusPartial, remedyExport
		schema.Impact = "the export does not record its schema version (nsys before 2022.1): export the report again with a recent nsys"
	}
	d.Checks = append(d.Checks, schema)
	d.Ranges, d.AtenRanges = rangeSummaries(t)
	d.capture = c
	d.recommend()
	return d
}

// DiagnoseFailure describes an export that cannot be analysed (it failed
// to open or load) and still says how to capture a usable one.
func DiagnoseFailure(path string, err error) *Diagnosis {
	d := &Diagnosis{Path: path, Problem: err.Error(), GPUs: []string{}}
	var ie *trace.InputError
	if errors.As(err, &ie) {
		d.Problem = ie.Problem
	}
	switch {
	case errors.Is(err, trace.ErrNoCUDATrace):
		d.Checks = []Check{{Name: "CUDA API trace", Status: statusNo, Impact: "nothing to analyse: profile with -t cuda", remedy: remedyProfile}}
	case errors.Is(err, trace.ErrUnsupported):
		d.Checks = []Check{{Name: "export schema", Status: statusNo, Impact: "export the .nsys-rep again with a recent nsys", remedy: remedyExport}}
	default:
		d.Checks = []Check{{Name: "export file", Status: statusNo, Impact: "not a readable nsys SQLite export: export the .nsys-rep again", remedy: remedyExport}}
	}
	d.recommend()
	return d
}

// recommend fills the command lines that would give the evidence missing.
func (d *Diagnosis) recommend() {
	base := strings.TrimSuffix(filepath.Base(d.Path), ".gz") // report.sqlite.gz names report
	name := strings.TrimSuffix(base, filepath.Ext(base))
	if name == "" || name == "." {
		name = "report"
	}
	d.Export = fmt.Sprintf("nsys export --type sqlite --include-json=true -o %s.sqlite %s.nsys-rep", name, name)
	profile, export := false, false
	for _, c := range d.Checks {
		profile = profile || c.remedy == remedyProfile
		export = export || c.remedy == remedyExport
	}
	if !profile {
		d.ReexportOnly = export
		return
	}
	d.Profile = profileCommand(d.capture, name)
}

// nativeImpact is what the analysis loses without native backtraces.
func nativeImpact(c capture) string {
	if c.torch {
		return "no C++ frames (THPVariable_item, …) to group sites by: add --cudabacktrace=all:1000 -s cpu"
	}
	return "no native frames to tell sites apart and name the program's function behind each sync: add --cudabacktrace=all:1000 -s cpu"
}

// guessedCopies counts the syncs whose copy was judged by its API name
// because the export has no memcpy activity for it.
func guessedCopies(t *trace.Trace) int {
	n := 0
	for i := range t.Syncs {
		if c := t.Syncs[i].Copy; c != nil && !c.FromActivity {
			n++
		}
	}
	return n
}

// isPythonProgram guesses from process and thread names and native frames
// whether the traced program runs under CPython.
func isPythonProgram(t *trace.Trace) bool {
	for _, p := range t.Processes {
		if strings.Contains(strings.ToLower(p.Name), "python") {
			return true
		}
	}
	for _, th := range t.Threads {
		if strings.Contains(strings.ToLower(th.Name), "python") {
			return true
		}
	}
	for i := range t.Syncs {
		for _, f := range t.Syncs[i].Native() {
			if strings.Contains(f.Module, "libpython") || strings.Contains(f.Module, "libtorch") {
				return true
			}
		}
	}
	return false
}

// rangeSummaries lists the NVTX ranges around the syncs, by name and
// domain: the program's own ranges, and the autograd (aten::) ones apart.
func rangeSummaries(t *trace.Trace) (ranges, aten []RangeSummary) {
	type key struct{ name, domain string }
	type acc struct {
		seen  map[[2]int64]bool
		total int64
		syncs int
	}
	byKey := map[key]*acc{}
	for i := range t.Syncs {
		for _, r := range t.Syncs[i].NVTX() {
			if r.Domain == trace.PythonBacktraceDomain {
				continue
			}
			k := key{r.Name, r.Domain}
			if strings.HasPrefix(r.Name, "aten::") {
				// "aten::item, seq = 0, op_id = 10": one entry per op.
				k.name, _, _ = strings.Cut(r.Name, ",")
			}
			ac := byKey[k]
			if ac == nil {
				ac = &acc{seen: map[[2]int64]bool{}}
				byKey[k] = ac
			}
			ac.syncs++
			if iv := [2]int64{r.Start, r.End}; !ac.seen[iv] {
				ac.seen[iv] = true
				ac.total += r.End - r.Start
			}
		}
	}
	for k, ac := range byKey {
		rs := RangeSummary{Name: k.name, Domain: k.domain, Occurrences: len(ac.seen), TotalNs: ac.total, Syncs: ac.syncs}
		if strings.HasPrefix(k.name, "aten::") {
			aten = append(aten, rs)
		} else {
			ranges = append(ranges, rs)
		}
	}
	order := func(x, y RangeSummary) int {
		return cmp.Or(cmp.Compare(y.Syncs, x.Syncs), cmp.Compare(x.Name, y.Name), cmp.Compare(x.Domain, y.Domain))
	}
	slices.SortFunc(ranges, order)
	slices.SortFunc(aten, order)
	if ranges == nil {
		ranges = []RangeSummary{}
	}
	return ranges, aten
}

// unframed counts the syncs without a Python backtrace of their own: those
// a Python periodic sample may give a line.
func unframed(t *trace.Trace) int {
	n := 0
	for i := range t.Syncs {
		if len(t.Syncs[i].Python()) == 0 || t.Syncs[i].PythonSampled() {
			n++
		}
	}
	return n
}
