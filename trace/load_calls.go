package trace

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
)

// callLoader reads the CUDA API calls (the runtime/driver table): the names of
// interest, the calls with their backtrace twins folded in, and the span
// of the CUDA trace. It reads through the export's source.
type callLoader struct{ *source }

// apiName is an API name id of interest, with what its name says worked
// out once.
type apiName struct {
	raw, name   string
	kind        CallKind
	async, peer bool
}

// callKey identifies a call: correlation ids are unique per process.
type callKey struct{ pid, corr int64 }

// loadAPINames finds the StringIds of every API the inventory reads; the
// calls are then selected by nameId, so the engine filters the (large)
// runtime table.
func (ld callLoader) loadAPINames(ctx context.Context) (apiNames, error) {
	names := apiNames{byID: map[int64]apiName{}}
	var id sql.NullInt64
	var val sql.NullString
	q := fmt.Sprintf(`SELECT id, value FROM %s WHERE value GLOB 'cu*'`, ld.Schema.Name(tableStrings))
	_, err := ld.scanRows(ctx, "reading API names", q, []any{&id, &val}, func() error {
		if isHostFuncName(val.String) {
			names.hostFuncs = append(names.hostFuncs, id.Int64)
		}
		if k := ClassifyName(val.String); k != CallOther {
			names.byID[id.Int64] = apiName{raw: val.String, name: NormalizeName(val.String), kind: k,
				async: isAsyncName(val.String), peer: isPeerName(val.String)}
		} else if len(names.frequent) < maxFrequentNames && isFrequentName(val.String) {
			names.frequent = append(names.frequent, id.Int64)
		}
		return nil
	})
	return names, err
}

// apiNames are the API names the inventory reads, by StringIds id, and the
// ids of names that never block but make most of the runtime table.
type apiNames struct {
	byID     map[int64]apiName
	frequent []int64
	// hostFuncs are the ids of the host-function launch APIs (hostfunc.go).
	hostFuncs []int64
}

// maxFrequentNames bounds the names tested one by one before the IN list.
const maxFrequentNames = 6

// isFrequentName says whether calls of an API are typically the bulk of
// the runtime table: kernel launches and the calls PyTorch makes around
// them. None of them blocks.
func isFrequentName(raw string) bool {
	for _, p := range []string{"cudaLaunchKernel", "cuLaunchKernel", "cudaStreamIsCapturing", "cudaEventRecord", "cuKernelGetName"} {
		if strings.HasPrefix(raw, p) {
			return true
		}
	}
	return false
}

// nameFilter is the SQL condition that selects the calls of interest:
// the few API names the inventory reads, in a table whose rows are mostly
// kernel launches and the calls around them. Each test of the condition
// reads the column again, and SQLite's IN list is a B-tree probe a row,
// so it rejects cheaply first: by the range of the wanted ids, where that
// range leaves out some name known to be frequent (ids are given in the
// order names first appear), then by comparison with each frequent name
// inside the range, and it tests the wanted ids as a CASE when they are
// few (one read of the column, then comparisons). On the 1 GiB benchmark
// exports this took the scan from about 4 to 2.6 s (sync-heavy) and from
// about 2.2 to 1.5 s (kernel-heavy): docs/performance.md.
func (n apiNames) nameFilter() string {
	ids := make([]int64, 0, len(n.byID))
	for id := range n.byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	lo, hi := ids[0], ids[len(ids)-1]
	var conds []string
	var inside []int64
	for _, f := range n.frequent {
		if f >= lo && f <= hi {
			inside = append(inside, f)
		}
	}
	if len(inside) < len(n.frequent) || len(n.frequent) == 0 {
		conds = append(conds, fmt.Sprintf("nameId BETWEEN %d AND %d", lo, hi))
	}
	for _, f := range inside {
		conds = append(conds, fmt.Sprintf("nameId <> %d", f))
	}
	if len(ids) <= maxCaseNames {
		var b strings.Builder
		b.WriteString("CASE nameId")
		for _, id := range ids {
			fmt.Fprintf(&b, " WHEN %d THEN 1", id)
		}
		b.WriteString(" END")
		conds = append(conds, b.String())
	} else {
		conds = append(conds, fmt.Sprintf("nameId IN (%s)", inList(ids)))
	}
	return strings.Join(conds, " AND ")
}

// wanted returns the test the file scan makes on each row's nameId: a
// table lookup where the ids are small, as StringIds ids are.
func (n apiNames) wanted() func(id int64) bool {
	top, low := int64(-1), int64(0)
	for id := range n.byID {
		top, low = max(top, id), min(low, id)
	}
	if top >= 1<<24 || low < 0 {
		return func(id int64) bool { _, ok := n.byID[id]; return ok }
	}
	set := make([]bool, top+1)
	for id := range n.byID {
		set[id] = true
	}
	return func(id int64) bool { return id >= 0 && id <= top && set[id] }
}

// maxCaseNames bounds the wanted names tested as a CASE rather than IN.
const maxCaseNames = 16

