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
	paths, _ := filepath.Glob("../fixtures/*.sqlite")
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
	x.sqlOnly = sqlOnly
	tr, err := x.Load(context.Background(), LoadOptions{})
	if lay := x.layouts[x.Schema.Name(tableRuntime)]; err == nil && !sqlOnly && (x.file == nil || lay == nil || !lay.ok) {
		t.Errorf("%s: the API calls were not read from the file's pages", path)
	}
	return tr, err
}
