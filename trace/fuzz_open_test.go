package trace_test

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/trace"

	_ "modernc.org/sqlite" // the tests write their seed exports
)

// tinyFixtures are real exports that FuzzOpenBytes shrinks into seeds: a
// time window of a few syncs, the tables nsyssync reads, 512-byte pages.
// Between them they hold native and Python backtraces, autograd NVTX,
// event syncs across streams, CUDA graphs and several processes.
var tinyFixtures = []string{"syncs_backtrace", "syncs_autograd", "gt_twostream_event", "gt_graph_item", "multiproc_lean"}

// FuzzOpenBytes writes arbitrary bytes to a file and analyses it as
// 'nsyssync analyze' and 'nsyssync doctor' would. Seeds: shrunk real
// exports, the same with flipped bytes and cut short, and files that are
// not exports at all.
func FuzzOpenBytes(f *testing.F) {
	var tiny [][]byte
	for _, name := range tinyFixtures {
		b := tinyExport(f, fixturegz.Plain(f, filepath.Join("..", "fixtures"), name))
		tiny = append(tiny, b)
		f.Add(b)
	}
	for i, b := range tiny {
		f.Add(flipBytes(b, len(b)/3+i*97, 64))
		f.Add(flipBytes(b, len(b)-700, 300))
		f.Add(b[:len(b)/2])
		f.Add(b[:len(b)-512]) // whole pages short of what the header says
	}
	f.Add([]byte("SQLite format 3\x00"))
	f.Add([]byte("NSYS\x00not an export"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.sqlite")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		analysePipeline(t, path, "")
		after, err := os.ReadFile(path)
		if err != nil || string(after) != string(data) {
			t.Errorf("the input changed (%v)", err)
		}
		if extra, _ := filepath.Glob(path + "?*"); len(extra) > 0 {
			t.Errorf("files created beside the input: %v", extra)
		}
	})
}

// flipBytes returns a copy of b with n bytes from off inverted.
func flipBytes(b []byte, off, n int) []byte {
	out := append([]byte(nil), b...)
	for i := max(off, 0); i < off+n && i < len(out); i++ {
		out[i] ^= 0xA5
	}
	return out
}

// tinyKeep lists the tables a tiny export keeps.
var tinyKeep = map[string]bool{
	"StringIds": true, "CUPTI_ACTIVITY_KIND_RUNTIME": true, "CUPTI_ACTIVITY_KIND_KERNEL": true,
	"CUPTI_ACTIVITY_KIND_MEMCPY": true, "CUPTI_ACTIVITY_KIND_MEMSET": true, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": true,
	"CUPTI_ACTIVITY_KIND_CUDA_EVENT": true, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE": true, "CUDA_CALLCHAINS": true,
	"NVTX_EVENTS": true, "TARGET_INFO_GPU": true, "TARGET_INFO_CUDA_STREAM": true, "TARGET_INFO_CUDA_CONTEXT_INFO": true,
	"ThreadNames": true, "PROCESSES": true, "META_DATA_EXPORT": true,
}

// tinyShrink keeps the rows of a window around the third to fifth sync
// call and the strings they name. ?1 and ?2 bound the window.
var tinyShrink = []string{
	`DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start NOT BETWEEN ?1 AND ?2`,
	`DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start NOT BETWEEN ?1 AND ?2`,
	`DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE start NOT BETWEEN ?1 AND ?2`,
	`DELETE FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE start NOT BETWEEN ?1 AND ?2`,
	`DELETE FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE WHERE start NOT BETWEEN ?1 AND ?2`,
	`DELETE FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE start NOT BETWEEN ?1 AND ?2`,
	`DELETE FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT WHERE correlationId NOT IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME)`,
	`DELETE FROM NVTX_EVENTS WHERE eventType != 75 AND (start > ?2 OR coalesce("end", start) < ?1)`,
	`DELETE FROM CUDA_CALLCHAINS WHERE id NOT IN (SELECT callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE callchainId IS NOT NULL)`,
	`DELETE FROM ThreadNames WHERE globalTid NOT IN (SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME)`,
	`DELETE FROM PROCESSES WHERE globalPid NOT IN (SELECT globalTid & ~16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME)`,
}

