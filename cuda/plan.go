package cuda

import (
	"errors"
	"fmt"

	"github.com/nsyssync/nsyssync/trace"
	"github.com/nsyssync/nsyssync/whatif"
)

// Plan is a region of a trace turned into what the GPU replay executes:
// per interval of the region and per host thread, the recorded API calls
// as actions — the host time before each, the GPU work it enqueues (a
// spin kernel of each recorded op's duration, or a copy), the events it
// records or waits for, and how it blocks. Building a plan needs no GPU.
type Plan struct {
	Intervals []IntervalPlan
	// Streams are the recorded streams, by replay stream index.
	Streams []StreamRef
	// Events is the number of event slots an interval uses at most.
	Events int
	// CopyBytes is the largest replayed copy or memset: the session's
	// buffer size.
	CopyBytes int64
	// Shapes are the recorded kernels' footprints that Work.Shape and
	// Work.Cover index; Shapes[0] is none (one warp).
	Shapes []Shape
	// RecordedNs is the recorded time the replay reproduces, summed over
	// the intervals: each from its start to its end or to the end of the
	// GPU work launched in it, whichever is later.
	RecordedNs int64
	// RegionNs is the region's duration (savings are fractions of it).
	RegionNs int64
	// DispatchGapNs is the recorded gap between two ops queued on one
	// stream (median; 0 when the trace shows too few).
	DispatchGapNs int64
	// Removed counts the syncs left out.
	Removed int
	Counts  PlanCounts
	// LaunchOverhead is the profiler's cost per traced call that the
	// region's recorded launches give (whatif.OverheadFromLaunches, as
	// the simulator's Options.LaunchProfilerOverhead reads it);
	// ReplayOptions.OverheadFromLaunches takes it.
	LaunchOverhead whatif.LaunchOverhead
}

// PlanCounts says what a plan replays.
type PlanCounts struct {
	Actions  int `json:"actions"`  // host actions (recorded calls and rewrites)
	Spins    int `json:"spins"`    // GPU ops replayed as spin kernels
	Graphs   int `json:"graphs"`   // graph launches replayed as spin kernels
	Copies   int `json:"copies"`   // copies replayed as copies
	Memsets  int `json:"memsets"`  // memsets replayed as memsets
	Blocking int `json:"blocking"` // actions that block the host
	// Unblocked: blocking calls that waited for nothing on the GPU
	// (their own op ran after they returned), replayed by their host time.
	Unblocked int `json:"unblocked"`
	Rewrites  int `json:"rewrites"`  // GPU-side orderings standing in for removed syncs
	HandOffs  int `json:"hand_offs"` // host hand-offs between threads
}

// StreamRef names a recorded stream.
type StreamRef struct {
	Pid    trace.GlobalPid
	Stream trace.StreamID
}

// IntervalPlan is one interval of the region.
type IntervalPlan struct {
	Start, End int64
	// RecordedNs is from Start to End or to the end of the GPU work
	// launched inside, whichever is later.
	RecordedNs int64
	// Pending is GPU work launched before Start and still running then:
	// launched before the replay's clock starts.
	Pending []Work
	Threads []ThreadPlan
	// Anchor is the thread whose last call ends last (-1: no call);
	// TrailingNs the recorded host time from that call's end to End.
	Anchor     int
	TrailingNs int64
}

// ThreadPlan is one host thread's actions; Work and EventOps hold what
// the actions enqueue, by index ranges.
type ThreadPlan struct {
	GlobalTid trace.GlobalTid
	Actions   []Action
	Work      []Work
	EventOps  []EventOp
}

// BlockKind says how an action blocks the host.
type BlockKind uint8

// Ways to block.
const (
	BlockNone    BlockKind = iota
	BlockStream            // cuStreamSynchronize(Target stream)
	BlockEvent             // cuEventSynchronize(Target event slot)
	BlockContext           // cuCtxSynchronize
)

func (k BlockKind) String() string {
	return [...]string{"none", "stream", "event", "context"}[k]
}

// Action is one host step: a recorded call, or the GPU-side rewrite of a
// removed sync.
type Action struct {
	Name string // the recorded API, or "rewrite"
	Corr int64  // the recorded call's correlation id (0 for a rewrite)
	// Gap is the host time before the action: from the end of the
	// thread's previous action, or, for its first, from the interval's
	// start.
	Gap int64
	// Dur: the action takes at least this long on the host (the recorded
	// call's duration, unless it blocked waiting for the GPU).
	Dur int64
	// Tail: host time the recorded call spent after the GPU work it
	// waited for had ended (its wake-up, and a pageable copy's host
	// side); replayed after the real wait returns, less the real wake-up.
	Tail             int64
	WorkLo, WorkHi   int32
	EventLo, EventHi int32
	Block            BlockKind
	Target           int32 // stream index or event slot of Block
	Sync             int32 // trace.Sync index of the call, -1
	// AfterThread/AfterAction: a host hand-off; the action starts no
	// sooner than Lag after that action of another thread ended (-1: none).
	AfterThread int32
	AfterAction int32
	Lag         int64
}

// WorkKind is what stands in for a recorded GPU op.
type WorkKind uint8

