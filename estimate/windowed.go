package estimate

import (
	"context"
	"sort"
)

// windowed estimates one site's syncs of a large part: it removes chunks
// of consecutive occurrences, replays only a window around each chunk
// (from the thread's previous sync to its second sync after the chunk,
// where host and GPU are back in step), and extrapolates from an even
// sample of chunks when there are more than opt.MaxWindows. It returns
// the saving, the chunks replayed (each a window, its saving a sample for
// the site's interval) and whether they were a sample.
func (p *part) windowed(ctx context.Context, syncs []int, opt Options) (saved int64, samples []chunkSaving, sampled bool, err error) {
	samples, chunks, err := p.chunkSavings(ctx, syncs, opt.ChunkSize, opt.MaxWindows)
	if err != nil || len(samples) == 0 {
		return 0, nil, false, err
	}
	occurrences, inChunks := 0, 0
	for _, c := range samples {
		saved += c.savedNs
		occurrences += c.syncs
	}
	if len(samples) == len(chunks) {
		return saved, samples, false, nil
	}
	for _, c := range chunks {
		inChunks += len(c)
	}
	return int64(float64(saved) * float64(inChunks) / float64(occurrences)), samples, true, nil
}

// chunkSaving is what removing one chunk of a site's occurrences saves,
// replayed in the chunk's window.
type chunkSaving struct {
	savedNs int64
	syncs   int
}

// chunkSavings groups the syncs into chunks of size consecutive
// occurrences on one thread and replays, for at most maxWindows of them
// spread evenly, the chunk's window unchanged and without the chunk. It
// returns each replayed chunk's saving and all the chunks.
func (p *part) chunkSavings(ctx context.Context, syncs []int, size, maxWindows int) ([]chunkSaving, [][]int, error) {
	if len(syncs) == 0 {
		return nil, nil, nil
	}
	p.indexThreadSyncs()
	chunks := p.chunks(syncs, size)
	picked := min(len(chunks), maxWindows)
	out := make([]chunkSaving, 0, picked)
	for k := 0; k < picked; k++ {
		chunk := chunks[k*len(chunks)/picked]
		w := p.chunkWindow(chunk)
		base, err := p.sim.replay(ctx, w, nil)
		if err != nil {
			return nil, nil, err
		}
		end, err := p.sim.replay(ctx, w, chunk)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, chunkSaving{savedNs: base - end, syncs: len(chunk)})
	}
	return out, chunks, nil
}

// indexThreadSyncs lists, once, each thread's syncs in call order.
func (p *part) indexThreadSyncs() {
	if p.threadSyncs != nil {
		return
	}
	m := p.m
	p.threadSyncs = make([][]int, m.threads)
	p.syncPos = make([]int, len(m.syncs))
	for i := range m.host.Calls {
		c := &m.host.Calls[i]
		if c.SyncFirst {
			p.syncPos[c.Sync] = len(p.threadSyncs[c.Thread])
			p.threadSyncs[c.Thread] = append(p.threadSyncs[c.Thread], int(c.Sync))
		}
	}
}

// chunks groups a site's occurrences into runs of at most size that are
// consecutive occurrences on one thread within one interval.
func (p *part) chunks(syncs []int, size int) [][]int {
	m := p.m
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
		iv := p.intervalOf(first)
		if iv < 0 {
			continue
		}
		g := group{m.host.Calls[first].Thread, iv}
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
func (p *part) intervalOf(ci int32) int {
	k := sort.Search(len(p.windows), func(k int) bool { return p.windows[k].hi > ci })
	if k < len(p.windows) && p.windows[k].lo <= ci && p.windows[k].anchor >= 0 {
		return k
	}
	return -1
}

// chunkWindow is the stretch of calls to replay around a chunk.
func (p *part) chunkWindow(chunk []int) window {
	m := p.m
	first := m.syncs[chunk[0]].calls[0]
	iv := p.windows[p.intervalOf(first)]
	th := m.host.Calls[first].Thread
	list := p.threadSyncs[th]
	lo, hi := iv.lo, iv.hi
	if k := p.syncPos[chunk[0]]; k > 0 {
		lo = max(lo, m.syncs[list[k-1]].calls[0])
	}
	if k := p.syncPos[chunk[len(chunk)-1]] + 2; k < len(list) { // else: to the interval's end
		after := m.syncs[list[k]].calls
		hi = min(hi, after[len(after)-1]+1)
	}
	return window{lo: lo, hi: hi, start: m.host.Calls[lo].Start, anchor: th}
}
