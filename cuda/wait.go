package cuda

import (
	"runtime"
	"time"
)

// Waiting: a replay paces host gaps of microseconds, finer than the
// scheduler's sleeps, so it busy-waits; it sleeps through the part of a
// long wait that lies beyond sleepSlackNs. Go's sleeps wake late by up to
// about 1.2 ms (the netpoller waits in whole milliseconds: time.Sleep of
// 0.7 to 5.3 ms overshot by 0.3 to 1.2 ms on the H100 machine and here),
// so the slack is 2 ms: with 300 µs, waits over 1 ms ended up to 0.9 ms
// late. Where there are too few CPUs for every replay thread to busy-wait
// on its own (runner.spinOnly false), the waits let other goroutines run
// now and then; a yield of a locked thread hands it over to another OS
// thread and back (on the H100 machine 11 µs, median, up to 111 µs), so
// with CPUs enough they do not.
const (
	sleepOverNs  = 3_000_000
	sleepSlackNs = 2_000_000
	// The waits before: waitYield (tests compare them).
	yieldSleepOverNs  = 1_000_000
	yieldSleepSlackNs = 300_000
)

// waitModel chooses how the host waits (the zero value: the replay's).
type waitModel uint8

const (
	// waitPrecise: sleep beyond 2 ms of slack, yield only when CPUs are
	// short.
	waitPrecise waitModel = iota
	// waitYield: sleep beyond 300 µs of slack, always yield (the replay
	// before).
	waitYield
)

func (m waitModel) String() string {
	return [...]string{"sleeps beyond 2 ms, yields only when CPUs are short", "sleeps beyond 300 µs, yields"}[m]
}

// yield lets other goroutines run every 1,024 polls of a busy wait,
// unless spinOnly.
func (r *runner) yield(i int) {
	if i&1023 == 1023 && !r.spinOnly {
		runtime.Gosched()
	}
}

func (r *runner) spinUntil(t int64) {
	over, slack := int64(sleepOverNs), int64(sleepSlackNs)
	if r.wait == waitYield {
		over, slack = yieldSleepOverNs, yieldSleepSlackNs
	}
	if left := t - r.now(); left > over {
		time.Sleep(time.Duration(left - slack))
	}
	for i := 0; r.now() < t; i++ {
		r.yield(i)
	}
}
