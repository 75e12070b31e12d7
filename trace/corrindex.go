package trace

// corrIndex maps (globalPid, correlationId) to a non-negative int32, such
// as an index into a slice of rows. Correlation ids are numbered densely
// per process, so it keeps pages of consecutive ids: a lookup is one
// lookup in a map of a few thousand pages and one array read, where a map
// keyed by the pair would hold an entry (and miss the cache) for each of
// millions of rows. Ids too sparse for pages (a damaged export) fall back
// to a plain map.
//
// Writes must be serialised; reads may run concurrently once writing is
// done.
type corrIndex struct {
	pages  map[corrPageKey]*corrPage
	sparse map[callKey]int32 // non-nil once the ids proved too sparse
	n      int
}

const corrPageBits = 8

type corrPageKey struct{ pid, page int64 }

// corrPage holds value+1 for each id of the page; 0 is absent.
type corrPage [1 << corrPageBits]int32

// sparsePages is the page count past which an index whose pages hold
// fewer than 1 in 8 of their ids on average turns into a map.
const sparsePages = 4096

func newCorrIndex() *corrIndex {
	return &corrIndex{pages: map[corrPageKey]*corrPage{}}
}

func pageOf(pid, corr int64) (corrPageKey, int) {
	return corrPageKey{pid, corr >> corrPageBits}, int(corr & (1<<corrPageBits - 1))
}

// set stores v (0 <= v < MaxInt32) for the key; a second set replaces it.
func (c *corrIndex) set(pid, corr int64, v int) {
	if c.sparse != nil {
		if _, ok := c.sparse[callKey{pid, corr}]; !ok {
			c.n++
		}
		c.sparse[callKey{pid, corr}] = int32(v)
		return
	}
	k, slot := pageOf(pid, corr)
	p := c.pages[k]
	if p == nil {
		if len(c.pages) >= sparsePages && len(c.pages)*(1<<corrPageBits)/8 > c.n {
			c.toSparse()
			c.set(pid, corr, v)
			return
		}
		p = new(corrPage)
		c.pages[k] = p
	}
	if p[slot] == 0 {
		c.n++
	}
	p[slot] = int32(v) + 1
}

// toSparse moves the pages into a map.
func (c *corrIndex) toSparse() {
	c.sparse = make(map[callKey]int32, c.n)
	for k, p := range c.pages {
		for slot, v := range p {
			if v != 0 {
				c.sparse[callKey{k.pid, k.page<<corrPageBits | int64(slot)}] = v - 1
			}
		}
	}
	c.pages = nil
}

// get returns the value stored for the key.
func (c *corrIndex) get(pid, corr int64) (int, bool) {
	if c.sparse != nil {
		v, ok := c.sparse[callKey{pid, corr}]
		return int(v), ok
	}
	k, slot := pageOf(pid, corr)
	p := c.pages[k]
	if p == nil || p[slot] == 0 {
		return 0, false
	}
	return int(p[slot]) - 1, true
}

// has says whether a value is stored for the key.
func (c *corrIndex) has(pid, corr int64) bool {
	_, ok := c.get(pid, corr)
	return ok
}

// len returns the number of keys stored.
func (c *corrIndex) len() int { return c.n }
