package cuda

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// defaultDispatchGapNs stands in for the recorded gap between two queued
// ops of a stream when the trace shows too few.
const defaultDispatchGapNs = 1_000

// startDelayNs lets every replay thread reach its start line before the
// clock starts.
const startDelayNs = 50_000

var errAborted = errors.New("aborted: another replay thread failed")

// DeviceModel is what a device measured of itself when it was opened; the
// replay uses it to size spins and to account for the real wake-up.
type DeviceModel struct {
	// SpinOverheadNs: per op, the time a chain of back-to-back spins takes
	// beyond the durations asked for (the dispatch gap, kernel entry and
	// exit).
	SpinOverheadNs int64 `json:"spin_overhead_ns"`
	// WakeNs: from the end of the awaited GPU work to the return of a
	// synchronize call.
	WakeNs int64 `json:"wake_ns"`
	// LaunchCallNs: the host time of a spin's launch call on an idle
	// stream.
	LaunchCallNs int64 `json:"launch_call_ns"`
	// TimerStepNs: the resolution of %globaltimer.
	TimerStepNs int64 `json:"timer_step_ns"`
}

// runner executes plans on a session with a host clock.
type runner struct {
	sess  session
	model DeviceModel
	base  time.Time
	// lim sizes the spins' launches (zero: every spin one warp);
	// occupancy chooses how (the zero value: recorded footprints).
	lim       smLimits
	occupancy occupancyModel
	// footprintOverNs: per spin launch, the per-op overhead of back-to-back
	// spins of that launch measured on this device (a launch not in it, or
	// overhead occOneWarpOverhead: the model's one-warp SpinOverheadNs).
	footprintOverNs map[spinLaunch]int64
	// footprintWakeNs: per spin launch, the wake-up of a synchronize on
	// it measured on this device (a launch not in it: the model's
	// one-warp WakeNs).
	footprintWakeNs map[spinLaunch]int64
	overhead        overheadModel
	// launch chooses when a launch's GPU work is issued (the zero value:
	// a graph's at the end of its recorded call, others at its start).
	launch launchModel
	// launches and overNs: the current plan's Shapes as spin launches,
	// and the per-op overhead charged to each.
	launches []spinLaunch
	overNs   []int64
	// wakes: per Shape, the wake-up of a synchronize on its spin; the
	// wake-up of what each stream, each event and the whole GPU last
	// queued (0: the model's), which a synchronize of it then takes.
	wakes      []int64
	streamWake []atomic.Int64
	eventWake  []atomic.Int64
	lastWake   atomic.Int64
	// probe, when set, notes when each action ran and stamps its first
	// GPU op (diagnostic replays in tests).
	probe *probe
	// spinOnly: busy waits never yield (there are CPUs enough for every
	// replay thread); wait chooses the waits (the zero value: the
	// replay's).
	spinOnly bool
	wait     waitModel
	// callNoops: actions with no GPU work, event or sync are run (the
	// replay before) instead of paced (tests compare them).
	callNoops bool
	// coldStart: the replay threads do not warm their launch path before
	// the clock starts (the replay before; tests compare them).
	coldStart bool
}

// launchModel chooses when, in the host time of a recorded launch call
// (a kernel's, a memset's or a graph's), the replay issues its GPU work.
// Under the profiler a launch call takes 5.5 to 8.9 µs and its op starts
// 1.4 to 2.1 µs after the call returns (every ground-truth export,
// kernels and graphs alike): the work reaches the GPU at the end of the
// call. A spin issued at the start of the call starts earlier than the
// recorded op. For a graph launched after a sync (gt_graph_item) that is
// the critical path of each step, and the replay ran 7% short; issued at
// the end of the call, it takes the recorded time. Kernels are issued at
// the start: issued at the end, every kernel export's replay ran 0.4 to
// 3.6 points longer than with them issued at the start, already longer
// than recorded (docs/replay.md).
type launchModel uint8

const (
	// launchGraphsAtEnd: a graph launch is issued so that the device's
	// launch call ends when the recorded call ended (DeviceModel.
	// LaunchCallNs before it; the host pads the rest of the recorded call
	// before it); other launches at the start of the call.
	launchGraphsAtEnd launchModel = iota
	// launchAtEnd: every launch so.
	launchAtEnd
	// launchAtStart: every launch at the start of the recorded call, then
	// padded to its duration (the replay before).
	launchAtStart
)

func (m launchModel) String() string {
	return [...]string{"graphs at the end of the recorded call", "at the end of the recorded call", "at the start of the recorded call"}[m]
}

