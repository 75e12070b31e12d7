package trace

import (
	"cmp"
	"math/rand"
	"slices"
	"testing"
)

// TestRangeHitsAttach checks rangeHits.attach against appending each range
// to each sync it encloses and sorting each list (stable, outer first),
// names given as text before those looked up by id; and that syncs of one
// thread inside the same ranges share one list.
func TestRangeHitsAttach(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	for round := 0; round < 50; round++ {
		syncs := make([]Sync, 1+rng.Intn(60))
		for i := range syncs {
			syncs[i].GlobalTid = GlobalTid(rng.Intn(3))
		}
		var h rangeHits
		want := make([][]RangeRef, len(syncs))
		var late []rangePair // names by id go after the others, as before
		for r := 0; r < rng.Intn(40); r++ {
			ref := RangeRef{Name: string(rune('a' + r)), Start: int64(rng.Intn(4)), End: int64(5 + rng.Intn(3))}
			id := int64(-1)
			if rng.Intn(3) == 0 {
				id = int64(r)
			}
			idx := int32(-1)
			for i := range syncs {
				if rng.Intn(3) != 0 {
					continue
				}
				if idx < 0 {
					idx = h.add(ref, id)
				}
				h.pairs.append(rangePair{int32(i), idx})
				if id >= 0 {
					late = append(late, rangePair{int32(i), idx})
				} else {
					want[i] = append(want[i], ref)
				}
			}
		}
		for _, p := range late {
			want[p.sync] = append(want[p.sync], h.ranges[p.rng])
		}
		for _, w := range want {
			slices.SortStableFunc(w, func(a, b RangeRef) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(b.End, a.End)) })
		}
		h.attach(syncs)
		for i := range syncs {
			if got := syncs[i].NVTX(); !slices.Equal(got, want[i]) || cap(got) != len(got) {
				t.Fatalf("round %d sync %d: %v (cap %d), want %v", round, i, got, cap(got), want[i])
			}
			for j := i - 1; j >= 0; j-- {
				if syncs[j].GlobalTid != syncs[i].GlobalTid || len(want[j]) == 0 {
					continue
				}
				if slices.Equal(want[j], want[i]) && syncs[j].nvtx != syncs[i].nvtx {
					t.Errorf("round %d: syncs %d and %d of thread %d have the same ranges in two lists", round, j, i, syncs[i].GlobalTid)
				}
				break
			}
		}
	}
}

// TestSyncLists checks the lists against a map appended to sync by sync,
// for syncs in runs of one thread, alternating, and alone.
func TestSyncLists(t *testing.T) {
	for _, tids := range [][]GlobalTid{nil, {1}, {1, 1, 1}, {1, 2, 1, 2}, {3, 3, 1, 1, 1, 3, 2, 2, 3}} {
		syncs := make([]Sync, len(tids))
		want := map[GlobalTid][]int32{}
		for i, tid := range tids {
			syncs[i].GlobalTid = tid
			want[tid] = append(want[tid], int32(i))
		}
		got := syncLists(syncs, func(s *Sync) GlobalTid { return s.GlobalTid })
		if len(got) != len(want) {
			t.Fatalf("%v: %d lists, want %d", tids, len(got), len(want))
		}
		for tid, w := range want {
			if !slices.Equal(got[tid], w) {
				t.Errorf("%v: thread %d: %v, want %v", tids, tid, got[tid], w)
			}
		}
	}
}
