package estimate

import "sort"

// overlapLookBack bounds the ops of each other stream examined for overlap.
const overlapLookBack = 32

// opTimes are the replayed start and end of ops; an op whose stamp is not
// the current run's holds its recorded times.
type opTimes struct {
	start, end []int64
	stamp      []uint32
}

// overlap returns how long [st, en) on stream overlaps compute ops of the
// device's other streams launched before it (the first ptr[s] ops of each
// stream s). With t nil it reads recorded times.
func (m *model) overlap(stream int32, st, en int64, ptr []int32, t *opTimes, run uint32) int64 {
	dev := m.streams[stream].device
	if dev < 0 || len(m.devices[dev]) < 2 {
		return 0
	}
	var total int64
	for _, s2 := range m.devices[dev] {
		if s2 == stream {
			continue
		}
		ops := m.streams[s2].ops
		for k, steps := ptr[s2]-1, 0; k >= 0 && steps < overlapLookBack; k, steps = k-1, steps+1 {
			o := ops[k]
			if !m.ops[o].compute {
				continue
			}
			a, b := m.ops[o].recStart, m.ops[o].recEnd
			if t != nil && t.stamp[o] == run {
				a, b = t.start[o], t.end[o]
			}
			if b == minTime { // removed in this run
				continue
			}
			if b <= st {
				break
			}
			total += max(0, min(b, en)-max(a, st))
		}
	}
	return total
}

// contended stretches a compute op's duration by the overlap with other
// streams it gains over the recording (the device's SMs are shared, so
// the later op absorbs the added contention) and gives back half of the
// overlap it loses (a fair share of two).
func contended(dur, overlap, recOverlap int64) int64 {
	if d := overlap - recOverlap; d > 0 {
		return dur + d
	} else {
		return max(dur+d/2, 0)
	}
}

// firstOpFrom returns the position in stream s's ops of its first op
// launched at or after call lo.
func (m *model) firstOpFrom(s int32, lo int32) int32 {
	ops := m.streams[s].ops
	return int32(sort.Search(len(ops), func(k int) bool { return m.ops[ops[k]].call >= lo }))
}