// Kinds of work.
const (
	WorkSpin   WorkKind = iota // the spin kernel for Ns
	WorkCopy                   // a real copy of Bytes in Dir
	WorkGraph                  // a graph launch: the spin kernel for Ns, one warp
	WorkMemset                 // a real memset of Bytes
)

// Work is one GPU op of the replay.
type Work struct {
	Kind   WorkKind
	Stream int32
	Ns     int64 // recorded duration (spin)
	Bytes  int64
	Dir    copyDir
	// Shape indexes Plan.Shapes: the recorded kernel's footprint (0: none).
	Shape int32
	// Cover is the footprint of the kernel of another stream that was
	// running when this one started (0: none), and CoverNs the part of
	// this op's recorded duration before that kernel ended. Where that
	// kernel's spin leaves no room for a block of this one, the spin
	// would wait all of CoverNs for it, as the recorded op waited (in
	// part) for the recorded kernel's blocks to drain: the spin is asked
	// for Ns - CoverNs.
	Cover   int32
	CoverNs int64
	// StagedNs, for a copy from pageable memory to the device, is the host
	// time the recorded call spent staging it before its GPU part began
	// (the op's start less the call's): the replay issues the copy that
	// much into the action, as the driver did (0 for a copy the removed
	// sync's rewrite makes from pinned memory: no staging).
	StagedNs int64
	Op       string // the recorded op, for messages
}

// EventOp records an event slot on a stream, or makes a stream wait for
// one.
type EventOp struct {
	Record bool
	Slot   int32
	Stream int32
}

// PlanOptions choose what a plan leaves out.
type PlanOptions struct {
	// Remove lists groups of trace.Sync indices (one group per site) that
	// the plan leaves out, each replaced by its sync-free rewrite.
	Remove [][]int
	// KeepHostCode keeps the host time of the code that issues a removed
	// sync (by default it is cut, as the simulator does).
	KeepHostCode bool
	// ProfilerOverheadNs is taken off the host time before each recorded
	// call: the host time the profiler added to each traced call, so that
	// the plan replays the program as it runs without the profiler. Zero:
	// no correction (the plan replays the recording).
	ProfilerOverheadNs int64
	// ProfilerOverheads, when set, replaces ProfilerOverheadNs with an
	// overhead per kind of call (whatif.OverheadKindOf): the simulator's
	// estimate.Constants.ProfilerOverheads.ByKind(), a calibration's, or
	// one read off the trace (whatif.InferOverheads).
	ProfilerOverheads *whatif.Overheads
	// MaxCopyBytes caps a replayed copy (the rest of its time is spun);
	// zero: DefaultMaxCopyBytes, 64 MiB: a removed pageable copy's rewrite
	// is a real pinned copy of all its bytes up to that size (the pinned
	// rewrite, whatif.RewritesToPinned), not a spin at the recorded
	// pageable speed.
	MaxCopyBytes int64
	// MaxCalls bounds the calls a plan holds; zero: DefaultMaxCalls.
	MaxCalls int
	// spinMemsets: memsets are spun for their recorded time, as before
	// they were set for real (tests compare them).
	spinMemsets bool
}

// Plan limits.
const (
	DefaultMaxCopyBytes = 64 << 20
	DefaultMaxCalls     = 4_000_000
)

// ErrRegionTooLarge is returned for a region with more calls than a plan
// may hold.
var ErrRegionTooLarge = errors.New("the region is too large to replay")

// BuildPlan turns the region of t into a replay plan. tl must cover the
// region (trace.(*Export).Timeline of it).
func BuildPlan(tl *trace.Timeline, t *trace.Trace, opt PlanOptions) (*Plan, error) {
	if opt.MaxCopyBytes <= 0 {
		opt.MaxCopyBytes = DefaultMaxCopyBytes
	}
	if opt.MaxCalls <= 0 {
		opt.MaxCalls = DefaultMaxCalls
	}
	if t.Region.Duration <= 0 {
		return nil, fmt.Errorf("planning the replay of %s: the region has no duration", t.Path)
	}
	b := newPlanBuilder(tl, t, opt)
	if len(b.calls) > opt.MaxCalls {
		return nil, fmt.Errorf("planning the replay of %s: %w (%d calls, at most %d): choose a shorter --nvtx range", t.Path, ErrRegionTooLarge, len(b.calls), opt.MaxCalls)
	}
	p := &Plan{RegionNs: t.Region.Duration, DispatchGapNs: b.dispatchGap(),
		LaunchOverhead: whatif.OverheadFromLaunches(b.host.LaunchDurations(nil, nil), 0)}
	intervals := t.Region.Intervals
	if len(intervals) == 0 {
		intervals = []trace.Interval{{Start: t.Region.Start, End: t.Region.End}}
	}
	for _, iv := range intervals {
		ip := b.interval(iv, p)
		p.RecordedNs += ip.RecordedNs
		p.Intervals = append(p.Intervals, ip)
	}
	p.Streams = b.streams
	p.CopyBytes = b.copyBytes
	p.Shapes = b.shapes
	p.Removed = len(b.removed)
	return p, nil
}

// callKey finds a call by process and correlation id.
type callKey struct {
	pid  trace.GlobalPid
	corr int64
}

// median returns the median of xs (the mean of the two middles for an
// even count; 0 for none); xs is reordered.
func median(xs []int64) int64 { return whatif.Median(xs, whatif.MeanOfMiddles) }
