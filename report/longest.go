package report

import (
	"cmp"
	"slices"

	"github.com/nsyssync/nsyssync/trace"
)

// longestSyncs returns the indices of the n longest syncs (all when n <=
// 0), longest first, syncs of equal length in index order. A few of many
// are picked with a heap of n, not a sort of all.
func longestSyncs(t *trace.Trace, n int) []int {
	syncs := t.Syncs
	// before orders syncs longest first, then by index.
	before := func(x, y int) int {
		if c := cmp.Compare(syncs[y].Duration(), syncs[x].Duration()); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	}
	if n <= 0 || n >= len(syncs) {
		order := make([]int, len(syncs))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, before)
		return order
	}
	// A heap of the n best so far, the one that would go last on top.
	h := make([]int, 0, n)
	for i := range syncs {
		if len(h) < n {
			h = append(h, i)
			siftUp(h, len(h)-1, before)
			continue
		}
		if before(i, h[0]) < 0 {
			h[0] = i
			siftDown(h, 0, before)
		}
	}
	slices.SortFunc(h, before)
	return h
}

// siftUp and siftDown keep h a heap whose root goes last by before.
func siftUp(h []int, j int, before func(x, y int) int) {
	for j > 0 {
		p := (j - 1) / 2
		if before(h[p], h[j]) >= 0 {
			return
		}
		h[p], h[j] = h[j], h[p]
		j = p
	}
}

func siftDown(h []int, j int, before func(x, y int) int) {
	for {
		c := 2*j + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && before(h[c+1], h[c]) > 0 {
			c++
		}
		if before(h[j], h[c]) >= 0 {
			return
		}
		h[j], h[c] = h[c], h[j]
		j = c
	}
}
