package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestHostileExportBoundedEndToEnd runs analyze in every format on a real
// export whose program file name was made 10 MiB long (issue 14, item 4:
// such an export gave 610 MB of JSON, 1.9 GB of text and 3.2 GB of
// memory). Each report must stay under 2 MiB and the whole run may
// allocate at most 8× the export's size + 64 MiB.
func TestHostileExportBoundedEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 10 MiB export")
	}
	for _, unit := range []string{
		"ab/c&amp;", // two million path elements, an HTML entity too (frames are unescaped once)
		"abcdefgh",  // one element of 10 MiB
	} {
		t.Run(unit, func(t *testing.T) { checkHostileExport(t, unit) })
	}
}

// checkHostileExport renames the program's file of the fixture to 10 MiB
// of unit and checks every format's size and the run's allocations.
func checkHostileExport(t *testing.T, unit string) {
	dir := t.TempDir()
	export := copyInto(t, dir, fixture, "hostile.sqlite")
	db, err := sql.Open("sqlite", export)
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Exec(`UPDATE StringIds SET value = '/work/main/' || replace(hex(zeroblob(?)), '00', ?) || '/syncs.py'
		WHERE value LIKE '%/fixtures/programs/syncs.py'`, (10<<20)/len(unit), unit)
	if err == nil {
		_, err = db.Exec("VACUUM")
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("renamed %d strings, want the program's file", n)
	}
	st, err := os.Stat(export)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "markdown", "html", "json", "perfetto"} {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(dir, "report."+format)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			code, _, errOut := runCLI(t, "analyze", "--format", format, "-o", out, export)
			runtime.ReadMemStats(&after)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			rst, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %d-byte export, %d-byte report, %d MiB allocated", format, st.Size(), rst.Size(), alloc>>20)
			if rst.Size() > 2<<20 {
				t.Errorf("report of %d bytes, want at most 2 MiB", rst.Size())
			}
			if limit := 8*uint64(st.Size()) + 64<<20; alloc > limit {
				t.Errorf("allocated %d MiB, want at most %d", alloc>>20, limit>>20)
			}
		})
	}
}
