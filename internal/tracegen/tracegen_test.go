package tracegen

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpus holds real nsys exports; CI checks out ../shared beside the repo.
const corpus = "../../../shared/corpus/"

const (
	hungarian = "cuda-hungarian-devsync_2xrtx3090_nsys2025.5.sqlite"              // SYNCHRONIZATION, CUDA_EVENT, no callchains
	saxpy     = "mpi-cuda-saxpy_perlmutter-a100_nsys2022.2.sqlite"                // eventClass-67 twins, CUDA_CALLCHAINS, NVTX
	rapids    = "rapids-cudf_quadro-rtx8000_nsys2020.3.sqlite"                    // old schema: no callchainId, NVTX domains
	noCUDA    = "icon-graupel-no-cuda-trace_reexport2025.3.sqlite"                // nothing to replicate
	nvtxDefs  = `"eventType" NOT IN (33, 39, 64, 72, 73, 74, 75, 76, 97, 98, 99)` // rows not replicated
	runtime   = "CUPTI_ACTIVITY_KIND_RUNTIME"
)

// TestGenerateCopies triples every export of the corpus and checks the copy
// with its own SQL. The three named exports also pin which tables are
// replicated: SYNCHRONIZATION without callchains, eventClass-67 twins with
// CUDA_CALLCHAINS and NVTX, and an old schema without callchainId.
func TestGenerateCopies(t *testing.T) {
	const copies = 3
	want := map[string][]string{
		hungarian: {runtime, "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
			"CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_CUDA_EVENT"},
		saxpy: {runtime, "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUDA_CALLCHAINS", "NVTX_EVENTS"},
		rapids: {runtime, "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
			"CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS"},
	}
	corpusFile(t, hungarian)
	files, err := filepath.Glob(filepath.Join(corpus, "*.sqlite"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no exports in %s: %v", corpus, err)
	}
	for _, path := range files {
		file := filepath.Base(path)
		if file == noCUDA {
			continue // TestGenerateErrors
		}
		t.Run(file, func(t *testing.T) {
			if _, named := want[file]; !named && testing.Short() {
				t.Skip("-short: only the three named exports")
			}
			src := corpusFile(t, file)
			tables := withRows(t, open(t, src))
			if w, ok := want[file]; ok && fmt.Sprint(w) != fmt.Sprint(tables) {
				t.Fatalf("replicated tables %v, want %v", tables, w)
			}
			out := filepath.Join(t.TempDir(), "big.sqlite")
			before := fileSum(t, src)
			var progress bytes.Buffer
			res, err := Generate(context.Background(), Options{Source: src, Output: out, Copies: copies, Progress: &progress})
			if err != nil {
				t.Fatal(err)
			}
			if fileSum(t, src) != before {
				t.Fatal("the source file changed")
			}
			if fi, err := os.Stat(out); err != nil || fi.Size() != res.Bytes {
				t.Fatalf("Result.Bytes = %d, file: %v %v", res.Bytes, fi, err)
			}
			if res.Copies != copies || res.Period <= 0 || progress.Len() == 0 {
				t.Fatalf("Result %+v, progress %q", res, progress.String())
			}
			s, o := open(t, src), open(t, out)
			checkTables(t, s, o, tables, copies, res.Rows)
			for _, tbl := range tables {
				if hasCol(t, s, tbl, "start") {
					checkTimes(t, s, o, tbl, res.Period, copies)
				}
			}
			checkIDs(t, s, o, res.Period, copies)
		})
	}
}

// checkTables: replicated tables have copies × their rows (NVTX definition
// rows once), the original rows unchanged; every other table is unchanged;
// no table or index was added.
func checkTables(t *testing.T, s, o *sql.DB, replicatedTables []string, copies int, inserted int64) {
	t.Helper()
	st, ot := tableSet(t, s), tableSet(t, o)
	if fmt.Sprint(st) != fmt.Sprint(ot) {
		t.Fatalf("schema objects differ:\nsource %v\noutput %v", st, ot)
	}
	rep := map[string]bool{}
	for _, tbl := range replicatedTables {
		rep[tbl] = true
	}
	var added int64
	for name := range st {
		tbl, ok := strings.CutPrefix(name, "table ")
		if !ok {
			continue
		}
		if !rep[tbl] {
			if a, b := digest(t, s, tbl, ""), digest(t, o, tbl, ""); a != b {
				t.Errorf("%s changed", tbl)
			}
			continue
		}
		where, defs := "", int64(0)
		if tbl == "NVTX_EVENTS" {
			where = "WHERE " + nvtxDefs
			defs = num(t, s, "SELECT count(*) FROM NVTX_EVENTS WHERE NOT ("+nvtxDefs+")")
			if got := num(t, o, "SELECT count(*) FROM NVTX_EVENTS WHERE NOT ("+nvtxDefs+")"); got != defs {
				t.Errorf("NVTX definition rows: %d, want %d", got, defs)
			}
			ends := num(t, s, "SELECT count(end) FROM NVTX_EVENTS "+where)
			if got := num(t, o, "SELECT count(end) FROM NVTX_EVENTS "+where); got != int64(copies)*ends {
				t.Errorf("NVTX rows with an end: %d, want %d", got, int64(copies)*ends)
			}
		}
		n := num(t, s, "SELECT count(*) FROM "+quote(tbl)+" "+where)
		if got := num(t, o, "SELECT count(*) FROM "+quote(tbl)+" "+where); got != int64(copies)*n || n == 0 {
			t.Errorf("%s: %d rows, want %d × %d", tbl, got, copies, n)
		}
		added += int64(copies-1) * n
		last := num(t, s, "SELECT max(rowid) FROM "+quote(tbl))
		w := fmt.Sprintf("WHERE rowid <= %d", last)
		if a, b := digest(t, s, tbl, ""), digest(t, o, tbl, w); a != b {
			t.Errorf("%s: original rows changed", tbl)
		}
	}
	if added != inserted {
		t.Errorf("Result.Rows = %d, counted %d", inserted, added)
	}
}

// checkTimes: bucketing the output rows by (start − source min) / period
// gives the copies 0 … copies-1, each with the source's row count and time
// range shifted by k × period, and the ranges do not overlap.
func checkTimes(t *testing.T, s, o *sql.DB, tbl string, period int64, copies int) {
	t.Helper()
	where := ""
	if tbl == "NVTX_EVENTS" {
		where = "WHERE " + nvtxDefs
	}
	q := "SELECT count(*), min(start), max(coalesce(end, start)) FROM " + quote(tbl) + " " + where
	var n, lo, hi int64
	if err := s.QueryRow(q).Scan(&n, &lo, &hi); err != nil {
		t.Fatal(err)
	}
	rows, err := o.Query(fmt.Sprintf(`SELECT (start - %d) / %d AS k, count(*), min(start), max(coalesce(end, start))
		FROM %s %s GROUP BY k ORDER BY k`, lo, period, quote(tbl), where))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	prevEnd, k := int64(-1<<62), int64(0)
	for ; rows.Next(); k++ {
		var b, bn, blo, bhi int64
		if err := rows.Scan(&b, &bn, &blo, &bhi); err != nil {
			t.Fatal(err)
		}
		if b != k || bn != n || blo != lo+k*period || bhi != hi+k*period || blo <= prevEnd {
			t.Errorf("%s copy %d: bucket %d, %d rows in [%d, %d]; want %d rows in [%d, %d] after %d",
				tbl, k, b, bn, blo, bhi, n, lo+k*period, hi+k*period, prevEnd)
		}
		prevEnd = bhi
	}
	if k != int64(copies) {
		t.Errorf("%s: %d copies in time, want %d", tbl, k, copies)
	}
}

// checkIDs: correlationIds stay unique per process, GPU rows join to the
// API call of their own copy, callchains and event sync ids still resolve.
func checkIDs(t *testing.T, s, o *sql.DB, period int64, copies int) {
	t.Helper()
	cls := ""
	if hasCol(t, s, runtime, "eventClass") {
		cls = "AND r.eventClass IN (0, 1)"
	}
	dup := `SELECT count(*) FROM (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE 1 ` + cls +
		` GROUP BY r.globalTid >> 24, r.correlationId HAVING count(*) > 1)`
	if a, b := num(t, s, dup), num(t, o, dup); b != int64(copies)*a {
		t.Errorf("correlationIds repeated in a process: %d, source %d", b, a)
	}
	minStart := func(db *sql.DB, tbl string) int64 { return num(t, db, "SELECT min(start) FROM "+tbl) }
	for _, gpu := range []string{"KERNEL", "MEMCPY", "MEMSET", "SYNCHRONIZATION"} {
		tbl := "CUPTI_ACTIVITY_KIND_" + gpu
		if num(t, s, "SELECT count(*) FROM sqlite_master WHERE name = '"+tbl+"'") == 0 {
			continue
		}
		q := fmt.Sprintf(`SELECT count(*) FROM (SELECT g.rowid FROM %s g JOIN %s r
			ON r.correlationId = g.correlationId AND (r.globalTid >> 24) = (g.globalPid >> 24) %s
			WHERE (g.start - %d) / %d = (r.start - %d) / %d
			GROUP BY g.rowid HAVING count(*) = 1)`,
			tbl, runtime, cls, minStart(s, tbl), period, minStart(s, runtime), period)
		a, b := num(t, s, q), num(t, o, q)
		if b != int64(copies)*a {
			t.Errorf("%s rows joining one API call of their copy: %d, want %d × %d", gpu, b, copies, a)
		}
		if gpu == "KERNEL" && a != num(t, s, "SELECT count(*) FROM "+tbl) {
			t.Logf("%s: %d of %d kernels join an API call in the source", tbl, a, num(t, s, "SELECT count(*) FROM "+tbl))
		}
	}
	if hasCol(t, s, runtime, "callchainId") && hasCol(t, s, "CUDA_CALLCHAINS", "id") {
		q := `SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE callchainId IN (SELECT id FROM CUDA_CALLCHAINS)`
		if a, b := num(t, s, q), num(t, o, q); b != int64(copies)*a || a == 0 {
			t.Errorf("calls with a callchain: %d, want %d × %d", b, copies, a)
		}
		q = `SELECT count(DISTINCT id) FROM CUDA_CALLCHAINS`
		if a, b := num(t, s, q), num(t, o, q); b != int64(copies)*a {
			t.Errorf("distinct callchains: %d, want %d × %d", b, copies, a)
		}
	}
	// "None" values stay "none": eventSyncId 0xFFFFFFFF, correlationId 0
	// (unified-memory migrations in the hungarian export).
	for _, q := range []string{
		`SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE eventSyncId = 4294967295`,
		`SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE correlationId = 0`,
	} {
		if f := strings.Fields(q); hasCol(t, s, f[3], f[5]) {
			if a, b := num(t, s, q), num(t, o, q); b != int64(copies)*a {
				t.Errorf("%s: %d, want %d × %d", q, b, copies, a)
			}
		}
	}
	if hasCol(t, s, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "eventSyncId") && hasCol(t, s, "CUPTI_ACTIVITY_KIND_CUDA_EVENT", "eventSyncId") {
		q := `SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION y JOIN CUPTI_ACTIVITY_KIND_CUDA_EVENT e
			ON e.eventSyncId = y.eventSyncId AND e.globalPid = y.globalPid`
		if a, b := num(t, s, q), num(t, o, q); b != int64(copies)*a {
			t.Errorf("event waits linked to their record: %d, want %d × %d", b, copies, a)
		}
	}
}

func TestGenerateTargetBytes(t *testing.T) {
	src := corpusFile(t, hungarian)
	fi, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	target := 3 * fi.Size()
	out := filepath.Join(t.TempDir(), "big.sqlite")
	res, err := Generate(context.Background(), Options{Source: src, Output: out, TargetBytes: target})
	if err != nil {
		t.Fatal(err)
	}
	if res.Copies < 2 {
		t.Fatalf("target %d: %+v", target, res)
	}
	per := (res.Bytes - fi.Size()) / int64(res.Copies-1) // bytes per added copy
	if res.Bytes < target || res.Bytes-per >= target {
		t.Fatalf("target %d: %+v", target, res)
	}
	n := num(t, open(t, src), "SELECT count(*) FROM "+runtime)
	if got := num(t, open(t, out), "SELECT count(*) FROM "+runtime); got != int64(res.Copies)*n {
		t.Fatalf("%d runtime rows, want %d × %d", got, res.Copies, n)
	}
}

// cancelWriter cancels the context at the first progress line.
type cancelWriter struct{ cancel context.CancelFunc }

func (w cancelWriter) Write(p []byte) (int, error) { w.cancel(); return len(p), nil }

func TestGenerateErrors(t *testing.T) {
	dir := t.TempDir()
	notSQLite := filepath.Join(dir, "notes.sqlite")
	if err := os.WriteFile(notSQLite, bytes.Repeat([]byte("not a database\n"), 300), 0o644); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(dir, "own.sqlite") // a private copy, so a bug cannot harm the corpus
	b, err := os.ReadFile(corpusFile(t, hungarian))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  func() context.Context
		opt  Options
		want error  // errors.Is, or nil for any error
		text string // in the message
	}{
		{"no options", nil, Options{Source: own, Output: filepath.Join(dir, "a")}, nil, "exactly one"},
		{"both options", nil, Options{Source: own, Output: filepath.Join(dir, "b"), Copies: 2, TargetBytes: 1}, nil, "exactly one"},
		{"missing source", nil, Options{Source: filepath.Join(dir, "nope"), Output: filepath.Join(dir, "c"), Copies: 2}, os.ErrNotExist, "source"},
		{"output is source", nil, Options{Source: own, Output: own, Copies: 2}, nil, "is the source"},
		{"not sqlite", nil, Options{Source: notSQLite, Output: filepath.Join(dir, "d"), Copies: 2}, nil, "not an SQLite database"},
		{"no cuda rows", nil, Options{Source: corpusFile(t, noCUDA), Output: filepath.Join(dir, "e"), Copies: 2}, nil, "no CUDA or NVTX rows"},
		{"cancelled", func() context.Context { return cancelled }, Options{Source: own, Output: filepath.Join(dir, "f"), Copies: 2}, context.Canceled, ""},
		{"cancelled while running", func() context.Context {
			return ctxCancelledByProgress(t)
		}, Options{Source: own, Output: filepath.Join(dir, "g"), Copies: 50}, context.Canceled, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			if w, ok := ctx.Value(cancelKey{}).(io.Writer); ok {
				tc.opt.Progress = w
			}
			_, err := Generate(ctx, tc.opt)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("error %v, want %v containing %q", err, tc.want, tc.text)
			}
			if tc.opt.Output != own {
				if _, err := os.Stat(tc.opt.Output); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("output left behind: %v", err)
				}
			}
		})
	}
	if !bytes.Equal(b, mustRead(t, own)) {
		t.Fatal("the source was modified")
	}
}

type cancelKey struct{}

// ctxCancelledByProgress returns a context carrying a progress writer that
// cancels it.
func ctxCancelledByProgress(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return context.WithValue(ctx, cancelKey{}, io.Writer(cancelWriter{cancel}))
}
