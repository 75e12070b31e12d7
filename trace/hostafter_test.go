package trace

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
)

// labelledDefaults decompresses the default-capture fixtures of the
// labelled set (fixtures/labelled/*.default.sqlite.gz: nsys profile with no
// flags, so with the OS-runtime trace) into a temporary directory.
func labelledDefaults(t *testing.T) []string {
	t.Helper()
	gzs, _ := filepath.Glob("../fixtures/labelled/*.default.sqlite.gz")
	if len(gzs) == 0 {
		t.Fatal("no fixtures/labelled/*.default.sqlite.gz")
	}
	dir := t.TempDir()
	var out []string
	for _, gz := range gzs {
		out = append(out, fixturegz.Gunzip(t, gz, dir))
	}
	return out
}

// bruteWrite is a sync's first write from the definition of WroteAfter.
type bruteWrite struct {
	name  string
	delay int64
	ok    bool
}

// bruteHostAfter computes WroteAfter for every sync straight from its
// definition, with its own plain-SQL reads of the runtime and OS-runtime
// tables: the thread's next CUDA call after End (the earliest runtime row
// start after End, or the next sync's start if earlier), then the
// earliest write of the thread in (End, next), ties by name id.
func bruteHostAfter(t *testing.T, path string, syncs []Sync) (osrt bool, out []bruteWrite) {
	t.Helper()
	db := rawDB(t, path)
	out = make([]bruteWrite, len(syncs))
	if !hasTable(t, db, "OSRT_API") || queryInt(t, db, "SELECT count(*) FROM OSRT_API") == 0 {
		return false, out
	}
	type w struct {
		start, nameID int64
		name          string
	}
	quoted := make([]string, len(WriteNames))
	for i, n := range WriteNames {
		quoted[i] = "'" + n + "'"
	}
	writes := map[int64][]w{}
	rows, err := db.Query(`SELECT o.globalTid, o.start, o.nameId, s.value FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId
		WHERE s.value IN (` + strings.Join(quoted, ",") + `) AND o.globalTid IS NOT NULL ORDER BY o.globalTid, o.start, o.nameId`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tid int64
		var x w
		if err := rows.Scan(&tid, &x.start, &x.nameID, &x.name); err != nil {
			t.Fatal(err)
		}
		writes[tid] = append(writes[tid], x)
	}
	rows.Close()
	if len(writes) == 0 {
		return true, out
	}
	calls := map[int64][]int64{} // runtime row starts by thread, sorted
	rows, err = db.Query(`SELECT globalTid, start FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid IS NOT NULL AND start IS NOT NULL ORDER BY globalTid, start`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tid, start int64
		if err := rows.Scan(&tid, &start); err != nil {
			t.Fatal(err)
		}
		calls[tid] = append(calls[tid], start)
	}
	rows.Close()
	for i := range syncs {
		s := &syncs[i]
		next := int64(math.MaxInt64)
		c := calls[int64(s.GlobalTid)]
		if k := sort.Search(len(c), func(k int) bool { return c[k] > s.End }); k < len(c) {
			next = c[k]
		}
		for j := range syncs {
			if o := &syncs[j]; j != i && o.GlobalTid == s.GlobalTid && o.Start >= s.End {
				next = min(next, o.Start)
			}
		}
		for _, x := range writes[int64(s.GlobalTid)] { // sorted by start, name id
			if x.start > s.End && x.start < next {
				out[i] = bruteWrite{x.name, x.start - s.End, true}
				break
			}
		}
	}
	return true, out
}

// TestWroteAfterMatchesBruteForce checks Sync.WroteAfter and HostAfter on
// every fixture, every labelled default capture and every corpus export
// against bruteHostAfter, through the page reader and through SQL.
func TestWroteAfterMatchesBruteForce(t *testing.T) {
	files, _ := filepath.Glob("../fixtures/*.sqlite*")
	files = append(files, labelledDefaults(t)...)
	corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	files = append(files, corpus...)
	checked, withWrites, labelled := 0, 0, 0
	for _, path := range files {
		// The labelled set's default captures all hold OS-runtime calls
		// and are small and alike: each is checked through the file
		// reader, every fourth through SQL too (the race detector runs
		// this test ~10× slower).
		sqlToo := true
		if strings.Contains(path, "labelled") {
			sqlToo = labelled%4 == 0
			labelled++
		}
		for _, sqlOnly := range []bool{false, true} {
			if sqlOnly && !sqlToo {
				break
			}
			x, err := Open(context.Background(), path)
			if errors.Is(err, ErrNoCUDATrace) {
				break
			}
			if err != nil {
				t.Fatalf("Open(%s): %v", path, err)
			}
			x.src.sqlOnly = sqlOnly
			tr, err := x.Load(context.Background(), LoadOptions{})
			x.Close()
			if errors.Is(err, ErrNoCUDATrace) {
				break
			}
			if err != nil {
				t.Fatalf("Load(%s): %v", path, err)
			}
			osrt, want := bruteHostAfter(t, path, tr.Syncs)
			if tr.Evidence.OSRT != osrt {
				t.Fatalf("%s: Evidence.OSRT %v, want %v", filepath.Base(path), tr.Evidence.OSRT, osrt)
			}
			n := 0
			for i := range tr.Syncs {
				s := &tr.Syncs[i]
				name, delay, ok := s.HostAfter()
				got := bruteWrite{name, delay, ok}
				if got != want[i] || s.WroteAfter() != ok {
					t.Fatalf("%s (sqlOnly %v): sync %d (%s at %d, tid %d): HostAfter %+v, definition %+v",
						filepath.Base(path), sqlOnly, i, s.Reason, s.End, s.GlobalTid, got, want[i])
				}
				if ok {
					n++
				}
			}
			if !sqlOnly {
				checked++
				if n > 0 {
					withWrites++
				}
				if osrt {
					t.Logf("%s: %d of %d syncs followed by a write", filepath.Base(path), n, len(tr.Syncs))
				}
			}
			if len(tr.Syncs) > 20000 || (!osrt && !strings.Contains(path, "labelled")) {
				break // the SQL path once is enough where nothing is to find
			}
		}
	}
	if checked < 40 || withWrites < 5 {
		t.Fatalf("checked %d exports, %d with syncs followed by writes", checked, withWrites)
	}
}

