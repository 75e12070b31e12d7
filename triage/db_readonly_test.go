package triage

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fileState is a file's bytes and modification time.
type fileState struct {
	data  []byte
	mtime time.Time
}

// stateOf reads a file's state, after setting its modification time an
// hour back so that a write, however quick, moves it.
func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, past, past); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{data, past}
}

// checkState checks that a file kept its state and that nothing appeared
// beside it (a journal).
func checkState(t *testing.T, path string, want fileState) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want.data) || !st.ModTime().Equal(want.mtime) {
		t.Errorf("%s changed: %d bytes (was %d), modified %v (was %v)", path, len(data), len(want.data), st.ModTime(), want.mtime)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files beside %s: %v", path, entries)
	}
}

// oldDB builds a findings database at the first version migrations,
// with one run of one trace and one site.
func oldDB(t *testing.T, version int) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	sdb, err := openSQLite(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	if err := migrateTo(ctx, sdb, path, version); err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec(`INSERT INTO runs (label, started_at, finished_at) VALUES ('v1-night', '2025-01-01T00:00:00Z', '2025-01-01T01:00:00Z');
		INSERT INTO traces (run_id, path, name, syncs, blocked_ns, estimated_savings_ns) VALUES (1, 'a.sqlite', 'a.sqlite', 3, 300, 120);
		INSERT INTO sites VALUES ('abc123abc123', 'cudaFree', 'train.py:1');
		INSERT INTO findings (trace_id, fingerprint, site_id, count, blocked_ns, dependency, category, confidence, evidence, fix, nvtx,
			estimated_savings_ns)
		VALUES (1, 'abc123abc123', 's1', 3, 300, 'false', 'memory-management', 0.9, '[]', '', '[]', 120)`); err != nil {
		t.Fatal(err)
	}
	return path
}

// A database of every version up to this one is read as it is by a
// read-only open: every query history and diff make answers, nothing is
// migrated or written, the file keeps its bytes and modification time,
// and writes through the handle fail.
func TestOpenDBReadOnlyLeavesOlderDatabases(t *testing.T) {
	ctx := context.Background()
	for version := 1; version <= SchemaVersion(); version++ {
		path := oldDB(t, version)
		before := stateOf(t, path)
		db, err := OpenDBReadOnly(ctx, path)
		if err != nil {
			t.Fatalf("version %d: %v", version, err)
		}
		if db.Version() != version {
			t.Errorf("version %d read as %d", version, db.Version())
		}
		run, err := db.ResolveRun(ctx, "latest")
		if err != nil || run.Label != "v1-night" || run.Syncs != 3 || run.BlockedNs != 300 {
			t.Errorf("version %d: latest run %+v, %v", version, run, err)
		}
		snap, err := db.Snapshot(ctx, run)
		if err != nil || snap.EstimatedSavingsNs != 120 || len(snap.Ordered()) != 1 {
			t.Errorf("version %d: snapshot %+v, %v", version, snap, err)
		}
		fp, err := db.FindSite(ctx, "train.py")
		if err != nil || fp != "abc123abc123" {
			t.Errorf("version %d: site %q, %v", version, fp, err)
		}
		top, err := db.Top(ctx, 5, 0)
		if err != nil || len(top) != 1 || top[0].Points[0].BlockedNs != 300 {
			t.Errorf("version %d: top %+v, %v", version, top, err)
		}
		if _, err := db.BeginRun(ctx, RunInfo{Label: "x"}); err == nil {
			t.Errorf("version %d: a run was recorded through a read-only handle", version)
		}
		db.Close()
		checkState(t, path, before)
	}
}

// Files a read-only open refuses, each with one line naming the file,
// and leaves as they were.
func TestOpenDBReadOnlyRefuses(t *testing.T) {
	ctx := context.Background()
	newer := oldDB(t, SchemaVersion())
	sdb, err := openSQLite(newer, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec(`INSERT INTO schema_version VALUES (99, 'later')`); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(t.TempDir(), "export.sqlite")
	copyFile(t, filepath.Join(fixturesDir, "syncs_lean.sqlite.gz"), export)
	for _, tc := range []struct {
		name, path string
		is         error
		says       string
	}{
		{"newer", newer, nil, "newer than this nsyssync"},
		{"empty", empty, ErrNotFindingsDB, "empty: record runs with 'nsyssync batch --db"},
		{"export", export, ErrNotFindingsDB, "no schema_version"},
		{"missing", filepath.Join(t.TempDir(), "none.db"), os.ErrNotExist, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before fileState
			if tc.name != "missing" {
				before = stateOf(t, tc.path)
			}
			db, err := OpenDBReadOnly(ctx, tc.path)
			if err == nil {
				db.Close()
				t.Fatal("opened")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.path+": ") || !strings.Contains(msg, tc.says) || strings.Contains(msg, "\n") ||
				(tc.is != nil && !errors.Is(err, tc.is)) {
				t.Errorf("error %q, want one line starting with the file and saying %q", msg, tc.says)
			}
			if tc.name != "missing" {
				checkState(t, tc.path, before)
			} else if _, err := os.Stat(tc.path); err == nil {
				t.Errorf("%s created", tc.path)
			}
		})
	}
}

// readableVersion refuses a database older than the queries read, with
// the writer that migrates it.
func TestReadableVersion(t *testing.T) {
	for v := range minReadVersion {
		err := readableVersion("x.db", v)
		if err == nil {
			t.Errorf("version %d readable", v)
		}
	}
	for v := minReadVersion; v <= SchemaVersion(); v++ {
		if err := readableVersion("x.db", v); err != nil {
			t.Errorf("version %d: %v", v, err)
		}
	}
}
