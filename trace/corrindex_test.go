package trace

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestCorrIndex(t *testing.T) {
	stride := func(pid int64, n int, step int64) []callKey {
		var out []callKey
		for i := range n {
			out = append(out, callKey{pid, int64(i) * step})
		}
		return out
	}
	tests := []struct {
		name       string
		keys       []callKey
		wantSorted bool // kept sorted rather than as words
	}{
		{"dense ids of one process", stride(1<<24, 5000, 1), false},
		{"ids 1 in 75, as copies among calls", stride(1<<24, 5000, 75), false},
		{"two processes, same ids", append(stride(1<<24, 300, 3), stride(7<<24, 300, 3)...), false},
		{"extreme and negative ids", []callKey{{1, math.MinInt64}, {1, -1}, {1, 0}, {1, math.MaxInt64}, {2, 3}}, true},
		{"ids too spread out for words", stride(2<<24, 5000, 1_000_000), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Shuffled, with a repeat whose later row must win.
			rng := rand.New(rand.NewPCG(1, 2))
			keys := append([]callKey(nil), tt.keys...)
			rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			var rows corrRows[int]
			rows.add(keys[0].pid, keys[0].corr, -1) // replaced below
			for i, k := range keys {
				rows.add(k.pid, k.corr, i)
			}
			ix, sorted := rows.index()
			if len(sorted) != len(tt.keys) {
				t.Fatalf("%d rows, want %d", len(sorted), len(tt.keys))
			}
			gotSorted := false
			for _, d := range ix.procs {
				gotSorted = gotSorted || d.sorted != nil
			}
			if gotSorted != tt.wantSorted {
				t.Errorf("kept sorted = %v, want %v", gotSorted, tt.wantSorted)
			}
			for i, k := range keys {
				r, ok := ix.rank(k.pid, k.corr)
				if !ok || sorted[r] != i {
					t.Fatalf("rank(%d, %d) = %d, %v: row %d; want row %d", k.pid, k.corr, r, ok, sorted[r], i)
				}
			}
			k := keys[0]
			for _, absent := range []callKey{{k.pid + 1<<24, k.corr}, {k.pid, k.corr + 1}} {
				if ix.has(absent.pid, absent.corr) && !contains(tt.keys, absent) {
					t.Errorf("has(%d, %d) for a key never added", absent.pid, absent.corr)
				}
			}
		})
	}
}

func contains(keys []callKey, k callKey) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

func TestCorrIndexEmpty(t *testing.T) {
	var rows corrRows[int]
	ix, sorted := rows.index()
	if ix.has(0, 0) || len(sorted) != 0 {
		t.Errorf("empty index: has = %v, rows = %d", ix.has(0, 0), len(sorted))
	}
}

func TestCorrIndexNil(t *testing.T) {
	var ix *corrIndex // an export without the table
	if ix.has(1, 2) {
		t.Error("nil index: has = true")
	}
}