// issueAt is when, from an action starting at start, its GPU work is
// issued: a copy from pageable memory to the device after the host's
// staging of it (Work.StagedNs); a graph launch that does not block under
// launchGraphsAtEnd (any such launch under launchAtEnd), the device's
// launch call before the recorded call's end; anything else at once.
func (r *runner) issueAt(a *Action, work []Work, start int64) int64 {
	for _, w := range work {
		if w.StagedNs > 0 {
			return start + w.StagedNs
		}
	}
	if a.Block != BlockNone || len(work) == 0 || r.launch == launchAtStart {
		return start
	}
	for _, w := range work {
		if w.Kind == WorkCopy || w.Kind == WorkMemset {
			return start
		}
	}
	if r.launch == launchGraphsAtEnd && work[0].Kind != WorkGraph {
		return start
	}
	return max(start, start+a.Dur-r.model.LaunchCallNs)
}

func (r *runner) now() int64 { return int64(time.Since(r.base)) }

// spinNs is the spin asked for a recorded op of ns, when back-to-back
// spins of its launch take overNs each beyond what they are asked: a
// chain of replayed ops then takes, per op, what the recorded chain took
// (the recorded dispatch gap plus the op), and a lone op about its
// recorded duration.
func spinNs(ns int64, p *Plan, overNs int64) int64 {
	gap := p.DispatchGapNs
	if gap <= 0 {
		gap = defaultDispatchGapNs
	}
	return max(ns-(overNs-gap), 0)
}

// run replays every interval of the plan and returns the summed replayed
// duration.
func (r *runner) run(ctx context.Context, p *Plan) (int64, error) {
	r.prepare(p)
	var total int64
	for i := range p.Intervals {
		d, err := r.runInterval(ctx, p, &p.Intervals[i])
		if err != nil {
			return 0, fmt.Errorf("replaying interval %d of %d: %w", i+1, len(p.Intervals), err)
		}
		total += d
	}
	return total, nil
}

// intervalRun is the shared state of the threads replaying one interval.
type intervalRun struct {
	r     *runner
	p     *Plan
	iv    *IntervalPlan
	done  [][]atomic.Int64 // per thread and action: its end (0: not yet)
	start atomic.Int64
	abort atomic.Bool
	left  atomic.Int32
	// gpuEnd: when the last thread to finish saw the GPU drained.
	gpuEnd  int64
	ends    []int64
	errs    []error
	syncErr error
}

// runInterval replays one interval, each recorded thread on its own OS
// thread, and returns its duration: until the anchor thread's last action
// ends plus the recorded trailing host time, or the GPU drains, whichever
// is later.
func (r *runner) runInterval(ctx context.Context, p *Plan, iv *IntervalPlan) (int64, error) {
	n := len(iv.Threads)
	for i := range r.streamWake {
		r.streamWake[i].Store(0)
	}
	for i := range r.eventWake {
		r.eventWake[i].Store(0)
	}
	r.lastWake.Store(0)
	ir := &intervalRun{r: r, p: p, iv: iv, done: make([][]atomic.Int64, n), ends: make([]int64, n), errs: make([]error, n)}
	ir.left.Store(int32(n))
	var ready, finished sync.WaitGroup
	ready.Add(n)
	finished.Add(n)
	for th := range iv.Threads {
		ir.done[th] = make([]atomic.Int64, len(iv.Threads[th].Actions))
		go ir.thread(ctx, th, &ready, &finished)
	}
	ready.Wait()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err := r.sess.bind()
	for _, w := range iv.Pending {
		if err != nil {
			break
		}
		if err = r.sess.spin(int(w.Stream), spinNs(w.Ns, p, r.model.SpinOverheadNs), oneWarp, -1); err != nil {
			err = fmt.Errorf("launching the %s on stream %d: %w", w.Op, w.Stream, err)
		}
	}
	if err != nil {
		ir.abort.Store(true)
	}
	t0 := r.now() + startDelayNs
	ir.start.Store(t0)
	finished.Wait()
	if n == 0 {
		ir.syncErr = r.sess.syncContext()
		ir.gpuEnd = r.now()
	}
	if err := errors.Join(append([]error{err, ir.syncErr}, ir.errs...)...); err != nil {
		return 0, errors.Join(err, r.sess.syncContext())
	}
	end := max(ir.gpuEnd-r.model.WakeNs, t0)
	if iv.Anchor >= 0 {
		end = max(end, ir.ends[iv.Anchor]+iv.TrailingNs)
	}
	return end - t0, nil
}

