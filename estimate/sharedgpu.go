package estimate

import (
	"fmt"
	"sort"
	"time"
)

// A GPU shared with work the trace does not hold. A kernel launched onto
// an idle GPU (its stream has nothing left to run, and no op of the trace
// runs on its device) starts within a few microseconds of its launch call
// returning: at most 12 µs on every serial capture of the project's
// fixtures and the corpus's dedicated GPUs. Where such kernels start
// hundreds of microseconds to milliseconds late, the GPU was running
// something else: another process (a second capture run side by side,
// training, a display), or a platform that holds launches back. The
// recorded times, and every saving replayed from them, then include that
// contention, which the program does not make; the report says so
// (docs/estimator.md, "A shared GPU").

// lateLaunchNs: a kernel that reaches an idle GPU this long after its
// launch call returned waited behind work the trace does not hold.
const lateLaunchNs = 100_000

// minLateLaunches and minLateShare: the report warns of a shared GPU when
// at least this many late launches delay the region by at least this
// share of its time together.
const (
	minLateLaunches = 3
	minLateShare    = 0.01
)

// lateLaunches counts the kernels launched onto an idle GPU and the
// delays of the late ones.
type lateLaunches struct {
	idle   int
	delays []int64
}

// add reads the model's kernels launched inside the region onto an idle
// GPU. Most traces have no kernel that starts late even on an idle stream;
// for them the devices' busy spans are not built.
func (l *lateLaunches) add(m *model, r *recorded, in []bool) {
	late := 0
	m.idleStreamLaunches(r, in, func(o int32, after int64) {
		if m.ops[o].recStart-after > lateLaunchNs {
			late++
		}
	})
	if late >= minLateLaunches {
		l.addAll(m, r, in)
	}
}

// addAll counts every kernel launched inside the region onto an idle GPU.
func (l *lateLaunches) addAll(m *model, r *recorded, in []bool) {
	busy := m.deviceBusy()
	m.idleStreamLaunches(r, in, func(o int32, after int64) {
		op := &m.ops[o]
		if dev := m.streams[op.stream].device; dev < 0 || busy[dev].runningBetween(after, op.recStart) {
			return
		}
		l.idle++
		if d := op.recStart - after; d > lateLaunchNs {
			l.delays = append(l.delays, d)
		}
	})
}

// idleStreamLaunches calls fn with each kernel launched inside the region
// onto a stream with nothing left to run when its launch call returned
// (at after), which started after that.
func (m *model) idleStreamLaunches(r *recorded, in []bool, fn func(o int32, after int64)) {
	for i := range m.calls {
		call, h := &m.calls[i], &m.host.Calls[i]
		if !in[i] {
			continue
		}
		for o := call.opLo; o < call.opHi; o++ {
			if op := &m.ops[o]; op.launched && op.compute && r.ready[o] <= h.End && op.recStart >= h.End {
				fn(o, h.End)
			}
		}
	}
}

// merge adds another model's counts.
func (l *lateLaunches) merge(o *lateLaunches) {
	l.idle += o.idle
	l.delays = append(l.delays, o.delays...)
}

// warning is the report's note ("" when the late launches are too few or
// too short to matter against the region's duration).
func (l *lateLaunches) warning(regionNs int64) string {
	var total int64
	for _, d := range l.delays {
		total += d
	}
	if len(l.delays) < minLateLaunches || regionNs <= 0 || float64(total) < minLateShare*float64(regionNs) {
		return ""
	}
	sorted := append([]int64(nil), l.delays...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a] < sorted[b] })
	return fmt.Sprintf("the GPU looks shared: %d of the %d kernels launched onto an idle GPU started late, %s after their launch call returned (lower median; up to %s), %s in all (%.1f%% of the region), where a dedicated GPU starts them within about 10µs; "+
		"another process was likely running on it (a second capture, a job, a display) or the platform holds launches back. The recorded times and the savings replayed from them include that contention: profile on a GPU of its own to measure the program alone",
		len(sorted), l.idle, fmtNs(sorted[(len(sorted)-1)/2]), fmtNs(sorted[len(sorted)-1]), fmtNs(total), 100*float64(total)/float64(regionNs))
}

// fmtNs prints a duration rounded to a readable precision.
func fmtNs(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}

// busySpans are one device's recorded ops, by start, with the running
// maximum of their ends.
type busySpans struct {
	starts, maxEnd []int64
}

// Len, Less and Swap sort the spans by start (maxEnd holds the ends until
// deviceBusy turns them into the running maximum).
func (b busySpans) Len() int           { return len(b.starts) }
func (b busySpans) Less(i, j int) bool { return b.starts[i] < b.starts[j] }
func (b busySpans) Swap(i, j int) {
	b.starts[i], b.starts[j] = b.starts[j], b.starts[i]
	b.maxEnd[i], b.maxEnd[j] = b.maxEnd[j], b.maxEnd[i]
}

// runningBetween says whether an op other than one starting at t1 ran
// during [t0, t1): one that started before t1 and ended after t0.
func (b busySpans) runningBetween(t0, t1 int64) bool {
	k := sort.Search(len(b.starts), func(i int) bool { return b.starts[i] >= t1 })
	return k > 0 && b.maxEnd[k-1] > t0
}

// deviceBusy returns each device's busySpans.
func (m *model) deviceBusy() []busySpans {
	out := make([]busySpans, len(m.devices))
	for d, streams := range m.devices {
		n := 0
		for _, s := range streams {
			n += len(m.streams[s].ops)
		}
		b := busySpans{starts: make([]int64, 0, n), maxEnd: make([]int64, 0, n)}
		for _, s := range streams {
			for _, o := range m.streams[s].ops {
				b.starts, b.maxEnd = append(b.starts, m.ops[o].recStart), append(b.maxEnd, m.ops[o].recEnd)
			}
		}
		sort.Sort(b)
		for i := 1; i < len(b.maxEnd); i++ {
			b.maxEnd[i] = max(b.maxEnd[i], b.maxEnd[i-1])
		}
		out[d] = b
	}
	return out
}
