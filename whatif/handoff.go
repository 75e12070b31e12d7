package whatif

import "github.com/nsyssync/nsyssync/trace"

// HandOffMinGapNs: a thread idle at least this long before a call may
// have been waiting on the host for another thread.
const HandOffMinGapNs = 20_000

// LinkHandOffs finds host hand-offs between threads of a process: a
// thread resumes after an idle gap of at least HandOffMinGapNs right after
// another thread made its last call before going idle itself (PyTorch's
// autograd thread runs backward while the main thread waits, then hands
// back). It sets the resumed call's Dep and Lag, so that time saved on one
// thread carries over to the other.
//
// The call waited for is the one that ended last inside the idle gap
// among each other thread's latest call (stepping back over at most 4
// still running when the resumed call began; of equal ends, the thread
// seen first). The replay used to search the 512 calls before the resumed
// one instead: on every fixture and shared-corpus export the two found
// the same hand-offs, and the replay now takes this rule.
func (h *Host) LinkHandOffs() {
	if len(h.Threads) < 2 {
		return
	}
	prev := make([]int32, len(h.Calls))
	next := make([]int32, len(h.Calls))
	last := make([]int32, len(h.Threads))
	for t := range last {
		last[t] = noIndex
	}
	for i := range h.Calls {
		th := h.Calls[i].Thread
		prev[i], next[i] = last[th], noIndex
		if last[th] >= 0 {
			next[last[th]] = int32(i)
		}
		last[th] = int32(i)
	}
	siblings := map[trace.GlobalPid][]int32{} // a process's threads
	for t, th := range h.Threads {
		siblings[th.Pid] = append(siblings[th.Pid], int32(t))
	}
	for t := range last {
		last[t] = noIndex
	}
	for i := range h.Calls {
		c := &h.Calls[i]
		if !c.First && c.Gap >= HandOffMinGapNs {
			if best := h.latestPerThread(c, prev, last, siblings[h.Threads[c.Thread].Pid]); best >= 0 {
				if n := next[best]; n < 0 || h.Calls[n].Start >= c.Start { // else the other thread went on working
					c.Dep, c.Lag = best, c.Start-h.Calls[best].End
				}
			}
		}
		last[c.Thread] = int32(i)
	}
}

// latestPerThread looks, among the other threads' latest calls, for the
// one that ended last inside c's idle gap.
func (h *Host) latestPerThread(c *Call, prev, last []int32, threads []int32) int32 {
	best, bestEnd := noIndex, c.Start-c.Gap
	for _, u := range threads {
		if u == c.Thread {
			continue
		}
		j := last[u]
		for steps := 0; j >= 0 && steps < 4 && h.Calls[j].End > c.Start; steps++ {
			j = prev[j] // a call still running when c began
		}
		if j >= 0 && h.Calls[j].End <= c.Start && h.Calls[j].End > bestEnd {
			best, bestEnd = j, h.Calls[j].End
		}
	}
	return best
}