// thread replays thread th's actions on a locked OS thread.
func (ir *intervalRun) thread(ctx context.Context, th int, ready, finished *sync.WaitGroup) {
	defer finished.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err := ir.r.sess.bind()
	if err == nil && !ir.r.coldStart {
		err = ir.warmLaunch(th)
	}
	ready.Done()
	if err == nil {
		var t0 int64
		for t0 = ir.start.Load(); t0 == 0; t0 = ir.start.Load() {
			if !ir.r.spinOnly {
				runtime.Gosched()
			}
		}
		ir.ends[th], err = ir.actions(ctx, th, t0)
	}
	if err != nil {
		ir.errs[th] = fmt.Errorf("thread %d: %w", ir.iv.Threads[th].GlobalTid, err)
		ir.abort.Store(true)
	}
	if ir.left.Add(-1) == 0 {
		// The last thread to finish waits for the GPU at once.
		ir.syncErr = ir.r.sess.syncContext()
		ir.gpuEnd = ir.r.now()
	}
}

func (ir *intervalRun) actions(ctx context.Context, th int, t0 int64) (int64, error) {
	r := ir.r
	tp := &ir.iv.Threads[th]
	prevEnd := t0
	stop := ctx.Done()
	for i := range tp.Actions {
		if ir.abort.Load() {
			return 0, errAborted
		}
		if i&63 == 0 {
			select {
			case <-stop:
				return 0, ctx.Err()
			default:
			}
		}
		a := &tp.Actions[i]
		due := prevEnd + a.Gap
		if a.AfterThread >= 0 {
			dep := &ir.done[a.AfterThread][a.AfterAction]
			var end int64
			for k := 0; ; k++ {
				if end = dep.Load(); end != 0 {
					break
				}
				if ir.abort.Load() {
					return 0, errAborted
				}
				r.yield(k)
			}
			due = max(prevEnd, end+a.Lag)
		}
		if a.WorkLo == a.WorkHi && a.EventLo == a.EventHi && a.Block == BlockNone && !r.callNoops && r.probe == nil {
			// A call the replay makes nothing of (cuKernelGetName: 600
			// of gt_item_many's 1,561 actions, 95 ns each) is paced, not
			// run: its recorded time joins the next wait. Run, reading
			// the clock and padding took 0.2 µs or so, each a little
			// behind.
			prevEnd = due + a.Dur
			ir.done[th][i].Store(prevEnd)
			continue
		}
		r.spinUntil(due)
		end, err := ir.do(tp, a, due)
		if err != nil {
			return 0, err
		}
		ir.done[th][i].Store(end)
		prevEnd = end
	}
	return prevEnd, nil
}

// do performs one action that starts at start and returns when it ends
// on the host.
func (ir *intervalRun) do(tp *ThreadPlan, a *Action, start int64) (int64, error) {
	r := ir.r
	s := r.sess
	work := tp.Work[a.WorkLo:a.WorkHi]
	stamp := -1 // a diagnostic replay stamps each action's first GPU op
	if len(work) > 0 && (work[0].Kind == WorkSpin || work[0].Kind == WorkGraph) {
		stamp = r.probe.slot()
	}
	r.spinUntil(r.issueAt(a, work, start))
	for k, w := range work {
		var err error
		st := stamp
		if k > 0 {
			st = -1
		}
		switch {
		case w.Kind == WorkCopy:
			err = s.copy(int(w.Stream), w.Dir, w.Bytes)
		case w.Kind == WorkMemset:
			err = s.memset(int(w.Stream), w.Bytes)
		default:
			ns, l := r.spinFor(&w, ir.p)
			err = s.spin(int(w.Stream), ns, l, st)
		}
		if err != nil {
			return 0, fmt.Errorf("%s (correlation id %d): op %q on stream %d: %w", a.Name, a.Corr, w.Op, w.Stream, err)
		}
		r.queuedWake(&w)
	}
	for _, e := range tp.EventOps[a.EventLo:a.EventHi] {
		var err error
		if e.Record {
			err = s.record(int(e.Slot), int(e.Stream))
			r.recordedWake(e.Slot, e.Stream)
		} else {
			err = s.wait(int(e.Stream), int(e.Slot))
		}
		if err != nil {
			return 0, fmt.Errorf("%s (correlation id %d): event %d on stream %d: %w", a.Name, a.Corr, e.Slot, e.Stream, err)
		}
	}
	var err error
	switch a.Block {
	case BlockStream:
		err = s.syncStream(int(a.Target))
	case BlockEvent:
		err = s.syncEvent(int(a.Target))
	case BlockContext:
		err = s.syncContext()
	}
	if err != nil {
		return 0, fmt.Errorf("%s (correlation id %d): %w", a.Name, a.Corr, err)
	}
	ret := r.now()
	end := max(start+a.Dur, ret)
	if wake := r.blockWake(a); a.Block != BlockNone && a.Tail > wake {
		end = max(end, ret+a.Tail-wake)
	}
	r.spinUntil(end)
	r.probe.note(a, work, stamp, start, ret, end)
	return end, nil
}