// TestHostWritesRandom checks see and attach against the definition on
// random threads of calls, syncs and writes, the rows split into parts
// read by several cursors in random order, with runs out of time order.
func TestHostWritesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		const tids = 3
		var syncs []Sync
		var rows [][2]int64 // tid, start
		hw := &hostWrites{threads: map[int64]*threadWrites{}, names: map[int64]string{1: "write", 2: "fflush"}}
		for tid := int64(1); tid <= tids; tid++ {
			var starts []int64
			tm := int64(rng.IntN(5))
			for range rng.IntN(40) {
				tm += int64(rng.IntN(4)) // ties included
				switch r := rng.IntN(10); {
				case r < 3: // a sync of one or two calls
					s := Sync{GlobalTid: GlobalTid(tid), Start: tm}
					starts = append(starts, tm)
					if rng.IntN(2) == 0 {
						tm += int64(rng.IntN(3))
						starts = append(starts, tm)
					}
					tm += 1 + int64(rng.IntN(3)) // a thread's syncs do not overlap
					s.End = tm
					syncs = append(syncs, s)
				default:
					starts = append(starts, tm)
				}
			}
			for _, st := range starts {
				rows = append(rows, [2]int64{tid, st})
			}
			tw := &threadWrites{}
			for w := int64(rng.IntN(4)); w < tm+5; w += 1 + int64(rng.IntN(6)) {
				tw.start = append(tw.start, w)
				tw.name = append(tw.name, 1+int64(rng.IntN(2)))
				tw.last = append(tw.last, atomic.Int64{})
			}
			for k := range tw.last {
				tw.last[k].Store(math.MinInt64)
			}
			if len(tw.start) > 0 && rng.IntN(5) > 0 {
				hw.threads[tid] = tw
			}
		}
		// Parts: cut the rows (in time order per thread, threads
		// interleaved) at random points, swap a few neighbours, and read
		// the parts in random order.
		sort.SliceStable(rows, func(i, j int) bool { return rows[i][1] < rows[j][1] })
		for range len(rows) / 5 {
			if len(rows) > 1 {
				i := rng.IntN(len(rows) - 1)
				rows[i], rows[i+1] = rows[i+1], rows[i]
			}
		}
		var parts [][][2]int64
		for len(rows) > 0 {
			n := 1 + rng.IntN(len(rows))
			parts = append(parts, rows[:n])
			rows = rows[n:]
		}
		rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		var all [][2]int64
		for _, p := range parts {
			cur := hw.newCursor()
			for _, r := range p {
				hw.see(cur, r[0], r[1])
				all = append(all, r)
			}
		}
		hw.attach(syncs)
		for i := range syncs {
			s := &syncs[i]
			next := int64(math.MaxInt64)
			for _, r := range all {
				if r[0] == int64(s.GlobalTid) && r[1] > s.End {
					next = min(next, r[1])
				}
			}
			for j := range syncs {
				if o := &syncs[j]; j != i && o.GlobalTid == s.GlobalTid && o.Start >= s.End {
					next = min(next, o.Start)
				}
			}
			var want bruteWrite
			if tw := hw.threads[int64(s.GlobalTid)]; tw != nil {
				for k, w := range tw.start {
					if w > s.End && w < next {
						want = bruteWrite{hw.names[tw.name[k]], w - s.End, true}
						break
					}
				}
			}
			name, delay, ok := s.HostAfter()
			if got := (bruteWrite{name, delay, ok}); got != want {
				var th []string
				for _, o := range syncs {
					if o.GlobalTid == s.GlobalTid {
						th = append(th, fmt.Sprintf("%d–%d", o.Start, o.End))
					}
				}
				var rs []int64
				for _, r := range all {
					if r[0] == int64(s.GlobalTid) {
						rs = append(rs, r[1])
					}
				}
				t.Fatalf("round %d: sync %d (tid %d, %d–%d): got %+v, want %+v; syncs %v rows %v writes %v", round, i, s.GlobalTid, s.Start, s.End, got, want, th, rs, hw.threads[int64(s.GlobalTid)].start)
			}
		}
	}
}

// TestTrimKeepsTheWritesRead checks that fixtures/trim.sh --keep-osrt
// keeps exactly the OS-runtime calls WroteAfter reads: the script deletes
// every other row of OSRT_API from the committed default captures, so a
// name added to WriteNames but not to the script would find no rows there.
func TestTrimKeepsTheWritesRead(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "fixtures", "trim.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)OSRT_WRITES="([^"]*)"`).FindSubmatch(script)
	if m == nil {
		t.Fatal("fixtures/trim.sh: no OSRT_WRITES list")
	}
	got := strings.Fields(string(m[1]))
	want := slices.Clone(WriteNames)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("fixtures/trim.sh OSRT_WRITES = %v, want trace.WriteNames %v", got, want)
	}
}
