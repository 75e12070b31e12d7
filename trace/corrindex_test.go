package trace

import (
	"math"
	"testing"
)

func TestCorrIndex(t *testing.T) {
	type entry struct{ pid, corr int64 }
	dense := func(n int) []entry {
		var out []entry
		for i := range n {
			out = append(out, entry{1 << 24, int64(i)})
		}
		return out
	}
	sparse := func(n int) []entry {
		var out []entry
		for i := range n {
			out = append(out, entry{2 << 24, int64(i) * 100_000})
		}
		return out
	}
	tests := []struct {
		name       string
		entries    []entry
		wantSparse bool
	}{
		{"dense ids of one process", dense(5000), false},
		{"two processes, same ids", append(dense(300), entry{7 << 24, 5}, entry{7 << 24, 299}), false},
		{"extreme and negative ids", []entry{{1, -1}, {1, math.MinInt64}, {1, math.MaxInt64}, {-5, 3}, {1, 0}}, false},
		{"ids too sparse for pages", sparse(sparsePages + 100), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCorrIndex()
			for i, e := range tt.entries {
				c.set(e.pid, e.corr, i)
			}
			if c.len() != len(tt.entries) {
				t.Fatalf("len = %d, want %d", c.len(), len(tt.entries))
			}
			if got := c.sparse != nil; got != tt.wantSparse {
				t.Errorf("sparse = %v, want %v", got, tt.wantSparse)
			}
			for i, e := range tt.entries {
				if v, ok := c.get(e.pid, e.corr); !ok || v != i {
					t.Fatalf("get(%d, %d) = %d, %v; want %d, true", e.pid, e.corr, v, ok, i)
				}
			}
			// Absent keys: another process, a neighbouring id.
			for _, e := range tt.entries[:1] {
				if c.has(e.pid+1<<24, e.corr) {
					t.Errorf("has(%d, %d) for a process never set", e.pid+1<<24, e.corr)
				}
			}
			// Replacing keeps the count.
			e := tt.entries[0]
			c.set(e.pid, e.corr, 42)
			if v, _ := c.get(e.pid, e.corr); v != 42 || c.len() != len(tt.entries) {
				t.Errorf("after replacing: get = %d, len = %d; want 42, %d", v, c.len(), len(tt.entries))
			}
		})
	}
}

func TestCorrIndexAbsentNeighbours(t *testing.T) {
	c := newCorrIndex()
	c.set(1, 10, 0)
	c.set(1, 12, 1)
	for _, corr := range []int64{9, 11, 13, 10 + 1<<corrPageBits} {
		if c.has(1, corr) {
			t.Errorf("has(1, %d) = true; only 10 and 12 were set", corr)
		}
	}
}
