package triage

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/contract"
)

// nightly copies a fixture under the name every night's trace has.
func nightly(t *testing.T, fixture string) []Result {
	t.Helper()
	dir := t.TempDir()
	dst := filepath.Join(dir, "nightly.sqlite")
	copyFile(t, filepath.Join(fixturesDir, fixture), dst)
	return collect(t, []Input{{Path: dst}}, Options{Analysis: noEstimate, Jobs: 1})
}

func sitesByFingerprint(d *contract.Document) map[string]contract.SiteJSON {
	out := map[string]contract.SiteJSON{}
	for _, s := range d.Sites {
		out[s.Fingerprint] = s
	}
	return out
}

// Two nights of the same program, recorded lean (syncs_lean) and then
// with autograd NVTX (syncs_autograd): the sites both exports share keep
// their fingerprint, and diff and history report exactly what the two
// documents hold.
func TestDatabaseTwoRuns(t *testing.T) {
	ctx := context.Background()
	db, err := OpenDB(ctx, filepath.Join(t.TempDir(), "triage.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	night1, night2 := nightly(t, "syncs_lean.sqlite.gz"), nightly(t, "syncs_autograd.sqlite.gz")
	run1 := recordRun(t, db, "2025-11-20", night1)
	run2 := recordRun(t, db, "2025-11-21", night2)
	old, cur := sitesByFingerprint(night1[0].Doc), sitesByFingerprint(night2[0].Doc)

	var shared []string
	for fp := range old {
		if _, ok := cur[fp]; ok {
			shared = append(shared, fp)
		}
	}
	// measured > iter# cudaFree, the bare cudaDeviceSynchronize, … : the
	// program's syncs outside aten ops keep their identity.
	if len(shared) < 5 {
		t.Fatalf("only %d sites shared between the two nights", len(shared))
	}

	// history: each shared site, both runs, the documents' own numbers.
	for _, fp := range shared {
		h, err := db.History(ctx, fp, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Points) != 2 || h.Points[0].Run.ID != run1 || h.Points[1].Run.ID != run2 {
			t.Fatalf("%s: history %+v", fp, h.Points)
		}
		for i, want := range []contract.SiteJSON{old[fp], cur[fp]} {
			p := h.Points[i]
			if p.Traces != 1 || p.Count != want.Count || p.BlockedNs != want.BlockedNs || p.Dependency != want.Dependency {
				t.Errorf("%s run %d: %+v, want count %d blocked %d %s", fp, i+1, p, want.Count, want.BlockedNs, want.Dependency)
			}
		}
	}
	// A site only the second night has is absent from the first run.
	for fp := range cur {
		if _, ok := old[fp]; ok {
			continue
		}
		h, err := db.History(ctx, fp, 0)
		if err != nil {
			t.Fatal(err)
		}
		if h.Points[0].Traces != 0 || h.Points[1].BlockedNs != cur[fp].BlockedNs {
			t.Errorf("%s: new site's history %+v", fp, h.Points)
		}
		var buf bytes.Buffer
		h.WriteText(&buf)
		if !strings.Contains(buf.String(), "new") {
			t.Errorf("history text does not call %s new:\n%s", fp, buf.String())
		}
		break
	}

	// diff of the two runs: new, gone and the shared sites' deltas.
	r1, _ := db.ResolveRun(ctx, "previous")
	r2, _ := db.ResolveRun(ctx, "latest")
	s1, err := db.Snapshot(ctx, r1)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := db.Snapshot(ctx, r2)
	if err != nil {
		t.Fatal(err)
	}
	d := Compare(s1, s2, 10)
	if d.Count(StatusNew) != len(cur)-len(shared) || d.Count(StatusGone) != len(old)-len(shared) {
		t.Errorf("diff: %d new, %d gone; want %d and %d", d.Count(StatusNew), d.Count(StatusGone), len(cur)-len(shared), len(old)-len(shared))
	}
	for _, c := range d.Changes {
		o, n := old[c.Fingerprint], cur[c.Fingerprint]
		if c.OldBlockedNs != o.BlockedNs || c.NewBlockedNs != n.BlockedNs || c.DeltaNs != n.BlockedNs-o.BlockedNs {
			t.Errorf("%s: diff %d → %d, documents %d → %d", c.Fingerprint, c.OldBlockedNs, c.NewBlockedNs, o.BlockedNs, n.BlockedNs)
		}
	}
	if d.Old.BlockedNs != night1[0].Doc.Totals.BlockedNs || d.New.BlockedNs != night2[0].Doc.Totals.BlockedNs {
		t.Errorf("diff totals %d → %d", d.Old.BlockedNs, d.New.BlockedNs)
	}
	// The same comparison from the exports themselves.
	e1, err := LoadSnapshot(ctx, night1[0].Path, Options{Analysis: noEstimate})
	if err != nil {
		t.Fatal(err)
	}
	e2, err := LoadSnapshot(ctx, night2[0].Path, Options{Analysis: noEstimate})
	if err != nil {
		t.Fatal(err)
	}
	if de := Compare(e1, e2, 10); len(de.Changes) != len(d.Changes) || de.Count(StatusNew) != d.Count(StatusNew) || de.TotalChangePct != d.TotalChangePct {
		t.Errorf("diff of exports differs from diff of runs")
	}

	// Top: the costliest sites of the latest run, with both runs.
	top, err := db.Top(ctx, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The report lists the sites of set-up, tear-down and the profiler
	// last; Top ranks by blocked time alone.
	var most int64
	for _, s := range night2[0].Doc.Sites {
		most = max(most, s.BlockedNs)
	}
	if len(top) != 3 || top[0].Points[1].BlockedNs != most {
		t.Errorf("top: %+v", top)
	}
}

// The same exports recorded twice: every fingerprint matches, nothing
// moved, and the gate passes at 0%.
func TestDatabaseSameNightTwice(t *testing.T) {
	ctx := context.Background()
	db, err := OpenDB(ctx, filepath.Join(t.TempDir(), "triage.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dir, _, _ := nightDir(t)
	results := collect(t, Expand([]string{dir}), Options{Analysis: noEstimate, Jobs: 4})
	recordRun(t, db, "a", results)
	recordRun(t, db, "b", collect(t, Expand([]string{dir}), Options{Analysis: noEstimate, Jobs: 2}))
	runs, err := db.Runs(ctx)
	if err != nil || len(runs) != 2 || runs[0].Traces != runs[1].Traces || runs[0].Failed == 0 || runs[0].Finished == "" {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	s1, _ := db.Snapshot(ctx, runs[0])
	s2, _ := db.Snapshot(ctx, runs[1])
	d := Compare(s1, s2, 0)
	if d.Count(StatusSame) != len(d.Changes) || len(d.Changes) == 0 || len(d.Regressions(0)) != 0 {
		t.Errorf("same night twice: %d of %d sites same, regressions %v", d.Count(StatusSame), len(d.Changes), d.Regressions(0))
	}
}

// A database written at version 1 is migrated to the current version
// step by step, keeping its rows.
func TestMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	sdb, err := openSQLite(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrateTo(ctx, sdb, path, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec(`INSERT INTO runs (label, started_at) VALUES ('v1-night', '2025-01-01T00:00:00Z');
		INSERT INTO traces (run_id, path, name, syncs, blocked_ns) VALUES (1, 'a.sqlite', 'a.sqlite', 3, 300);
		INSERT INTO sites VALUES ('abc123abc123', 'cudaFree', 'train.py:1');
		INSERT INTO findings (trace_id, fingerprint, site_id, count, blocked_ns, dependency, category, confidence, evidence, fix, nvtx)
		VALUES (1, 'abc123abc123', 's1', 3, 300, 'false', 'memory-management', 0.9, '[]', '', '[]')`); err != nil {
		t.Fatal(err)
	}
	sdb.Close()

	db, err := OpenDB(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var versions int
	var measured int64
	db.db.QueryRow(`SELECT count(*) FROM schema_version`).Scan(&versions)
	if err := db.db.QueryRow(`SELECT measured_savings_ns FROM findings`).Scan(&measured); err != nil || versions != SchemaVersion() {
		t.Fatalf("after migration: %d versions, measured %d, %v", versions, measured, err)
	}
	h, err := db.History(ctx, "abc123abc123", 0)
	if err != nil || len(h.Points) != 1 || h.Points[0].BlockedNs != 300 {
		t.Fatalf("history after migration: %+v, %v", h, err)
	}
}

// Files that are not findings databases are refused and left as they
// were: an nsys export, a database of a newer nsyssync, a text file.
func TestOpenDBRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	export := filepath.Join(dir, "export.sqlite")
	copyFile(t, filepath.Join(fixturesDir, "syncs_lean.sqlite.gz"), export)
	before, _ := os.ReadFile(export)
	if _, err := OpenDB(ctx, export); !errors.Is(err, ErrNotFindingsDB) {
		t.Errorf("export opened as findings database: %v", err)
	}
	if after, _ := os.ReadFile(export); !bytes.Equal(before, after) {
		t.Errorf("export changed")
	}

	newer := filepath.Join(dir, "newer.db")
	db, err := OpenDB(ctx, newer)
	if err != nil {
		t.Fatal(err)
	}
	db.db.Exec(`INSERT INTO schema_version VALUES (99, 'later')`)
	db.Close()
	if _, err := OpenDB(ctx, newer); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("newer database: %v", err)
	}

	text := filepath.Join(dir, "notes.db")
	os.WriteFile(text, []byte(strings.Repeat("not a database\n", 100)), 0o644)
	if _, err := OpenDB(ctx, text); err == nil {
		t.Errorf("text file opened as findings database")
	}
}
