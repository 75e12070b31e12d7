package main

import (
	"bytes"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// downgradeToV1 turns a findings database written by this nsyssync back
// into what version 1 wrote: without the replay columns and the indexes
// of migration 2, and with schema_version saying 1.
func downgradeToV1(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DROP INDEX findings_by_fingerprint;
		DROP INDEX traces_by_run;
		ALTER TABLE findings DROP COLUMN measured_savings_ns;
		ALTER TABLE findings DROP COLUMN replay_gpu;
		DELETE FROM schema_version WHERE version > 1;`); err != nil {
		t.Fatal(err)
	}
}

// history and diff read an older findings database as it is: its bytes
// and modification time stay, no journal is left beside it, and a
// version-1 database answers every mode (issue 14, item 7).
func TestReadOnlyCommandsKeepOlderDatabase(t *testing.T) {
	db, _ := recordNights(t)
	downgradeToV1(t, db)
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(db, past, past); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"history", "--db", db, "--runs"},
		{"history", "--db", db, "--top", "3"},
		{"history", "--db", db, "--format", "json"},
		{"history", "--db", db, "cudaFree"},
		{"diff", "--db", db, "previous", "latest"},
		{"diff", "--db", db, "--format", "json", "monday", "tuesday"},
	} {
		code, out, errOut := runCLI(t, args...)
		// A site query may match several sites; that is an answer too.
		if code != exitOK && !strings.Contains(errOut, "matches") {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
		if code == exitOK && out == "" {
			t.Errorf("%v: no output", args)
		}
		after, _ := os.ReadFile(db)
		st, _ := os.Stat(db)
		if !bytes.Equal(before, after) || !st.ModTime().Equal(past) {
			t.Fatalf("%v changed %s (modified %v)", args, db, st.ModTime())
		}
		entries, _ := os.ReadDir(filepath.Dir(db))
		if len(entries) != 1 {
			t.Fatalf("%v left files beside the database: %v", args, entries)
		}
	}
	// The writer migrates it.
	if code, _, errOut := runCLI(t, "batch", "--db", db, "--run", "wednesday", filepath.Join("../../fixtures", "syncs_lean.sqlite.gz")); code != exitOK {
		t.Fatalf("batch on the older database: exit %d: %s", code, errOut)
	}
	if after, _ := os.ReadFile(db); bytes.Equal(before, after) {
		t.Errorf("batch did not write the database")
	}
}
