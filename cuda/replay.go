package cuda

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
	"github.com/nsyssync/nsyssync/whatif"
)

// ReplayOptions tune a replay.
type ReplayOptions struct {
	// Repeat is the number of measured rounds; each round replays the
	// region once as recorded and once without each group's syncs, in
	// alternating order, after one untimed round. Zero: 5.
	Repeat int
	// KeepHostCode keeps the host time of the code that issues a removed
	// sync (see PlanOptions).
	KeepHostCode bool
	// ProfilerOverheadNs is the host time the profiler added to each
	// traced call. When positive, savings are measured on plans with it
	// taken off the host time before each call (the program as it runs
	// without the profiler), and fractions are of that program's
	// duration; the self-check still replays the recording. Zero: savings
	// are measured on the recording as it is.
	ProfilerOverheadNs int64
	// ProfilerOverheads, when set, replaces ProfilerOverheadNs with an
	// overhead per kind of call (see PlanOptions).
	ProfilerOverheads *whatif.Overheads
	// OverheadFromLaunches: without ProfilerOverheads, take the overhead
	// the region's recorded launches give (Plan.LaunchOverhead, as the
	// simulator's Options.LaunchProfilerOverhead does) in place of
	// ProfilerOverheadNs, where there are enough launches to read it from.
	OverheadFromLaunches bool
	// MaxWall bounds the replay's expected wall time (the recorded time ×
	// plans × rounds); zero: 2 minutes.
	MaxWall time.Duration
	// occupancy shapes the spins, overhead chooses the per-op overhead
	// they are charged, launch when launches are issued, wait how the
	// host waits, callNoops whether calls that replay as nothing are run
	// (tests compare the models; the zero values are the replay's);
	// spinMemsets whether memsets are spun (PlanOptions.spinMemsets).
	spinMemsets bool
	occupancy   occupancyModel
	overhead    overheadModel
	launch      launchModel
	wait        waitModel
	callNoops   bool
}

func (o ReplayOptions) withDefaults() ReplayOptions {
	if o.Repeat <= 0 {
		o.Repeat = 5
	}
	if o.MaxWall <= 0 {
		o.MaxWall = 2 * time.Minute
	}
	return o
}

// Group is a set of syncs removed together: a site's.
type Group struct {
	ID    string
	Syncs []int // indices into trace.Trace.Syncs
	// Counting is classify's decision on how the site's saving enters
	// the removable total (GroupsOf), Phase its phase when it is outside
	// (CountNone), HostRead whether it is outside because its syncs may
	// guard a host read of managed or mapped memory. CopyBoundNs, for a site that copies data the host
	// uses, is the simulator's copy-overlap bound (nil: not given, and
	// the site counts 0).
	Counting    classify.Counting
	Phase       string
	HostRead    bool
	CopyBoundNs *int64
}

// ResultSchema names the replay's JSON document (`nsyssync replay --format
// json`); it changes only when a field changes meaning (fields may be added).
const ResultSchema = "nsyssync-replay/v1"

