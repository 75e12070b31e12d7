package trace

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"math/rand"
	"path/filepath"
	"sort"
	"strings"
	"sync"
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

// TestGPUScanMatchesBruteForce checks the waited work and the GPU gap of
// every sync of the fixtures and of the corpus against a direct
// computation: each sync against each GPU op of the export, read with
// plain SQLite. The scan's sorted groups, galloping cursors and shared
// atomic sums must give exactly what the definitions give.
func TestGPUScanMatchesBruteForce(t *testing.T) {
	files, _ := filepath.Glob("../fixtures/*.sqlite*")
	corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	checked := 0
	for _, path := range append(files, corpus...) {
		x, err := Open(context.Background(), path)
		if errors.Is(err, ErrNoCUDATrace) {
			continue
		}
		if err != nil {
			t.Fatalf("Open(%s): %v", path, err)
		}
		tr, err := x.Load(context.Background(), LoadOptions{})
		if errors.Is(err, ErrNoCUDATrace) {
			x.Close()
			continue
		}
		if err != nil {
			t.Fatalf("Load(%s): %v", path, err)
		}
		si, err := contextLoader{x.src}.loadStreams(context.Background())
		if err != nil {
			t.Fatalf("%s: streams: %v", path, err)
		}
		ops := allGPUOps(t, x, path)
		x.Close()
		if len(ops)*len(tr.Syncs) > 300_000_000 {
			t.Logf("%s: %d syncs × %d ops, too many to check one by one", filepath.Base(path), len(tr.Syncs), len(ops))
			continue
		}
		ix := &opIndex{si: si}
		for i := range tr.Syncs {
			s := &tr.Syncs[i]
			w, g := bruteWait(ix, s, ops)
			if s.Waited != w || s.Gap != g {
				t.Fatalf("%s: sync %d (%s at %d): scan %+v %+v, direct %+v %+v",
					filepath.Base(path), i, s.Reason, s.Start, s.Waited, s.Gap, w, g)
			}
		}
		checked++
	}
	if checked < len(files) {
		t.Fatalf("checked %d exports, want at least the %d fixtures", checked, len(files))
	}
}

// allGPUOps reads every kernel, memcpy, memset and graph row of an export.
func allGPUOps(t *testing.T, x *Export, path string) []gpuOp {
	t.Helper()
	db := rawDB(t, path)
	var ops []gpuOp
	for _, table := range []string{tableKernel, tableMemcpy, tableMemset, tableGraphTrace} {
		if !x.Schema.HasColumn(table, "start") || !x.Schema.HasColumn(table, "streamId") {
			continue
		}
		cols := []string{"start", `"end"`, "deviceId", "streamId", "correlationId", "globalPid"}
		for i, c := range cols[4:] {
			if !x.Schema.HasColumn(table, c) {
				cols[4+i] = "0"
			}
		}
		rows, err := db.Query("SELECT " + strings.Join(cols, ", ") + " FROM " + x.Schema.Name(table))
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		for rows.Next() {
			var v [6]sql.NullInt64
			if err := rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5]); err != nil {
				t.Fatal(err)
			}
			ops = append(ops, gpuOp{start: v[0].Int64, end: v[1].Int64, device: DeviceID(v[2].Int64), stream: StreamID(v[3].Int64), corr: v[4].Int64, pid: GlobalPid(v[5].Int64)})
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return ops
}

