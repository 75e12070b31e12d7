package cuda

import "fmt"

// The replay's two corrections at the edges of a wait: a synchronize's
// wake-up taken as that of the work it waited for, and the launch path
// warmed before a round's clock starts.

// queuedWake notes the wake-up of a synchronize on w, just queued: a
// spin's of its launch, a copy's or a memset's the model's.
func (r *runner) queuedWake(w *Work) {
	wake := r.model.WakeNs
	if w.Kind == WorkSpin && w.Shape > 0 && int(w.Shape) < len(r.wakes) {
		wake = r.wakes[w.Shape]
	}
	if int(w.Stream) < len(r.streamWake) {
		r.streamWake[w.Stream].Store(wake)
	}
	r.lastWake.Store(wake)
}

// recordedWake notes that event slot now stands for what stream last
// queued.
func (r *runner) recordedWake(slot, stream int32) {
	if int(slot) < len(r.eventWake) && int(stream) < len(r.streamWake) {
		r.eventWake[slot].Store(r.streamWake[stream].Load())
	}
}

// blockWake is the wake-up of a's synchronize: that of the last work
// queued on its stream, on its event's stream when recorded, or on the
// GPU (a context synchronize), the model's where none is known. The
// recorded call's Tail holds the recorded wake-up; the replay waits out
// the rest.
func (r *runner) blockWake(a *Action) int64 {
	var w int64
	switch a.Block {
	case BlockStream:
		if int(a.Target) < len(r.streamWake) {
			w = r.streamWake[a.Target].Load()
		}
	case BlockEvent:
		if int(a.Target) < len(r.eventWake) {
			w = r.eventWake[a.Target].Load()
		}
	case BlockContext:
		w = r.lastWake.Load()
	}
	if w <= 0 {
		return r.model.WakeNs
	}
	return w
}

// warmLaunch launches an empty one-warp spin from thread th, before the
// clock starts, on the stream of the thread's first spin, unless work
// recorded before the interval is pending there. The first launch of a
// round, after the previous round's wait and the collector, otherwise
// takes 15-22 µs on an H200 where the next take 4-5: a fixed cost each
// round that the recorded program, already launching, did not pay (the
// self-check of a 173 µs region read +10% from it, docs/replay.md). A
// recorded first launch that was slow is still paced to its recorded
// time.
func (ir *intervalRun) warmLaunch(th int) error {
	st, ok := ir.iv.warmStream(th)
	if !ok {
		return nil
	}
	if err := ir.r.sess.spin(int(st), 0, oneWarp, -1); err != nil {
		return fmt.Errorf("warming the launches on stream %d: %w", st, err)
	}
	return nil
}

// warmStream is the stream of thread th's first spin, when the thread
// launches one and no work recorded before the interval is pending there.
func (iv *IntervalPlan) warmStream(th int) (int32, bool) {
	for _, w := range iv.Threads[th].Work {
		if w.Kind == WorkCopy || w.Kind == WorkMemset {
			continue
		}
		for _, pw := range iv.Pending {
			if pw.Stream == w.Stream {
				return 0, false
			}
		}
		return w.Stream, true
	}
	return 0, false
}