// loadCalls reads the calls of interest, folding each eventClass-67
// backtrace twin into its CUPTI row (same globalTid and correlationId), so
// that every call is counted once with the twin's callchain.
// Calls for which keep says false are dropped as they stream past. hw,
// when not nil, is shown every row of the table (hostWrites.see).
func (ld callLoader) loadCalls(ctx context.Context, names apiNames, keep func(CallKind, GlobalPid, int64) bool, hw *hostWrites, st *Stats) ([]Call, error) {
	if len(names.byID) == 0 {
		return nil, nil
	}
	// Exports without eventClass may repeat a call and are read in one
	// part, deduplicated; with it, the repeat is the eventClass-67 twin and
	// the table is read in parallel parts.
	dedupe := !ld.Schema.HasColumn(tableRuntime, "eventClass")
	wanted := names.wanted()
	scan := intScan{what: "reading CUDA API calls", table: tableRuntime, serial: dedupe,
		cols:  []intCol{col("start"), col("end"), colOr("eventClass", 0), col("globalTid"), col("correlationId"), col("nameId"), col("callchainId")},
		where: names.nameFilter(),
		keep:  func(v []sql.NullInt64) bool { return v[5].Valid && wanted(v[5].Int64) }}
	if hw != nil {
		scan.see = func(_, _ int) func(v []sql.NullInt64) error {
			cur := hw.newCursor()
			return func(v []sql.NullInt64) error {
				if v[0].Valid && v[3].Valid {
					hw.see(cur, v[3].Int64, v[0].Int64)
				}
				return nil
			}
		}
	}
	var mu sync.Mutex
	parts := map[int]*callPart{}
	_, err := ld.scanInts(ctx, scan, func(_, p int) func(v []sql.NullInt64) error {
		r := &callPart{twins: map[tidCorr]twin{}}
		mu.Lock()
		parts[p] = r
		mu.Unlock()
		return r.reader(names.byID, keep, dedupe)
	})
	if err != nil {
		return nil, err
	}
	results := make([]*callPart, 0, len(parts))
	for _, p := range slices.Sorted(maps.Keys(parts)) {
		results = append(results, parts[p])
	}
	total := 0
	for _, r := range results {
		total += r.calls.len()
	}
	calls := make([]Call, 0, total)
	twins := map[tidCorr]twin{}
	for _, r := range results {
		calls = r.calls.appendTo(calls)
		st.RowsScanned += r.rows
		for k, t := range r.twins {
			twins[k] = t
		}
	}
	for i := range calls {
		c := &calls[i]
		if len(twins) == 0 {
			break
		}
		if t, ok := twins[tidCorr{c.GlobalTid, c.CorrelationID}]; ok {
			c.TwinStart = t.start
			if t.chain >= 0 {
				c.CallchainID = t.chain
			}
			st.BacktraceTwins++
		}
	}
	sort.SliceStable(calls, func(i, j int) bool {
		if calls[i].Start != calls[j].Start {
			return calls[i].Start < calls[j].Start
		}
		return calls[i].CorrelationID < calls[j].CorrelationID
	})
	st.APICalls = len(calls)
	return calls, nil
}

type twin struct{ start, chain int64 }

type tidCorr struct {
	tid  GlobalTid
	corr int64
}

// callPart is what one part of the runtime table gave.
type callPart struct {
	calls chunked[Call]
	twins map[tidCorr]twin
	rows  int64
}

// reader returns the function that folds the rows of one part of the
// runtime table into it.
func (r *callPart) reader(names map[int64]apiName, keep func(CallKind, GlobalPid, int64) bool, dedupe bool) func(v []sql.NullInt64) error {
	var seen map[tidCorr]int
	if dedupe {
		seen = map[tidCorr]int{}
	}
	return func(v []sql.NullInt64) error {
		r.rows++
		name := names[v[5].Int64]
		class := v[2].Int64
		key := tidCorr{GlobalTid(v[3].Int64), intOr(v[4], -1)}
		if class == 67 { // TRACE_PROCESS_EVENT_CUDABACKTRACE
			r.twins[key] = twin{start: v[0].Int64, chain: intOr(v[6], -1)}
			return nil
		}
		if (class != 0 && class != 1) || !keep(name.kind, key.tid.Process(), key.corr) {
			return nil
		}
		if seen != nil && key.corr >= 0 {
			if i, dup := seen[key]; dup {
				if c := r.calls.at(i); c.CallchainID < 0 && v[6].Valid {
					c.CallchainID = v[6].Int64
				}
				return nil
			}
			seen[key] = r.calls.len()
		}
		r.calls.append(Call{
			Name: name.name, Kind: name.kind,
			Start: v[0].Int64, End: v[1].Int64, GlobalTid: key.tid,
			CorrelationID: key.corr,
			CallchainID:   intOr(v[6], -1), TwinStart: -1,
			async: name.async, peer: name.peer,
		})
		return nil
	}
}

// cudaSpan returns whether the API table has rows, and the start of its
// first row and the end of its last row by rowid. Exports write rows in
// about time order, so these bound the trace closely at the cost of two
// primary-key lookups instead of a full scan; the loaded calls and the GPU
// scan widen the span where they reach further. A WITHOUT ROWID table
// has no such order; its span is its rows' earliest start and latest end.
func (ld callLoader) cudaSpan(ctx context.Context) (Interval, bool, error) {
	t := ld.Schema.Name(tableRuntime)
	q := fmt.Sprintf(`SELECT (SELECT start FROM %[1]s WHERE rowid = (SELECT min(rowid) FROM %[1]s)),
		(SELECT "end" FROM %[1]s WHERE rowid = (SELECT max(rowid) FROM %[1]s))`, t)
	if !ld.Schema.HasRowid(tableRuntime) {
		// No rowid order to take the ends of: the whole table's bounds.
		q = fmt.Sprintf(`SELECT min(start), max("end") FROM %s`, t)
	}
	v, dest := nullInts(2)
	_, err := ld.scanRows(ctx, "measuring the trace", q, dest, func() error { return nil })
	if err != nil {
		return Interval{}, false, err
	}
	return Interval{Start: v[0].Int64, End: v[1].Int64}, v[0].Valid, nil
}
