package trace

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
)

// TestFileScanMatchesSQL loads every fixture and corpus export twice, with
// the large tables read from the file's pages and through SQL only, and
// asks for the same trace.
func TestFileScanMatchesSQL(t *testing.T) {
	paths, _ := filepath.Glob("../fixtures/*.sqlite*")
	if len(paths) == 0 {
		t.Fatal("no fixtures")
	}
	corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	for _, p := range append(paths, corpus...) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			fast, errFast := loadWith(t, p, false)
			slow, errSlow := loadWith(t, p, true)
			if (errFast == nil) != (errSlow == nil) || errFast != nil && errFast.Error() != errSlow.Error() {
				t.Fatalf("file scan: %v; SQL: %v", errFast, errSlow)
			}
			if errFast != nil {
				return
			}
			if len(fast.Syncs) != len(slow.Syncs) {
				t.Fatalf("file scan finds %d syncs, SQL %d", len(fast.Syncs), len(slow.Syncs))
			}
			for i := range fast.Syncs {
				if !reflect.DeepEqual(fast.Syncs[i], slow.Syncs[i]) {
					t.Fatalf("sync %d differs:\nfile %+v\n SQL %+v", i, fast.Syncs[i], slow.Syncs[i])
				}
			}
			if fast.Stats != slow.Stats || !reflect.DeepEqual(fast.Region, slow.Region) || !reflect.DeepEqual(fast.Evidence, slow.Evidence) {
				t.Errorf("stats, region or evidence differ:\nfile %+v %+v %+v\n SQL %+v %+v %+v",
					fast.Stats, fast.Region, fast.Evidence, slow.Stats, slow.Region, slow.Evidence)
			}
		})
	}
}

// loadWith opens and loads an export, through SQL only when sqlOnly.
func loadWith(t *testing.T, path string, sqlOnly bool) (*Trace, error) {
	t.Helper()
	x, err := Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	x.src.sqlOnly = sqlOnly
	tr, err := x.Load(context.Background(), LoadOptions{})
	if lay := x.src.layouts[x.Schema.Name(tableRuntime)]; err == nil && !sqlOnly && (x.src.file == nil || lay == nil || !lay.ok) {
		t.Errorf("%s: the API calls were not read from the file's pages", path)
	}
	return tr, err
}

// TestFileTimelinesMatchSQL reads the timelines of three windows of every
// fixture and corpus export both ways, by rowid range (TimelinesByStart)
// and by overlap (Timelines).
func TestFileTimelinesMatchSQL(t *testing.T) {
	paths, _ := filepath.Glob("../fixtures/*.sqlite*")
	corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	for _, p := range append(paths, corpus...) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			tr, err := loadWith(t, p, true)
			if err != nil {
				t.Skipf("no trace: %v", err)
			}
			r := tr.Region
			third := (r.End - r.Start) / 3
			windows := []Interval{{r.Start, r.Start + third}, {r.Start + third, r.End - third/2}, {r.Start + third/3, r.End}}
			read := func(sqlOnly, byStart bool) ([]*Timeline, error) {
				x, err := Open(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				defer x.Close()
				x.src.sqlOnly = sqlOnly
				if byStart {
					return x.TimelinesByStart(context.Background(), windows)
				}
				return x.Timelines(context.Background(), windows)
			}
			for _, byStart := range []bool{true, false} {
				fast, errFast := read(false, byStart)
				slow, errSlow := read(true, byStart)
				if (errFast == nil) != (errSlow == nil) {
					t.Fatalf("byStart=%v: file %v, SQL %v", byStart, errFast, errSlow)
				}
				if !reflect.DeepEqual(fast, slow) {
					t.Errorf("byStart=%v: the timelines differ", byStart)
				}
				calls := 0
				for _, tl := range fast {
					calls += len(tl.Calls)
				}
				if errFast == nil && calls == 0 {
					t.Errorf("byStart=%v: no calls read: the comparison proves nothing", byStart)
				}
			}
		})
	}
}

func TestInRanges(t *testing.T) {
	in := inRanges([]Interval{{50, 60}, {10, 20}, {15, 30}, {40, 40}})
	for _, tc := range []struct {
		v    int64
		want bool
	}{{9, false}, {10, true}, {20, true}, {25, true}, {30, true}, {31, false}, {40, true}, {41, false}, {49, false}, {55, true}, {60, true}, {61, false}} {
		if got := in(tc.v); got != tc.want {
			t.Errorf("in(%d) = %v, want %v", tc.v, got, tc.want)
		}
	}
	if inRanges(nil)(0) {
		t.Error("no ranges hold 0")
	}
}
