package trace

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

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
// (--osrt-threshold, 1 µs by default), so a short write may be missing.
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
type hostWrites struct {
	threads map[int64]*threadWrites // by globalTid
	names   map[int64]string        // write name ids
	rows    int64
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
func (x *Export) loadHostWrites(ctx context.Context, ev *Evidence) (*hostWrites, error) {
	s := x.Schema
	if !s.Has(tableOSRT) || !s.HasColumn(tableOSRT, "start") || !s.HasColumn(tableOSRT, "nameId") || !s.HasColumn(tableOSRT, "globalTid") {
		return nil, nil
	}
	var first sql.NullInt64
	if err := x.db.QueryRowContext(ctx, fmt.Sprintf(`SELECT rowid FROM %s LIMIT 1`, s.Name(tableOSRT))).Scan(&first); err != nil {
		if err == sql.ErrNoRows {
			return nil, nil
		}
		return nil, x.dbErr(err, "reading OS runtime calls")
	}
	ev.OSRT = true
	hw := &hostWrites{threads: map[int64]*threadWrites{}, names: map[int64]string{}}
	quoted := make([]string, len(WriteNames))
	for i, n := range WriteNames {
		quoted[i] = "'" + n + "'"
	}
	var id sql.NullInt64
	var val sql.NullString
	q := fmt.Sprintf(`SELECT id, value FROM %s WHERE value IN (%s)`, s.Name(tableStrings), strings.Join(quoted, ","))
	if _, err := x.scanRows(ctx, "reading OS runtime names", q, []any{&id, &val}, func() error {
		hw.names[id.Int64] = val.String
		return nil
	}); err != nil {
		return nil, err
	}
	if len(hw.names) == 0 {
		return nil, nil
	}
	ids := make([]int64, 0, len(hw.names))
	for id := range hw.names {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	type row struct{ tid, start, name int64 }
	var mu sync.Mutex
	parts := map[int]*[]row{}
	scan := intScan{what: "reading OS runtime calls", table: tableOSRT,
		cols:  []intCol{col("globalTid"), col("start"), col("nameId")},
		where: fmt.Sprintf("nameId IN (%s)", inList(ids)),
		keep: func(v []sql.NullInt64) bool {
			_, ok := hw.names[v[2].Int64]
			return v[0].Valid && v[1].Valid && v[2].Valid && ok
		}}
	n, err := x.scanInts(ctx, scan, func(_, p int) func(v []sql.NullInt64) error {
		rows := &[]row{}
		mu.Lock()
		parts[p] = rows
		mu.Unlock()
		return func(v []sql.NullInt64) error {
			*rows = append(*rows, row{v[0].Int64, v[1].Int64, v[2].Int64})
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	hw.rows = n
	var all []row
	for _, p := range parts {
		all = append(all, *p...)
	}
	if len(all) == 0 {
		return nil, nil
	}
	slices.SortFunc(all, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.tid, b.tid), cmp.Compare(a.start, b.start), cmp.Compare(a.name, b.name))
	})
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].tid == all[i].tid {
			j++
		}
		tw := &threadWrites{start: make([]int64, j-i), name: make([]int64, j-i), last: make([]atomic.Int64, j-i)}
		for k := range j - i {
			tw.start[k], tw.name[k] = all[i+k].start, all[i+k].name
			tw.last[k].Store(math.MinInt64)
		}
		hw.threads[all[i].tid] = tw
		i = j
	}
	return hw, nil
}

// writeCursor is a scanning goroutine's last thread and position.
type writeCursor struct {
	tid  [2]int64
	tw   [2]*threadWrites
	hint [2]int
	ok   [2]bool
}

// see folds one runtime row (its thread and start) into the writes.
func (hw *hostWrites) see(cur *writeCursor, tid, start int64) {
	var i int
	switch {
	case cur.ok[0] && cur.tid[0] == tid:
		i = 0
	case cur.ok[1] && cur.tid[1] == tid:
		i = 1
	default: // threads alternate (PyTorch's autograd thread launches the backward): keep two
		cur.tid[1], cur.tw[1], cur.hint[1], cur.ok[1] = cur.tid[0], cur.tw[0], cur.hint[0], cur.ok[0]
		cur.tid[0], cur.tw[0], cur.hint[0], cur.ok[0] = tid, hw.threads[tid], 0, true
		i = 0
	}
	tw := cur.tw[i]
	if tw == nil {
		return
	}
	n := len(tw.start)
	k := seek(n, cur.hint[i], func(j int) bool { return tw.start[j] >= start })
	cur.hint[i] = k
	if k < n {
		raiseTo(&tw.last[k], start)
	}
}

// attach gives each sync the first write that followed it.
func (hw *hostWrites) attach(syncs []Sync) {
	byThread := map[int64][]int32{}
	for i := range syncs {
		if hw.threads[syncs[i].GlobalTid] != nil {
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
		tw := hw.threads[tid]
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