// Result is a region replayed on a GPU.
type Result struct {
	// Schema names the document's format (ResultSchema); readers check it.
	Schema string   `json:"schema"`
	GPU    Identity `json:"gpu"`
	// RegionNs is the region's duration; RecordedNs the recorded time
	// the replay reproduces (the region plus GPU work that ran past it).
	RegionNs   int64 `json:"region_ns"`
	RecordedNs int64 `json:"recorded_ns"`
	Repeat     int   `json:"repeat"`
	// Unchanged is the region replayed as recorded; SelfCheckError is
	// (its median - RecordedNs) / RecordedNs.
	Unchanged      Stats   `json:"unchanged"`
	SelfCheckError float64 `json:"self_check_error"`
	// Baseline is the region replayed with nothing removed and the
	// profiler's overhead taken off (nil without that correction): the
	// savings are measured from it, and BaselineNs is the region's
	// duration they are fractions of.
	Baseline           *Stats `json:"baseline,omitempty"`
	BaselineNs         int64  `json:"baseline_ns"`
	ProfilerOverheadNs int64  `json:"profiler_overhead_ns"`
	// ProfilerOverheadSource says where ProfilerOverheadNs came from when
	// the trace's launches gave it (ReplayOptions.OverheadFromLaunches).
	ProfilerOverheadSource string `json:"profiler_overhead_source,omitempty"`
	// ProfilerOverheadsNs, with overheads per kind of call
	// (ReplayOptions.ProfilerOverheads), is what was taken off before each
	// call of a kind, by whatif.OverheadKind's names.
	ProfilerOverheadsNs map[string]int64 `json:"profiler_overheads_ns,omitempty"`
	Sites               []SiteReplay     `json:"sites"`
	// Total is the removable total: no site of set-up, tear-down or the
	// profiler, bounded savings for sites that copy needed data.
	Total    Total       `json:"total"`
	Plan     PlanCounts  `json:"plan"`
	Model    DeviceModel `json:"device_model"`
	Warnings []string    `json:"warnings,omitempty"`
}

// SiteReplay is the measured saving of removing one group's syncs.
type SiteReplay struct {
	ID    string `json:"id"`
	Syncs int    `json:"syncs"`
	// Without is the region replayed without the syncs.
	Without Stats `json:"without"`
	// SavedNs is the median over rounds of (as recorded - without), each
	// pair replayed back to back; SavedMinNs and SavedMaxNs its range.
	SavedNs    int64 `json:"measured_savings_ns"`
	SavedMinNs int64 `json:"measured_savings_min_ns"`
	SavedMaxNs int64 `json:"measured_savings_max_ns"`
	// SavedFraction is SavedNs over the region's duration (BaselineNs).
	SavedFraction float64 `json:"measured_savings_fraction"`
	GPU           string  `json:"gpu"`
	// CountedNs is what the site adds to the removable total: SavedNs,
	// but 0 for a site of set-up, tear-down or the profiler (Phase says
	// which) and, for a site that copies data the host uses, at most the
	// simulator's copy-overlap bound (Bound says which limit gave it);
	// 0 too for one whose syncs may guard a host read of managed or
	// mapped memory (HostRead).
	CountedNs int64  `json:"counted_savings_ns"`
	Phase     string `json:"phase,omitempty"`
	HostRead  bool   `json:"host_read,omitempty"`
	Bound     string `json:"bound,omitempty"`
}

// Site returns the replay of the site with the given id.
func (r *Result) Site(id string) (SiteReplay, bool) {
	for _, s := range r.Sites {
		if s.ID == id {
			return s, true
		}
	}
	return SiteReplay{}, false
}

// Replay opens the first GPU, replays the trace's region once as recorded
// and once without each site's syncs, and closes the GPU. Without a
// driver or GPU it returns an error for which Unavailable is true: the
// simulator's estimate stands.
func Replay(ctx context.Context, x *trace.Export, t *trace.Trace, sites []classify.Site, opt ReplayOptions) (*Result, error) {
	d, err := Open(Options{})
	if err != nil {
		return nil, err
	}
	res, err := d.Replay(ctx, x, t, sites, opt)
	return res, errors.Join(err, d.Close())
}

// Replay replays the trace's region on the device once as recorded and
// once without each site's syncs.
func (d *Device) Replay(ctx context.Context, x *trace.Export, t *trace.Trace, sites []classify.Site, opt ReplayOptions) (*Result, error) {
	r := t.Region
	// GPU work launched in the region may run past its end.
	tl, err := x.Timeline(ctx, trace.Interval{Start: r.Start, End: r.End + min(r.Duration, 2_000_000_000)})
	if err != nil {
		return nil, fmt.Errorf("replaying %s: %w", t.Path, err)
	}
	groups := GroupsOf(sites)
	if err := copyBounds(ctx, x, t, sites, groups); err != nil {
		return nil, fmt.Errorf("replaying %s: %w", t.Path, err)
	}
	return d.ReplayTimeline(ctx, tl, t, groups, opt)
}

