package trace

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
)

// apiName is an API name id of interest.
type apiName struct {
	raw  string
	kind CallKind
}

// callKey identifies a call: correlation ids are unique per process.
type callKey struct{ pid, corr int64 }

// loadAPINames finds the StringIds of every API the inventory reads; the
// calls are then selected by nameId, so the engine filters the (large)
// runtime table.
func (x *Export) loadAPINames(ctx context.Context) (map[int64]apiName, error) {
	names := map[int64]apiName{}
	var id sql.NullInt64
	var val sql.NullString
	q := fmt.Sprintf(`SELECT id, value FROM %s WHERE value GLOB 'cu*'`, x.Schema.Name(tableStrings))
	_, err := x.scanRows(ctx, "reading API names", q, []any{&id, &val}, func() error {
		if k := ClassifyName(val.String); k != CallOther {
			names[id.Int64] = apiName{raw: val.String, kind: k}
		}
		return nil
	})
	return names, err
}

// loadCalls reads the calls of interest, folding each eventClass-67
// backtrace twin into its CUPTI row (same globalTid and correlationId), so
// that every call is counted once with the twin's callchain.
func (x *Export) loadCalls(ctx context.Context, names map[int64]apiName, st *Stats) ([]Call, error) {
	if len(names) == 0 {
		return nil, nil
	}
	ids := make([]int64, 0, len(names))
	for id := range names {
		ids = append(ids, id)
	}
	s := x.Schema
	q := fmt.Sprintf(`SELECT start, "end", %s, globalTid, correlationId, nameId, %s FROM %s WHERE nameId IN (%s)`,
		s.col(tableRuntime, "eventClass", "0"), s.col(tableRuntime, "callchainId", "NULL"),
		s.Name(tableRuntime), inList(ids))
	type twin struct{ start, chain int64 }
	type tidCorr struct{ tid, corr int64 }
	twins := map[tidCorr]twin{}
	seen := map[tidCorr]int{}
	var calls []Call
	v, dest := nullInts(7)
	n, err := x.scanRows(ctx, "reading CUDA API calls", q, dest, func() error {
		name := names[v[5].Int64]
		class := v[2].Int64
		key := tidCorr{v[3].Int64, intOr(v[4], -1)}
		if class == 67 { // TRACE_PROCESS_EVENT_CUDABACKTRACE
			twins[key] = twin{start: v[0].Int64, chain: intOr(v[6], -1)}
			return nil
		}
		if class != 0 && class != 1 {
			return nil
		}
		if i, dup := seen[key]; dup && key.corr >= 0 {
			// Old exports without eventClass repeat a call; keep the first.
			if calls[i].CallchainID < 0 && v[6].Valid {
				calls[i].CallchainID = v[6].Int64
			}
			return nil
		}
		seen[key] = len(calls)
		calls = append(calls, Call{
			Name: NormalizeName(name.raw), RawName: name.raw, Kind: name.kind,
			Start: v[0].Int64, End: v[1].Int64, GlobalTid: v[3].Int64,
			CorrelationID: key.corr, EventClass: class,
			CallchainID: intOr(v[6], -1), TwinStart: -1,
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	st.RowsScanned += n
	for i := range calls {
		c := &calls[i]
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

// cudaSpan returns the first start and last end of all CUDA API calls; the
// aggregate runs inside SQLite.
func (x *Export) cudaSpan(ctx context.Context) (Interval, int64, error) {
	q := fmt.Sprintf(`SELECT min(start), max("end"), count(*) FROM %s`, x.Schema.Name(tableRuntime))
	v, dest := nullInts(3)
	_, err := x.scanRows(ctx, "measuring the trace", q, dest, func() error { return nil })
	if err != nil {
		return Interval{}, 0, err
	}
	return Interval{Start: v[0].Int64, End: v[1].Int64}, v[2].Int64, nil
}
