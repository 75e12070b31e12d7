package trace

import (
	"cmp"
	"math/bits"
	"slices"
)

// corrIndex is a read-only set of (globalPid, correlationId) keys that
// answers a key's rank: its position among the keys in (pid, corr) order,
// so that rows sorted the same way are found by it. Correlation ids are
// numbered per process, so it keeps, per process, one 64-bit word for each
// 64 consecutive ids, with the rank of the word's first key: a lookup is a
// lookup among the processes, an array read and a popcount, in about 0.2
// bytes for each id of the process's range; a map of millions of pairs
// costs 50 bytes each and a cache miss for each lookup. Ids too spread out
// for words (a damaged export) are kept sorted and binary searched.
//
// It is safe for concurrent reads.
type corrIndex struct {
	procs map[int64]*corrDir
}

// corrDir holds one process's keys: words when dense enough, else sorted.
type corrDir struct {
	base   int64 // page number (corr >> 6) of words[0]
	words  []corrWord
	sorted []int64 // the process's ids, when too spread out for words
	first  int     // rank of the process's first key
}

// corrWord marks the present ids of one page of 64; rank is the rank of
// the page's first present id.
type corrWord struct {
	bits uint64
	rank int32
}

// maxWordsPerKey bounds the words kept for each key before a process's
// ids are kept sorted instead (about 64 bytes a key).
const maxWordsPerKey = 4

// newCorrIndex builds the index of keys sorted by (pid, corr), without
// repeats (see sortKeys).
func newCorrIndex(keys []callKey) *corrIndex {
	c := &corrIndex{procs: map[int64]*corrDir{}}
	for lo := 0; lo < len(keys); {
		hi := lo + 1
		for hi < len(keys) && keys[hi].pid == keys[lo].pid {
			hi++
		}
		c.procs[keys[lo].pid] = newCorrDir(keys[lo:hi], lo)
		lo = hi
	}
	return c
}

func newCorrDir(keys []callKey, first int) *corrDir {
	d := &corrDir{first: first, base: keys[0].corr >> 6}
	span := uint64(keys[len(keys)-1].corr>>6) - uint64(d.base) // < 2^58: no overflow
	if span >= uint64(maxWordsPerKey*len(keys)+1024) {
		d.sorted = make([]int64, len(keys))
		for i, k := range keys {
			d.sorted[i] = k.corr
		}
		return d
	}
	d.words = make([]corrWord, span+1)
	for i := range d.words {
		d.words[i].rank = -1
	}
	for i, k := range keys {
		w := &d.words[k.corr>>6-d.base]
		if w.rank < 0 {
			w.rank = int32(first + i)
		}
		w.bits |= 1 << (k.corr & 63)
	}
	return d
}

// rank returns the key's rank, and whether the key is in the set. A nil
// index is empty.
func (c *corrIndex) rank(pid, corr int64) (int, bool) {
	if c == nil {
		return 0, false
	}
	d := c.procs[pid]
	if d == nil {
		return 0, false
	}
	if d.sorted != nil {
		i, ok := slices.BinarySearch(d.sorted, corr)
		return d.first + i, ok
	}
	i := corr>>6 - d.base
	if i < 0 || i >= int64(len(d.words)) {
		return 0, false
	}
	w := d.words[i]
	bit := uint64(1) << (corr & 63)
	if w.bits&bit == 0 {
		return 0, false
	}
	return int(w.rank) + bits.OnesCount64(w.bits&(bit-1)), true
}

// has says whether the key is in the set.
func (c *corrIndex) has(pid, corr int64) bool {
	_, ok := c.rank(pid, corr)
	return ok
}

// sortKeys orders rows by their keys, keeping of rows with the same key
// the last in the given order (a later row of a call replaces an earlier
// one), and returns the rows and their keys; rows[i] has keys[i].
func sortKeys[T any](keys []callKey, rows *chunked[T]) ([]callKey, []T) {
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return compareKeys(keys[a], keys[b]) })
	outKeys := make([]callKey, 0, len(keys))
	outRows := make([]T, 0, len(keys))
	for j, i := range order {
		if j+1 < len(order) && keys[order[j+1]] == keys[i] {
			continue // a later row of the same key follows
		}
		outKeys = append(outKeys, keys[i])
		outRows = append(outRows, *rows.at(int(i)))
	}
	return outKeys, outRows
}

func compareKeys(a, b callKey) int {
	return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.corr, b.corr))
}

// corrRows collects rows keyed by (pid, corr) in any order, for an index.
type corrRows[T any] struct {
	keys chunked[callKey]
	rows chunked[T]
}

func (r *corrRows[T]) add(pid, corr int64, row T) {
	r.keys.append(callKey{pid, corr})
	r.rows.append(row)
}

// index sorts the rows by key (the last row of a key wins) and indexes
// them: rows[index.rank(key)] is the key's row.
func (r *corrRows[T]) index() (*corrIndex, []T) {
	keys, rows := sortKeys(r.keys.appendTo(make([]callKey, 0, r.keys.len())), &r.rows)
	r.rows = chunked[T]{}
	return newCorrIndex(keys), rows
}
