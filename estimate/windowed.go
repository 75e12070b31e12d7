package estimate

import (
	"context"
	"sort"
)

// windowed estimates one site on a large region: it removes chunks of
// consecutive occurrences, replays only a window around each chunk (from
// the thread's previous sync to its second sync after the chunk, where
// host and GPU are back in step), and extrapolates from an even sample of
// chunks when there are more than opt.MaxWindows.
func (e *estimator) windowed(ctx context.Context, syncs []int, opt Options, est *SiteEstimate) error {
	if len(syncs) == 0 {
		return nil
	}
	e.indexThreadSyncs()
	chunks := e.chunks(syncs, opt.ChunkSize)
	if len(chunks) == 0 {
		return nil
	}
	picked := len(chunks)
	if picked > opt.MaxWindows {
		picked = opt.MaxWindows
	}
	var saved int64
	occurrences := 0
	for k := 0; k < picked; k++ {
		chunk := chunks[k*len(chunks)/picked]
		w := e.chunkWindow(chunk)
		base, err := e.sim.replay(ctx, w, nil)
		if err != nil {
			return err
		}
		end, err := e.sim.replay(ctx, w, chunk)
		if err != nil {
			return err
		}
		saved += base - end
		occurrences += len(chunk)
	}
	est.Windows = picked
	est.SavingsNs = saved
	inChunks := 0
	for _, c := range chunks {
		inChunks += len(c)
	}
	if picked < len(chunks) {
		est.Sampled = true
		est.SavingsNs = int64(float64(saved) * float64(inChunks) / float64(occurrences))
	}
	return nil
}

// indexThreadSyncs lists, once, each thread's syncs in call order.
func (e *estimator) indexThreadSyncs() {
	if e.threadSyncs != nil {
		return
	}
	m := e.m
	e.threadSyncs = make([][]int, m.threads)
	e.syncPos = make([]int, len(m.syncs))
	for i := range m.calls {
		c := &m.calls[i]
		if c.syncFirst {
			e.syncPos[c.sync] = len(e.threadSyncs[c.thread])
			e.threadSyncs[c.thread] = append(e.threadSyncs[c.thread], int(c.sync))
		}
	}
}

// chunks groups a site's occurrences into runs of at most size that are
// consecutive occurrences on one thread within one interval.
func (e *estimator) chunks(syncs []int, size int) [][]int {
	m := e.m
	sorted := append([]int(nil), syncs...)
	sort.Slice(sorted, func(a, b int) bool { return m.syncs[sorted[a]].calls[0] < m.syncs[sorted[b]].calls[0] })
	type group struct {
		thread int32
		iv     int
	}
	open := map[group][]int{}
	var out [][]int
	for _, si := range sorted {
		first := m.syncs[si].calls[0]
		iv := e.intervalOf(first)
		if iv < 0 {
			continue
		}
		g := group{m.calls[first].thread, iv}
		open[g] = append(open[g], si)
		if len(open[g]) == size {
			out = append(out, open[g])
			delete(open, g)
		}
	}
	rest := make([][]int, 0, len(open))
	for _, c := range open {
		rest = append(rest, c)
	}
	sort.Slice(rest, func(a, b int) bool { return rest[a][0] < rest[b][0] })
	return append(out, rest...)
}

// intervalOf returns the index of the region interval whose window holds
// call ci, or -1.
func (e *estimator) intervalOf(ci int32) int {
	k := sort.Search(len(e.windows), func(k int) bool { return e.windows[k].hi > ci })
	if k < len(e.windows) && e.windows[k].lo <= ci && e.windows[k].anchor >= 0 {
		return k
	}
	return -1
}

// chunkWindow is the stretch of calls to replay around a chunk.
func (e *estimator) chunkWindow(chunk []int) window {
	m := e.m
	first := m.syncs[chunk[0]].calls[0]
	iv := e.windows[e.intervalOf(first)]
	th := m.calls[first].thread
	list := e.threadSyncs[th]
	lo, hi := iv.lo, iv.hi
	if p := e.syncPos[chunk[0]]; p > 0 {
		lo = max(lo, m.syncs[list[p-1]].calls[0])
	}
	if p := e.syncPos[chunk[len(chunk)-1]] + 2; p < len(list) { // else: to the interval's end
		after := m.syncs[list[p]].calls
		hi = min(hi, after[len(after)-1]+1)
	}
	return window{lo: lo, hi: hi, start: m.calls[lo].start, anchor: th}
}
