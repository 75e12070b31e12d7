package trace

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// writeLoader reads the OS-runtime writes that may follow a sync's read. It reads through the export's source.
type writeLoader struct{ *source }

// tableOSRT is nsys's OS-runtime trace (on in a default capture).
const tableOSRT = "OSRT_API"

// WriteNames are the OS-runtime calls WroteAfter counts as writes, as nsys
// names them in StringIds: the write system calls and the C library's
// stream output. A Python print or logging call ends in write (CPython's
// own buffered I/O calls it directly); C and C++ code prints through the
// stdio calls, fflush included (it is what writes a buffered line out).
// Sockets (send, sendto, sendmsg) are left out: distributed training
// talks through them, and a scalar sent to another process is not output.
var WriteNames = []string{
	"write", "__write", "__write_nocancel", "writev", "pwrite", "pwrite64", "pwritev", "pwritev2", "pwritev64",
	"fwrite", "fwrite_unlocked", "fputs", "fputs_unlocked", "puts", "fputc", "fputc_unlocked",
	"putc", "putc_unlocked", "putchar", "putchar_unlocked", "fflush", "fflush_unlocked",
}

// hostAfter is the OS-runtime write that followed a sync (Sync.HostAfter).
type hostAfter struct {
	name    string
	delayNs int64
}

// WroteAfter reports whether the sync's thread made an OS-runtime write
// (a call named in WriteNames, read from OSRT_API) that began after the
// sync returned and before the thread's next CUDA API call: exactly, a
// write of the same globalTid whose start w has End < w < next, where
// next is the earliest start of any CUPTI_ACTIVITY_KIND_RUNTIME row of the
// thread (kernel launches and every other call, backtrace rows included)
// after End, or the thread's next sync's start if that is earlier (it is
// only when it starts at End itself); +∞ when there is neither. It is
// what a print or a log line of the value read looks like (print(f"{x.item()}")).
//
// False also when the export has no OS-runtime trace (Evidence.OSRT
// false: a capture with --trace=cuda,… only): then it says nothing. nsys
// records only the OS-runtime calls longer than its threshold
// (--osrt-threshold, 1 µs by default in nsys 2025.3; the shortest write
// of the labelled default captures lasts exactly 1 µs), so a short write
// may be missing.
func (s *Sync) WroteAfter() bool {
	return s.detail != nil && s.detail.host != nil
}

// HostAfter returns the first write of WroteAfter: its name as nsys
// recorded it ("write", "fwrite", …) and how long after the sync's End it
// began (ns); ok false when WroteAfter is.
func (s *Sync) HostAfter() (name string, delayNs int64, ok bool) {
	if !s.WroteAfter() {
		return "", 0, false
	}
	h := s.detail.host
	return h.name, h.delayNs, true
}

// SetHostAfter sets the write of HostAfter; an empty name clears it.
// Copies of the Sync made before keep theirs.
func (s *Sync) SetHostAfter(name string, delayNs int64) {
	d := s.cloneDetail()
	d.host = nil
	if name != "" {
		d.host = &hostAfter{name: name, delayNs: delayNs}
	}
}

// hostWrites holds the OS-runtime writes of an export, by thread, and,
// filled while the runtime table streams past (see), the latest CUDA API
// call start at or before each write.
//
// A write w follows the sync s of its thread with the latest End < w
// exactly when no runtime row of the thread starts in (End, w], that is
// when the latest start at or before w is at most End (and the thread's
// next sync does not start at End). So the runtime table is read once,
// by the scan that reads the calls: each row raises the value of the
// first write at or after it, and a prefix maximum over each thread's
// writes gives every write its latest call before it. The syncs are not
// needed until then, so the rows need no second pass.
//
// Cost: nothing but a schema lookup without an OSRT_API table; with one,
// a read of that table (its rows cost what any table's do: on a 256 MiB
// training export with OSRT_API replicated with the rest, 685 k rows,
// about 50 ms of Load's 0.6–0.7 s) and, per runtime row, a comparison of
// its thread with the cursor's and of its start with the write it falls
// before (about 10 ms CPU for 2.4 M rows).
type hostWrites struct {
	threads map[int64]*threadWrites // by globalTid
	names   map[int64]string        // write name ids
	rows    int64

	mu      sync.Mutex
	cursors []*writeCursor // the scan's, flushed by attach
}

