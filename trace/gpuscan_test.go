package trace

import (
	"math/rand"
	"sort"
	"testing"
)

// TestSeek compares the galloping search with sort.Search for every hint
// on sorted data with repeats.
func TestSeek(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 2, 7, 64, 1000} {
		data := make([]int, n)
		for i := range data {
			data[i] = rng.Intn(50)
		}
		sort.Ints(data)
		for target := -1; target <= 51; target++ {
			f := func(i int) bool { return data[i] >= target }
			want := sort.Search(n, f)
			for hint := -2; hint <= n+2; hint++ {
				if got := seek(n, hint, f); got != want {
					t.Fatalf("n=%d target=%d hint=%d: seek %d, sort.Search %d", n, target, hint, got, want)
				}
			}
		}
	}
}
