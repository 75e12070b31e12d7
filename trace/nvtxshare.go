package trace

import (
	"cmp"
	"slices"
)

// rangeHits collects, while attachRanges streams the NVTX table, the
// ranges that enclose syncs: each such row once, and one pair a sync it
// encloses (8 bytes where a RangeRef takes 48), so that a range around a
// thousand syncs is not copied a thousand times.
type rangeHits struct {
	ranges []RangeRef
	// textIDs: per range, the StringIds id of a name still to look up,
	// -1 for a name the row gave as text.
	textIDs []int64
	pairs   chunked[rangePair] // in the order of the rows
}

// rangePair says that range rng (in rangeHits.ranges) encloses sync sync.
type rangePair struct{ sync, rng int32 }

// syncLists lists the indexes of the syncs by key (thread or process), in
// the order of the syncs, carved from one array sized once. Syncs come in
// runs of one key (a thread's syncs follow each other), so the maps are
// touched once a run, not once a sync.
func syncLists[K comparable](syncs []Sync, key func(*Sync) K) map[K][]int32 {
	// runEnd returns the end of the run of key k that begins at i.
	runEnd := func(i int, k K) int {
		for i++; i < len(syncs) && key(&syncs[i]) == k; i++ {
		}
		return i
	}
	count := map[K]int32{}
	for i := 0; i < len(syncs); {
		k := key(&syncs[i])
		j := runEnd(i, k)
		count[k] += int32(j - i)
		i = j
	}
	all := make([]int32, 0, len(syncs))
	out := make(map[K][]int32, len(count))
	for k, n := range count {
		out[k] = all[len(all) : len(all) : len(all)+int(n)]
		all = all[:len(all)+int(n)]
	}
	for i := 0; i < len(syncs); {
		k := key(&syncs[i])
		j, list := runEnd(i, k), out[k]
		for ; i < j; i++ {
			list = append(list, int32(i))
		}
		out[k] = list
	}
	return out
}

// add records a range that encloses some sync and returns its index.
func (h *rangeHits) add(ref RangeRef, textID int64) int32 {
	h.ranges = append(h.ranges, ref)
	h.textIDs = append(h.textIDs, textID)
	return int32(len(h.ranges) - 1)
}

// attach gives each sync its ranges, outer to inner: by start, the longer
// first, then those named as text before those named by id, then in the
// order of the rows. A sync inside the same ranges as the previous sync of
// its thread shares that sync's list; lists are carved from blocks with
// their capacity equal to their length, so that appending to one copies it.
func (h *rangeHits) attach(syncs []Sync) {
	// The ranges of sync i are byRange[first[i]:first[i+1]], in the order
	// of the rows (a stable counting sort of the pairs by sync).
	first := make([]int32, len(syncs)+1)
	for _, ch := range h.pairs.chunks {
		for _, p := range ch {
			first[p.sync+1]++
		}
	}
	for i := range syncs {
		first[i+1] += first[i]
	}
	byRange := make([]int32, h.pairs.len())
	next := slices.Clone(first[:len(syncs)])
	for i, ch := range h.pairs.chunks {
		for _, p := range ch {
			byRange[next[p.sync]] = p.rng
			next[p.sync]++
		}
		h.pairs.chunks[i] = nil
	}
	h.pairs, next = chunked[rangePair]{}, nil
	byID := func(r int32) int { // 1 for a name looked up by id
		if h.textIDs[r] >= 0 {
			return 1
		}
		return 0
	}
	outer := func(a, b int32) int {
		ra, rb := &h.ranges[a], &h.ranges[b]
		return cmp.Or(cmp.Compare(ra.Start, rb.Start), cmp.Compare(rb.End, ra.End), cmp.Compare(byID(a), byID(b)))
	}
	type shared struct {
		ids  []int32
		refs *[]RangeRef
	}
	last := map[GlobalTid]shared{} // the list of its previous sync with ranges
	var block []RangeRef
	for i := range syncs {
		ids := byRange[first[i]:first[i+1]]
		if len(ids) == 0 {
			continue
		}
		slices.SortStableFunc(ids, outer)
		tid := syncs[i].GlobalTid
		if prev, ok := last[tid]; ok && slices.Equal(prev.ids, ids) {
			syncs[i].nvtx = prev.refs
			continue
		}
		if len(ids) > cap(block)-len(block) {
			block = make([]RangeRef, 0, max(len(ids), 1024))
		}
		refs := block[len(block) : len(block)+len(ids) : len(block)+len(ids)]
		block = block[:len(block)+len(ids)]
		for j, r := range ids {
			refs[j] = h.ranges[r]
		}
		syncs[i].nvtx = &refs
		last[tid] = shared{ids, &refs}
	}
}