// threadWrites are one thread's writes, sorted by start.
type threadWrites struct {
	start []int64
	name  []int64
	// last[k]: the latest runtime row start t with start[k-1] < t ≤
	// start[k] (math.MinInt64 for none), shared by the scanning goroutines;
	// a prefix maximum makes it the latest t ≤ start[k].
	last []atomic.Int64
}

// loadHostWrites reads the export's OS-runtime writes; nil, at the cost
// of a look at the schema, when it has no OS-runtime trace, and at the
// cost of one query on StringIds when that trace holds no write.
func (ld writeLoader) loadHostWrites(ctx context.Context, ev *Evidence) (*hostWrites, error) {
	s := ld.Schema
	if !s.Has(tableOSRT) || !s.HasColumn(tableOSRT, "start") || !s.HasColumn(tableOSRT, "nameId") || !s.HasColumn(tableOSRT, "globalTid") {
		return nil, nil
	}
	q := fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s)`, s.Name(tableOSRT))
	v, dest := nullInts(1)
	if _, err := ld.scanRows(ctx, "reading OS runtime calls", q, dest, func() error { return nil }); err != nil {
		return nil, err
	}
	if v[0].Int64 != 1 {
		return nil, nil
	}
	ev.OSRT = true
	hw := &hostWrites{threads: map[int64]*threadWrites{}, names: map[int64]string{}}
	quoted := make([]string, len(WriteNames))
	for i, n := range WriteNames {
		quoted[i] = "'" + n + "'"
	}
	var id sql.NullInt64
	var val sql.NullString
	q = fmt.Sprintf(`SELECT id, value FROM %s WHERE value IN (%s)`, s.Name(tableStrings), strings.Join(quoted, ","))
	if _, err := ld.scanRows(ctx, "reading OS runtime names", q, []any{&id, &val}, func() error {
		hw.names[id.Int64] = val.String
		return nil
	}); err != nil {
		return nil, err
	}
	if len(hw.names) == 0 {
		return nil, nil
	}
	isWrite := idSet(hw.names)
	ids := make([]int64, 0, len(hw.names))
	for id := range hw.names {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	// Each part collects its writes by thread; the parts are in rowid
	// order, which is nearly time order, so each thread's list needs
	// little sorting once they are put end to end.
	type write struct{ start, name int64 }
	var mu sync.Mutex
	parts := map[int]map[int64][]write{}
	scan := intScan{what: "reading OS runtime calls", table: tableOSRT,
		cols:  []intCol{col("globalTid"), col("start"), col("nameId")},
		where: fmt.Sprintf("nameId IN (%s)", inList(ids)),
		keep: func(v []sql.NullInt64) bool {
			return v[0].Valid && v[1].Valid && v[2].Valid && isWrite(v[2].Int64)
		}}
	n, err := ld.scanInts(ctx, scan, func(_, p int) func(v []sql.NullInt64) error {
		part := map[int64][]write{}
		mu.Lock()
		parts[p] = part
		mu.Unlock()
		return func(v []sql.NullInt64) error {
			part[v[0].Int64] = append(part[v[0].Int64], write{v[1].Int64, v[2].Int64})
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	hw.rows = n
	byThread := map[int64][]write{}
	for _, p := range slices.Sorted(maps.Keys(parts)) {
		for tid, ws := range parts[p] {
			byThread[tid] = append(byThread[tid], ws...)
		}
	}
	for tid, ws := range byThread {
		byTime := func(a, b write) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.name, b.name)) }
		if !slices.IsSortedFunc(ws, byTime) {
			slices.SortFunc(ws, byTime)
		}
		tw := &threadWrites{start: make([]int64, len(ws)), name: make([]int64, len(ws)), last: make([]atomic.Int64, len(ws))}
		for k, w := range ws {
			tw.start[k], tw.name[k] = w.start, w.name
			tw.last[k].Store(math.MinInt64)
		}
		hw.threads[tid] = tw
	}
	return hw, nil
}

// idSet is a fast membership test for StringIds ids: a table where the
// ids are small, as they are.
func idSet[V any](ids map[int64]V) func(int64) bool {
	top := int64(-1)
	for id := range ids {
		if id < 0 || id >= 1<<24 {
			return func(id int64) bool { _, ok := ids[id]; return ok }
		}
		top = max(top, id)
	}
	set := make([]bool, top+1)
	for id := range ids {
		set[id] = true
	}
	return func(id int64) bool { return id >= 0 && id <= top && set[id] }
}

// writeCursor is what a scanning goroutine (one part) knows of the last
// two threads it saw: threads alternate (PyTorch's autograd thread
// launches the backward pass's kernels), and a lookup in hostWrites.threads
// on every row would cost more than the rest of see.
type writeCursor struct {
	slot [2]writeSlot
}

// writeSlot is one thread of a writeCursor: its writes, the index k of
// the first write at or after the last row seen, and the latest row start
// seen for that write, not yet folded into threadWrites.last (rows come
// in near time order, so most rows only raise it here).
type writeSlot struct {
	tid     int64
	tw      *threadWrites
	k       int
	pending int64
	used    bool
}

// newCursor returns a cursor for one part of the scan; attach flushes it.
func (hw *hostWrites) newCursor() *writeCursor {
	c := &writeCursor{}
	hw.mu.Lock()
	hw.cursors = append(hw.cursors, c)
	hw.mu.Unlock()
	return c
}

// see folds one runtime row (its thread and start) into the writes.
func (hw *hostWrites) see(cur *writeCursor, tid, start int64) {
	e := &cur.slot[0]
	if !e.used || e.tid != tid {
		if o := &cur.slot[1]; o.used && o.tid == tid {
			cur.slot[0], cur.slot[1] = *o, *e
		} else {
			o.flush()
			cur.slot[1] = *e
			*e = writeSlot{tid: tid, tw: hw.threads[tid], pending: math.MinInt64, used: true}
		}
	}
	tw := e.tw
	if tw == nil {
		return
	}
	n, k := len(tw.start), e.k
	if (k < n && tw.start[k] < start) || (k > 0 && tw.start[k-1] >= start) { // not between the same writes
		k = seek(n, k, func(j int) bool { return tw.start[j] >= start })
		if k != e.k {
			e.flush()
			e.k = k
		}
	}
	if k < n {
		e.pending = max(e.pending, start)
	}
}

// flush folds the slot's pending start into its write.
func (e *writeSlot) flush() {
	if e.tw != nil && e.pending != math.MinInt64 && e.k < len(e.tw.start) {
		raiseTo(&e.tw.last[e.k], e.pending)
	}
	e.pending = math.MinInt64
}

// attach gives each sync the first write that followed it.
func (hw *hostWrites) attach(syncs []Sync) {
	for _, c := range hw.cursors {
		c.slot[0].flush()
		c.slot[1].flush()
	}
	hw.cursors = nil
	byThread := map[GlobalTid][]int32{}
	for i := range syncs {
		if hw.threads[int64(syncs[i].GlobalTid)] != nil {
			byThread[syncs[i].GlobalTid] = append(byThread[syncs[i].GlobalTid], int32(i))
		}
	}
	for tid, list := range byThread {
		sort.Slice(list, func(a, b int) bool {
			sa, sb := &syncs[list[a]], &syncs[list[b]]
			if sa.End != sb.End {
				return sa.End < sb.End
			}
			return sa.Start < sb.Start
		})
		tw := hw.threads[int64(tid)]
		latest := int64(math.MinInt64) // prefix maximum of last
		done := -1                     // the last sync (in list) given a write
		for k, w := range tw.start {
			latest = max(latest, tw.last[k].Load())
			// The thread's sync with the latest End < w.
			j := sort.Search(len(list), func(j int) bool { return syncs[list[j]].End >= w }) - 1
			if j < 0 || j == done {
				continue
			}
			s := &syncs[list[j]]
			if latest > s.End {
				continue // a CUDA call came between
			}
			if j+1 < len(list) && syncs[list[j+1]].Start <= w {
				continue // the next sync began first (at End: no call row after End marks it)
			}
			done = j
			s.ownDetail().host = &hostAfter{name: hw.names[tw.name[k]], delayNs: w - s.End}
		}
	}
}