// bruteWait computes a sync's waited work and GPU gap from their
// definitions: the ops of its process that ran during the wait on what it
// waited for, and, on its device (any device when unknown), whether an op
// ran across its return, the latest end before and the earliest start
// after.
func bruteWait(ix *opIndex, s *Sync, ops []gpuOp) (Waited, Gap) {
	w := Waited{FirstStart: math.MaxInt64, LastEnd: math.MinInt64}
	busy, next, prev := false, int64(math.MaxInt64), int64(math.MinInt64)
	pid := s.GlobalTid.Process()
	for _, op := range ops {
		if op.pid != pid {
			continue
		}
		if op.start < s.End && op.end > s.Start && op.corr < s.waitCorr && ix.inScope(s, op) {
			w.Ops++
			w.BusyNs += min(op.end, s.End) - max(op.start, s.Start)
			w.FirstStart, w.LastEnd = min(w.FirstStart, op.start), max(w.LastEnd, op.end)
		}
		if s.Device >= 0 && op.device != s.Device {
			continue
		}
		switch {
		case op.start < s.End && s.End < op.end:
			busy = true
		case op.start >= s.End:
			next = min(next, op.start)
		}
		if op.end <= s.End {
			prev = max(prev, op.end)
		}
	}
	if w.Ops == 0 {
		w.FirstStart, w.LastEnd = 0, 0
	}
	g := Gap{DeviceBusy: busy, IdleAfterNs: -1}
	if !busy {
		if next != math.MaxInt64 {
			g.IdleAfterNs = next - s.End
		}
		if prev != math.MinInt64 {
			g.IdleBeforeNs = s.End - prev
		}
	}
	return w, g
}

// TestOpIndexRandom streams random ops of two processes on two devices,
// in a shuffled order split over four goroutines, through the index, and
// compares every sync with the direct computation. The exports hold one
// device each; this covers syncs of unknown device, context and legacy
// scope, and ops that run across several returns.
func TestOpIndexRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	pids := []GlobalPid{1 << 24, 2 << 24}
	si := &streamInfo{nonBlocking: map[[2]int64]bool{{pids[0].Pid(), 3}: true}}
	for trial := range 20 {
		var syncs []Sync
		for _, pid := range pids {
			for th := range int64(2) {
				at := int64(rng.Intn(50))
				for range 40 {
					start := at + int64(rng.Intn(30))
					s := Sync{GlobalTid: GlobalTid(int64(pid) + th + 1), GlobalPid: pid, Start: start, End: start + int64(rng.Intn(60)),
						Device: DeviceID(rng.Intn(3)) - 1, Stream: StreamID(rng.Intn(4)), waitCorr: int64(rng.Intn(400))}
					switch rng.Intn(4) {
					case 0:
						s.Scope = ScopeContext
					case 1:
						s.Legacy = true
					}
					syncs = append(syncs, s)
					at = s.End
				}
			}
		}
		// The inventory is in time order.
		sort.SliceStable(syncs, func(a, b int) bool { return syncs[a].Start < syncs[b].Start })
		ops := make([]gpuOp, 600)
		for i := range ops {
			start := int64(rng.Intn(2000))
			ops[i] = gpuOp{start: start, end: start + int64(rng.Intn(80)), device: DeviceID(rng.Intn(2)),
				stream: StreamID(rng.Intn(4)), corr: int64(rng.Intn(400)), pid: pids[rng.Intn(2)]}
		}
		ix := newOpIndex(syncs, si)
		rng.Shuffle(len(ops), func(a, b int) { ops[a], ops[b] = ops[b], ops[a] })
		var wg sync.WaitGroup
		spans := make([]gpuSpan, 4)
		for w := range spans {
			spans[w] = newGPUSpan()
			wg.Go(func() {
				cur := &cursor{}
				for _, op := range ops[w*len(ops)/4 : (w+1)*len(ops)/4] {
					ix.add(&spans[w], cur, op)
				}
			})
		}
		wg.Wait()
		ix.finish()
		total := newGPUSpan()
		for _, sp := range spans {
			total.merge(sp)
		}
		if total.ops != int64(len(ops)) {
			t.Fatalf("trial %d: %d ops counted, want %d", trial, total.ops, len(ops))
		}
		for i := range syncs {
			s := &syncs[i]
			w, g := bruteWait(ix, s, ops)
			if s.Waited != w || s.Gap != g {
				t.Fatalf("trial %d sync %d %+v: scan %+v %+v, direct %+v %+v", trial, i, *s, s.Waited, s.Gap, w, g)
			}
		}
	}
}
