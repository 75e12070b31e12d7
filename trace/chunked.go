package trace

// chunked is an append-only list that grows by fixed-size chunks instead
// of doubling one array: a list of millions of rows is never copied while
// it grows, and never holds twice its size.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

const chunkBits = 14

func (c *chunked[T]) append(v T) {
	if c.n&(1<<chunkBits-1) == 0 {
		c.chunks = append(c.chunks, make([]T, 0, 1<<chunkBits))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
}

// at returns the i-th element.
func (c *chunked[T]) at(i int) *T { return &c.chunks[i>>chunkBits][i&(1<<chunkBits-1)] }

func (c *chunked[T]) len() int { return c.n }

// appendTo appends the elements to dst, in order, and frees the chunks.
func (c *chunked[T]) appendTo(dst []T) []T {
	for i, ch := range c.chunks {
		dst = append(dst, ch...)
		c.chunks[i] = nil
	}
	c.chunks, c.n = nil, 0
	return dst
}