// ReplayTimeline is Replay on a timeline already read, with the removed
// syncs given as groups.
func (d *Device) ReplayTimeline(ctx context.Context, tl *trace.Timeline, t *trace.Trace, groups []Group, opt ReplayOptions) (*Result, error) {
	opt = opt.withDefaults()
	base, err := BuildPlan(tl, t, PlanOptions{spinMemsets: opt.spinMemsets})
	if err != nil {
		return nil, err
	}
	plans := []*Plan{base}
	overheadSource := ""
	if lo := base.LaunchOverhead; opt.OverheadFromLaunches && opt.ProfilerOverheads == nil && lo.Ok {
		opt.ProfilerOverheadNs, overheadSource = max(lo.Ns, 1), lo.Source()
	}
	// unprofiled is the plan without the profiler's overhead, rm removed.
	unprofiled := func(rm [][]int) PlanOptions {
		return PlanOptions{Remove: rm, KeepHostCode: opt.KeepHostCode && rm != nil, spinMemsets: opt.spinMemsets,
			ProfilerOverheadNs: max(opt.ProfilerOverheadNs, 0), ProfilerOverheads: opt.ProfilerOverheads}
	}
	if opt.ProfilerOverheadNs > 0 || opt.ProfilerOverheads != nil {
		p, err := BuildPlan(tl, t, unprofiled(nil))
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	first := len(plans) // plans[first+i] removes groups[i]
	for _, g := range groups {
		p, err := BuildPlan(tl, t, unprofiled([][]int{g.Syncs}))
		if err != nil {
			return nil, fmt.Errorf("site %s: %w", g.ID, err)
		}
		plans = append(plans, p)
	}
	// The total's plan: every site that counts whole, removed together.
	if rm := jointRemove(groups); rm != nil {
		p, err := BuildPlan(tl, t, unprofiled(rm))
		if err != nil {
			return nil, fmt.Errorf("the sites together: %w", err)
		}
		plans = append(plans, p)
	}
	wall := time.Duration(base.RecordedNs) * time.Duration(len(plans)) * time.Duration(opt.Repeat+1)
	if wall > opt.MaxWall {
		return nil, fmt.Errorf("replaying %s: %d plans × %d rounds of a %v region would take about %v (limit %v): choose sites with --site, a shorter --nvtx range or fewer --repeat",
			t.Path, len(plans), opt.Repeat+1, time.Duration(base.RecordedNs).Round(time.Millisecond), wall.Round(time.Second), opt.MaxWall)
	}
	spec := sessionSpec{}
	for _, p := range plans {
		spec.streams = max(spec.streams, len(p.Streams))
		spec.events = max(spec.events, p.Events)
		spec.copyBytes = max(spec.copyBytes, p.CopyBytes)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if opt.overhead == overFootprint {
		if err := d.measureFootprints(footprintLaunches(d.lim, opt.occupancy, plans)); err != nil {
			return nil, fmt.Errorf("replaying %s on %s: %w", t.Path, d.id.Name, err)
		}
	}
	runs := make([][]int64, len(plans))
	err = d.withSession(spec, func(s session) error {
		rn := &runner{sess: s, model: d.model, base: time.Now(), lim: d.lim, occupancy: opt.occupancy,
			footprintOverNs: d.overNs, footprintWakeNs: d.wakeNs, overhead: opt.overhead, launch: opt.launch,
			wait: opt.wait, spinOnly: opt.wait == waitPrecise && runtime.NumCPU() >= maxThreads(plans)+2, callNoops: opt.callNoops}
		// A warm-up round, untimed: every plan once, so that each
		// plan's first run (caches, page faults, the driver's first
		// launches of each footprint) is not a measured one.
		for _, p := range plans {
			runtime.GC()
			if _, err := rn.run(ctx, p); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}
		for round := range opt.Repeat {
			for k := range plans {
				i := k
				if round%2 == 1 {
					i = len(plans) - 1 - k
				}
				runtime.GC() // not during the run: a replay allocates nothing
				ns, err := rn.run(ctx, plans[i])
				if err != nil {
					if i >= first && i-first < len(groups) {
						return fmt.Errorf("without site %s: %w", groups[i-first].ID, err)
					}
					return err
				}
				runs[i] = append(runs[i], ns)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("replaying %s on %s: %w", t.Path, d.id.Name, err)
	}
	res := d.result(t, plans, first, groups, runs, opt)
	res.ProfilerOverheadSource = overheadSource
	return res, nil
}

// result summarises the runs: plans[0] is the recording, plans[first-1]
// the baseline savings are measured from, plans[first+i] removes
// groups[i], and a last plan, where there is one, the whole groups
// together (the total's).
func (d *Device) result(t *trace.Trace, plans []*Plan, first int, groups []Group, runs [][]int64, opt ReplayOptions) *Result {
	base := plans[0]
	id := d.Identity()
	res := &Result{Schema: ResultSchema, GPU: id, RegionNs: base.RegionNs, RecordedNs: base.RecordedNs, Repeat: opt.Repeat,
		Unchanged: summarize(runs[0]), Plan: base.Counts, Model: d.model, Warnings: id.Warnings(t),
		BaselineNs: base.RegionNs, ProfilerOverheadNs: max(opt.ProfilerOverheadNs, 0)}
	if o := opt.ProfilerOverheads; o != nil {
		res.ProfilerOverheadsNs = map[string]int64{}
		for k, v := range o {
			res.ProfilerOverheadsNs[whatif.OverheadKind(k).String()] = v
		}
	}
	threads := maxThreads(plans[:1])
	if cpus := runtime.NumCPU(); cpus < threads+2 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d CPUs for %d replayed host threads: each thread busy-waits to pace its calls, so the replay is slowed and noisy with fewer than %d", cpus, threads, threads+2))
	}
	if base.RecordedNs > 0 {
		res.SelfCheckError = float64(res.Unchanged.MedianNs-base.RecordedNs) / float64(base.RecordedNs)
	}
	ref := runs[first-1]
	if first > 1 {
		b := summarize(ref)
		res.Baseline = &b
		// The region as the program runs without the profiler.
		res.BaselineNs = max(base.RegionNs+b.MedianNs-res.Unchanged.MedianNs, 1)
	}
	for i, g := range groups {
		without := runs[first+i]
		saved := make([]int64, len(without))
		for k := range saved {
			saved[k] = ref[k] - without[k]
		}
		st := summarize(saved)
		s := SiteReplay{ID: g.ID, Syncs: plans[first+i].Removed, Without: summarize(without),
			SavedNs: st.MedianNs, SavedMinNs: st.MinNs, SavedMaxNs: st.MaxNs,
			SavedFraction: float64(st.MedianNs) / float64(res.BaselineNs), GPU: id.Name}
		count(g, &s)
		res.Sites = append(res.Sites, s)
	}
	var jointNs int64
	if k := first + len(groups); k < len(plans) {
		saved := make([]int64, len(runs[k]))
		for j := range saved {
			saved[j] = ref[j] - runs[k][j]
		}
		jointNs = summarize(saved).MedianNs
	}
	res.Total = total(groups, res.Sites, jointNs, res.BaselineNs)
	return res
}

// maxThreads is the most host threads an interval of the plans replays.
func maxThreads(plans []*Plan) int {
	n := 0
	for _, p := range plans {
		for _, iv := range p.Intervals {
			n = max(n, len(iv.Threads))
		}
	}
	return n
}