// tinyStrings are the StringIds references that a tiny export keeps, by
// table.
var tinyStrings = []struct{ table, sel string }{
	{"CUPTI_ACTIVITY_KIND_RUNTIME", `SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME`},
	{"CUPTI_ACTIVITY_KIND_KERNEL", `SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL`},
	{"CUDA_CALLCHAINS", `SELECT symbol FROM CUDA_CALLCHAINS UNION SELECT module FROM CUDA_CALLCHAINS`},
	{"ThreadNames", `SELECT nameId FROM ThreadNames`},
	{"NVTX_EVENTS", `SELECT textId FROM NVTX_EVENTS UNION SELECT j.value FROM NVTX_EVENTS, json_tree(NVTX_EVENTS.jsonText) AS j
		WHERE NVTX_EVENTS.jsonText IS NOT NULL AND j.key IN ('Function', 'File')`},
}

// tinyCache holds the tiny exports built, by fixture path.
var tinyCache sync.Map

// tinyExport shrinks a real export to a few kilobytes, once per test
// binary.
func tinyExport(tb testing.TB, src string) []byte {
	tb.Helper()
	if b, ok := tinyCache.Load(src); ok {
		return b.([]byte)
	}
	b := buildTinyExport(tb, src)
	tinyCache.Store(src, b)
	return b
}

func buildTinyExport(tb testing.TB, src string) []byte {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), filepath.Base(src))
	copyTo(tb, src, path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		tb.Fatal(err)
	}
	var drop []string
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			tb.Fatal(err)
		}
		have[n] = true
		if !tinyKeep[n] {
			drop = append(drop, n)
		}
	}
	rows.Close()
	for _, n := range drop {
		mustExec(tb, db, `DROP TABLE "`+n+`"`)
	}
	var lo, hi int64
	err = db.QueryRow(`SELECT min(start) - 200000, max("end") FROM (SELECT r.start, r."end" FROM CUPTI_ACTIVITY_KIND_RUNTIME r
		JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE '%Synchronize%' ORDER BY r.start LIMIT 3 OFFSET 2)`).Scan(&lo, &hi)
	if err != nil {
		tb.Fatalf("%s: finding a window: %v", src, err)
	}
	for _, stmt := range tinyShrink {
		if table := tableOf(stmt); table != "" && !have[table] {
			continue
		}
		mustExec(tb, db, stmt, lo, hi)
	}
	var refs []string
	for _, r := range tinyStrings {
		if have[r.table] {
			refs = append(refs, r.sel)
		}
	}
	mustExec(tb, db, `WITH refs(v) AS (`+strings.Join(refs, " UNION ")+`)
		DELETE FROM StringIds WHERE id NOT IN (SELECT v FROM refs WHERE v IS NOT NULL)`)
	mustExec(tb, db, `PRAGMA page_size = 512`)
	mustExec(tb, db, `VACUUM`)
	db.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// tableOf returns the table a DELETE statement deletes from.
func tableOf(stmt string) string {
	rest, ok := strings.CutPrefix(stmt, "DELETE FROM ")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, " ")
	return name
}

func mustExec(tb testing.TB, db *sql.DB, stmt string, args ...any) {
	tb.Helper()
	if _, err := db.Exec(stmt, args...); err != nil {
		tb.Fatalf("%s: %v", stmt, err)
	}
}

func copyTo(tb testing.TB, src, dst string) {
	tb.Helper()
	in, err := os.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
}

// TestTinyExports checks that FuzzOpenBytes's seeds are worth mutating:
// small, and still exports with syncs (the seeds' run of FuzzOpenBytes puts
// them through the whole pipeline).
func TestTinyExports(t *testing.T) {
	for _, name := range tinyFixtures {
		t.Run(name, func(t *testing.T) {
			b := tinyExport(t, fixturegz.Plain(t, filepath.Join("..", "fixtures"), name))
			if len(b) > 96<<10 {
				t.Errorf("seed is %d KiB, want at most 96", len(b)>>10)
			}
			path := filepath.Join(t.TempDir(), name+".sqlite")
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			x, err := trace.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			tr, err := x.Load(context.Background(), trace.LoadOptions{})
			if err != nil || len(tr.Syncs) == 0 {
				t.Errorf("want some syncs, got %v", err)
			}
		})
	}
}
