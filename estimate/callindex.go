package estimate

import "github.com/nsyssync/nsyssync/trace"

// callIndex finds a model call by (globalPid, correlation id). CUPTI
// numbers a process's calls in order (nsys records about one id in seven
// in a PyTorch loop: the rest are calls it does not trace), so a dense
// table per process serves a large timeline without hashing each call; a
// process whose ids are sparser than one in 16 gets a map.
type callIndex struct {
	pids map[int64]*pidCalls
}

type pidCalls struct {
	base   int64
	dense  []int32 // corr-base -> call index, -1 when none
	sparse map[int64]int32
}

type callKey struct{ pid, corr int64 }

// newCallIndex indexes keys[i] -> i.
func newCallIndex(keys []callKey) *callIndex {
	type span struct {
		lo, hi int64
		n      int
	}
	spans := map[int64]*span{}
	var s *span
	lastPid := int64(-1)
	for _, k := range keys {
		if s == nil || k.pid != lastPid {
			s, lastPid = spans[k.pid], k.pid
		}
		if s == nil {
			s = &span{lo: k.corr, hi: k.corr}
			spans[k.pid] = s
		}
		s.lo, s.hi, s.n = min(s.lo, k.corr), max(s.hi, k.corr), s.n+1
	}
	ix := &callIndex{pids: make(map[int64]*pidCalls, len(spans))}
	for pid, s := range spans {
		pc := &pidCalls{base: s.lo}
		if width := s.hi - s.lo + 1; width <= 16*int64(s.n)+1024 {
			pc.dense = make([]int32, width)
			for i := range pc.dense {
				pc.dense[i] = -1
			}
		} else {
			pc.sparse = make(map[int64]int32, s.n)
		}
		ix.pids[pid] = pc
	}
	for i, k := range keys {
		pc := ix.pids[k.pid]
		if pc.dense != nil {
			pc.dense[k.corr-pc.base] = int32(i)
		} else {
			pc.sparse[k.corr] = int32(i)
		}
	}
	return ix
}

func (ix *callIndex) lookup(pid trace.GlobalPid, corr int64) (int32, bool) {
	pc := ix.pids[int64(pid)]
	if pc == nil {
		return -1, false
	}
	if pc.dense == nil {
		i, ok := pc.sparse[corr]
		return i, ok
	}
	if j := corr - pc.base; j >= 0 && j < int64(len(pc.dense)) && pc.dense[j] >= 0 {
		return pc.dense[j], true
	}
	return -1, false
}
