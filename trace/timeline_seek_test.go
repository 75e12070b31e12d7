package trace

import (
	"errors"
	"slices"
	"testing"
)

// TestTimelinesByStart reads windows of real fixtures by rowid and checks
// them against the scanning reader: the same calls, ops and stream waits,
// less those that began before the window.
func TestTimelinesByStart(t *testing.T) {
	for _, fixture := range []string{leanFixture, "../fixtures/gt_twostream_event.sqlite.gz", "../fixtures/gt_graph_item.sqlite.gz"} {
		x, err := Open(t0(), fixture)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		tr, err := x.Load(t0(), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := tr.Region
		third := (r.End - r.Start) / 3
		windows := []Interval{{r.Start, r.End}, {r.Start + third, r.Start + 2*third}, {r.End - third/10, r.End}}
		seek, err := x.TimelinesByStart(t0(), windows)
		if err != nil {
			t.Fatalf("%s: %v", fixture, err)
		}
		scan, err := x.Timelines(t0(), windows)
		if err != nil {
			t.Fatal(err)
		}
		for k, w := range windows {
			var calls []TimelineCall
			for _, c := range scan[k].Calls {
				if c.Start >= w.Start {
					calls = append(calls, c)
				}
			}
			var ops []Op
			for _, op := range scan[k].Ops {
				if op.Start >= w.Start {
					ops = append(ops, op)
				}
			}
			if !slices.Equal(seek[k].Calls, calls) || !slices.Equal(seek[k].Ops, ops) {
				t.Errorf("%s window %d: %d calls and %d ops by rowid, %d and %d by scan", fixture, k, len(seek[k].Calls), len(seek[k].Ops), len(calls), len(ops))
			}
			for _, wt := range seek[k].Waits {
				if !slices.Contains(scan[k].Waits, wt) {
					t.Errorf("%s window %d: wait %+v not read by the scan", fixture, k, wt)
				}
			}
			if k == 0 && (len(seek[k].Waits) != len(scan[k].Waits) || len(calls) == 0) {
				t.Errorf("%s whole trace: %d calls, %d waits by rowid, %d by scan", fixture, len(calls), len(seek[k].Waits), len(scan[k].Waits))
			}
		}
	}
}

// TestTimelineRows counts the rows that start in intervals without a scan
// and checks the counts against SQL.
func TestTimelineRows(t *testing.T) {
	x, tr := openLoaded(t, leanFixture, LoadOptions{NVTX: "measured"})
	db := rawDB(t, leanFixture)
	want := 0
	for _, iv := range tr.Region.Intervals {
		for _, table := range []string{"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"} {
			want += queryInt(t, db, sqlf(`SELECT count(*) FROM %s WHERE start >= %d AND start < %d`, table, iv.Start, iv.End))
		}
	}
	got, err := x.TimelineRows(t0(), tr.Region.Intervals)
	if err != nil {
		t.Fatal(err)
	}
	if got != int64(want) || want == 0 {
		t.Errorf("rows in the measured range: %d, SQL counts %d", got, want)
	}
}

// TestTimelinesByStartUnordered: an export whose rows are not in start
// order is refused by the rowid reader (a caller then scans), and counted
// whole by TimelineRows.
func TestTimelinesByStartUnordered(t *testing.T) {
	path := copyFixture(t, leanPlain(t),
		`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = start + 1000000000000, "end" = "end" + 1000000000000 WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME)`)
	x, err := Open(t0(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	w := []Interval{{0, 1 << 62}}
	if _, err := x.TimelinesByStart(t0(), w); !errors.Is(err, ErrNotStartOrdered) {
		t.Errorf("got %v, want ErrNotStartOrdered", err)
	}
	db := rawDB(t, path)
	all := queryInt(t, db, `SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME`)
	if n, err := x.TimelineRows(t0(), []Interval{{0, 1}}); err != nil || n < int64(all) {
		t.Errorf("rows of an unordered export: %d (%v), want at least the runtime table's %d", n, err, all)
	}
}
