package trace

import (
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"testing"
)

// TestNeighbourIndexRandom streams random ops of two processes, several
// streams and overlapping syncs of several threads (stream, event, copy
// and context-scope syncs), shuffled over four goroutines, through the
// index, and compares every sync with bruteNeighbours.
func TestNeighbourIndexRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	pids := []GlobalPid{1 << 24, 2 << 24}
	simple, overlapping := 0, 0
	for trial := range 30 {
		var syncs []Sync
		var calls [][]Call
		for _, pid := range pids {
			for th := range int64(1 + trial%3) { // one thread: mostly simple groups
				corr, at := int64(rng.Intn(20)), int64(0)
				for range 30 {
					corr += int64(rng.Intn(12))
					s := Sync{GlobalTid: GlobalTid(int64(pid) + th + 1), GlobalPid: pid, Start: at, Device: DeviceID(rng.Intn(2)), Stream: StreamID(rng.Intn(3)),
						EventID: -1, Context: -1, Scope: ScopeStream, waitCorr: corr}
					at += int64(rng.Intn(10)) + 1
					s.End = at
					cs := []Call{{CorrelationID: corr, GlobalTid: s.GlobalTid}}
					switch rng.Intn(6) {
					case 0: // a copy and its stream sync
						corr += int64(rng.Intn(3)) + 1
						cs = append(cs, Call{CorrelationID: corr, GlobalTid: s.GlobalTid})
						s.waitCorr = corr
					case 1: // an event sync: waited for the work before the record
						s.Scope, s.waitCorr = ScopeEvent, max(corr-int64(rng.Intn(8)), 0)
					case 2: // a device synchronize
						s.Scope, s.Stream = ScopeContext, -1
						if rng.Intn(2) == 0 {
							s.Device = -1
						}
					}
					calls = append(calls, cs)
					syncs = append(syncs, s)
				}
			}
		}
		// The inventory is in time order; the calls stay with their sync.
		order := make([]int, len(syncs))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return syncs[order[a]].Start < syncs[order[b]].Start })
		sorted := make([]Sync, len(syncs))
		for k, i := range order {
			sorted[k] = syncs[i]
			sorted[k].SetCalls(calls[i])
		}
		syncs = sorted
		ops := make([]namedOp, 2000)
		for i := range ops {
			o := gpuOp{device: DeviceID(rng.Intn(2)), stream: StreamID(rng.Intn(3)), corr: int64(rng.Intn(400)), pid: pids[rng.Intn(2)],
				kind: GPUOpKind(rng.Intn(4) + 1), name: -1}
			ref := GPUOpRef{CorrelationID: o.corr, Kind: o.kind}
			switch o.kind {
			case GPUKernel:
				o.name = int64(rng.Intn(6))
				if rng.Intn(10) == 0 {
					o.name += 1 << 31 // interned
				}
				ref.Name = fmt.Sprintf("k%d", o.name)
			case GPUMemcpy:
				o.copyKind, o.bytes = int64(rng.Intn(4)), int64(rng.Intn(3)*4)
				if rng.Intn(10) == 0 {
					o.bytes += 1 << 30 // interned
				}
				ref.Copy, ref.Bytes, ref.Name = normDirection(CopyKind(o.copyKind)), o.bytes, copyName(CopyKind(o.copyKind))
			case GPUMemset:
				o.bytes = int64(rng.Intn(3))
				ref.Bytes, ref.Name = o.bytes, "[memset]"
			case GPUGraph:
				ref.Name = "[graph]"
			}
			ops[i] = namedOp{op: o, ref: ref, tie: tieOf(&o)}
		}
		nb := newNeighbourIndex(syncs)
		for _, g := range nb.groups {
			if g.prev == nil {
				simple++
			} else {
				overlapping++
			}
		}
		rng.Shuffle(len(ops), func(a, b int) { ops[a], ops[b] = ops[b], ops[a] })
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				cur := &neighbourCursor{}
				for _, o := range ops[w*len(ops)/4 : (w+1)*len(ops)/4] {
					nb.add(cur, &o.op)
				}
			})
		}
		wg.Wait()
		lookup := func(ids map[int64]bool) (map[int64]string, error) {
			m := map[int64]string{}
			for id := range ids {
				m[id] = fmt.Sprintf("k%d", id)
			}
			return m, nil
		}
		if err := nb.finish(syncs, lookup); err != nil {
			t.Fatal(err)
		}
		before, after, ambiguous := bruteNeighbours(syncs, ops)
		nonEmpty := 0
		for i := range syncs {
			s := &syncs[i]
			gb, ga := s.GPUBefore(), s.GPUAfter()
			if len(gb) > 0 {
				nonEmpty++
			}
			if ambiguous[i] {
				continue
			}
			if !sameOps(gb, before[i]) || !sameOps(ga, after[i]) {
				lo, hi := s.corrWindow()
				t.Fatalf("trial %d sync %d (scope %s, stream %d, window %d..%d):\nscan   before %+v\n       after  %+v\ndirect before %+v\n       after  %+v",
					trial, i, s.Scope, s.Stream, lo, hi, gb, ga, before[i], after[i])
			}
		}
		if nonEmpty < len(syncs)/4 {
			t.Fatalf("trial %d: only %d of %d syncs have ops before them", trial, nonEmpty, len(syncs))
		}
	}
	if simple == 0 || overlapping == 0 {
		t.Fatalf("%d simple and %d overlapping groups: want both", simple, overlapping)
	}
	t.Logf("%d simple and %d overlapping groups", simple, overlapping)
}
