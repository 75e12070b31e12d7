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
// GPU.
func (l *lateLaunches) add(m *model, r *recorded, in []bool) {
	busy := m.deviceBusy()
	for i := range m.calls {
		call, h := &m.calls[i], &m.host.Calls[i]
		if !in[i] {
			continue
		}
		for o := call.opLo; o < call.opHi; o++ {
			op := &m.ops[o]
			if !op.launched || !op.compute || r.ready[o] > h.End || op.recStart < h.End {
				continue
			}
			if dev := m.streams[op.stream].device; dev < 0 || busy[dev].runningBetween(h.End, op.recStart) {
				continue
			}
			l.idle++
			if d := op.recStart - h.End; d > lateLaunchNs {
				l.delays = append(l.delays, d)
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
		type span struct{ start, end int64 }
		var spans []span
		for _, s := range streams {
			for _, o := range m.streams[s].ops {
				spans = append(spans, span{m.ops[o].recStart, m.ops[o].recEnd})
			}
		}
		sort.Slice(spans, func(a, b int) bool { return spans[a].start < spans[b].start })
		b := busySpans{starts: make([]int64, len(spans)), maxEnd: make([]int64, len(spans))}
		hi := int64(minTime)
		for i, sp := range spans {
			hi = max(hi, sp.end)
			b.starts[i], b.maxEnd[i] = sp.start, hi
		}
		out[d] = b
	}
	return out
}
