package trace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
)

// This file reads timelines in windows without scanning whole tables. An
// export has no index on time, but nsys writes every activity table in
// start order (every export of the corpus, nsys 2020 to 2025), so the rows
// that start in a window are a rowid range, found by binary search with a
// primary-key lookup a step.

// ErrNotStartOrdered is returned by TimelinesByStart when a table's rows
// are not in start order; Timelines reads such an export.
var ErrNotStartOrdered = errors.New("rows not in start order")

// TimelinesByStart reads, for each window, the API calls, GPU ops and
// stream waits that start inside it (not those that began before it and
// overlap it, as Timeline reads), finding each window's rows by rowid:
// the cost is that of the rows read, not of the tables' size. The order
// is checked at evenly spaced rows of each table and along every range
// read; it returns ErrNotStartOrdered when that fails.
func (x *Export) TimelinesByStart(ctx context.Context, windows []Interval) ([]*Timeline, error) {
	tls := newTimelines(windows)
	idx := map[string]*startIndex{}
	rd := timelineRead{ordered: true,
		rows: func(ctx context.Context, table string) ([]rowQuery, error) {
			ix, err := x.orderedIndex(ctx, table, idx)
			if err != nil {
				return nil, err
			}
			qs := make([]rowQuery, 0, len(windows))
			for k, w := range windows {
				a, b, err := ix.span(ctx, w)
				if err != nil {
					return nil, err
				}
				if a < b {
					qs = append(qs, rowQuery{where: "rowid >= ? AND rowid < ?", args: []any{a, b}, window: k})
				}
			}
			return qs, nil
		},
		events: x.eventRecordsOf,
	}
	return tls, x.readTimelines(ctx, tls, rd)
}

// TimelineRows estimates, without a scan, how many API calls and GPU ops
// start inside the intervals (of more than 64, an even sample of 64,
// scaled by duration). A table not in start order counts whole.
func (x *Export) TimelineRows(ctx context.Context, ivs []Interval) (int64, error) {
	const most = 64
	picked, scale := ivs, 1.0
	if len(ivs) > most {
		var all, some int64
		picked = make([]Interval, most)
		for i := range picked {
			picked[i] = ivs[i*len(ivs)/most]
			some += picked[i].End - picked[i].Start
		}
		for _, iv := range ivs {
			all += iv.End - iv.Start
		}
		scale = float64(all) / float64(max(some, 1))
	}
	var rows float64
	for _, table := range []string{tableRuntime, tableKernel, tableMemcpy, tableMemset, tableGraphTrace} {
		ix, err := x.newStartIndex(ctx, table)
		if err != nil {
			return 0, err
		}
		if ix == nil {
			continue
		}
		if ok, err := ix.ordered(ctx); err != nil {
			return 0, err
		} else if !ok {
			rows += float64(uint64(ix.hi)-uint64(ix.lo)) + 1 // exact for any rowids
			continue
		}
		var n int64
		for _, iv := range picked {
			a, b, err := ix.span(ctx, iv)
			if err != nil {
				return 0, err
			}
			n += b - a
		}
		rows += float64(n) * scale
	}
	return int64(rows), nil
}

// startIndex finds the rows of one table by start time through rowids.
type startIndex struct {
	x      *Export
	table  string // as the export names it
	lo, hi int64  // rowid bounds; hi < lo when empty
}

// newStartIndex reads a table's rowid bounds; nil when it has no start
// column.
func (x *Export) newStartIndex(ctx context.Context, table string) (*startIndex, error) {
	if !x.Schema.HasColumn(table, "start") {
		return nil, nil
	}
	ix := &startIndex{x: x, table: x.Schema.Name(table), lo: 0, hi: -1}
	q := fmt.Sprintf(`SELECT (SELECT min(rowid) FROM %[1]s), (SELECT max(rowid) FROM %[1]s)`, ix.table)
	v, dest := nullInts(2)
	if _, err := x.scanRows(ctx, "measuring "+table, q, dest, func() error { return nil }); err != nil {
		return nil, err
	}
	if v[0].Valid {
		ix.lo, ix.hi = v[0].Int64, v[1].Int64
	}
	return ix, nil
}

// orderedIndex returns the table's index, made once and checked for
// order; a table without a start column reads as empty.
func (x *Export) orderedIndex(ctx context.Context, table string, cache map[string]*startIndex) (*startIndex, error) {
	if ix, ok := cache[table]; ok {
		return ix, nil
	}
	ix, err := x.newStartIndex(ctx, table)
	if err != nil {
		return nil, err
	}
	if ix == nil {
		ix = &startIndex{x: x, table: table, lo: 0, hi: -1}
	} else if ok, err := ix.ordered(ctx); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%s: %w", table, ErrNotStartOrdered)
	}
	cache[table] = ix
	return ix, nil
}

// ordered checks the start order at 257 evenly spaced rowids.
func (ix *startIndex) ordered(ctx context.Context) (bool, error) {
	const points = 257
	if ix.hi < ix.lo {
		return true, nil
	}
	if ix.lo < 0 || ix.hi == math.MaxInt64 {
		// Rowids nsys never writes (a damaged file): the binary search's
		// bounds would overflow, so the table is read whole.
		return false, nil
	}
	ids := make([]string, points)
	for i := range ids {
		ids[i] = fmt.Sprint(ix.lo + int64(i)*(ix.hi-ix.lo)/(points-1))
	}
	q := fmt.Sprintf(`SELECT start FROM %s WHERE rowid IN (%s) ORDER BY rowid`, ix.table, strings.Join(ids, ", "))
	var start sql.NullInt64
	last, ok := int64(math.MinInt64), true
	_, err := ix.x.scanRows(ctx, "checking the order of "+ix.table, q, []any{&start}, func() error {
		ok = ok && start.Int64 >= last
		last = start.Int64
		return nil
	})
	return ok, err
}

// span returns the rowids [a, b) of the rows that start inside w.
func (ix *startIndex) span(ctx context.Context, w Interval) (int64, int64, error) {
	a, err := ix.first(ctx, w.Start)
	if err != nil {
		return 0, 0, err
	}
	b, err := ix.first(ctx, w.End)
	return a, b, err
}

// first returns the smallest rowid from which every row starts at or
// after t (hi+1 when none does).
func (ix *startIndex) first(ctx context.Context, t int64) (int64, error) {
	q := fmt.Sprintf(`SELECT start FROM %s WHERE rowid >= ? ORDER BY rowid LIMIT 1`, ix.table)
	var start sql.NullInt64
	a, b := ix.lo, ix.hi+1
	for a < b {
		mid := a + (b-a)/2
		found := false
		if _, err := ix.x.scanRows(ctx, "searching "+ix.table, q, []any{&start}, func() error { found = true; return nil }, mid); err != nil {
			return 0, err
		}
		if !found || start.Int64 >= t {
			b = mid
		} else {
			a = mid + 1
		}
	}
	return a, nil
}

// eventRecordsOf reads the event records made by the timelines' calls:
// those whose correlation id lies within a timeline's calls' (a stream
// wait of a window links only to a record made in it).
func (x *Export) eventRecordsOf(ctx context.Context, tls []*Timeline) (*activity, error) {
	act := &activity{}
	s := x.Schema
	if !s.HasColumn(tableCudaEvent, "correlationId") || !s.HasColumn(tableCudaEvent, "streamId") {
		return act, nil
	}
	var conds []string
	var args []any
	for _, tl := range tls {
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, c := range tl.Calls {
			lo, hi = min(lo, c.CorrelationID), max(hi, c.CorrelationID)
		}
		if lo <= hi {
			conds, args = append(conds, "correlationId BETWEEN ? AND ?"), append(args, lo, hi)
		}
	}
	if len(conds) == 0 {
		return act, nil
	}
	q := fmt.Sprintf(`SELECT correlationId, %s, deviceId, contextId, streamId, %s, %s FROM %s WHERE %s`,
		s.col(tableCudaEvent, "globalPid", "0"), s.col(tableCudaEvent, "eventId", "-1"), s.col(tableCudaEvent, "eventSyncId", "-1"),
		s.Name(tableCudaEvent), strings.Join(conds, " OR "))
	v, dest := nullInts(7)
	var rows eventRows
	_, err := x.scanRows(ctx, "reading CUDA event records", q, dest, func() error {
		rows.add(v[1].Int64, eventRecord{corr: v[0].Int64, device: v[2].Int64, context: v[3].Int64, stream: v[4].Int64,
			eventID: intOr(v[5], -1), eventSyncID: intOr(v[6], -1)})
		return nil
	}, args...)
	act.events = rows.index()
	return act, err
}

// rowQuery selects rows of a timeline table: the SQL condition, its
// arguments, and the window its rows go to (-1: every window they
// overlap).
type rowQuery struct {
	where  string
	args   []any
	window int
}

// timelineRead says how a timeline read finds its rows: the queries of
// each table, and the event records the stream waits link to. ordered:
// each query's rows come in start order, checked.
type timelineRead struct {
	rows    func(ctx context.Context, table string) ([]rowQuery, error)
	events  func(ctx context.Context, tls []*Timeline) (*activity, error)
	ordered bool
}

func (x *Export) readTimelines(ctx context.Context, tls []*Timeline, rd timelineRead) error {
	if len(tls) == 0 {
		return nil
	}
	if err := x.timelineCalls(ctx, tls, rd); err != nil {
		return err
	}
	if err := x.timelineOps(ctx, tls, rd); err != nil {
		return err
	}
	return x.timelineWaits(ctx, tls, rd)
}

// scanQueries runs a table's queries (the select list, then FROM and
// WHERE added) and calls fn with each row's start and end and the window
// of its query.
func (x *Export) scanQueries(ctx context.Context, what, table, selectList string, dest []any, start, end *sql.NullInt64, rd timelineRead, fn func(window int) error) error {
	qs, err := rd.rows(ctx, table)
	if err != nil {
		return err
	}
	for _, q := range qs {
		last := int64(math.MinInt64)
		sqlText := fmt.Sprintf("SELECT %s FROM %s WHERE %s", selectList, x.Schema.Name(table), q.where)
		_, err := x.scanRows(ctx, what, sqlText, dest, func() error {
			if rd.ordered {
				if start.Int64 < last {
					return fmt.Errorf("%s: %w", table, ErrNotStartOrdered)
				}
				last = start.Int64
			}
			return fn(q.window)
		}, q.args...)
		if err != nil {
			return err
		}
	}
	return nil
}

// eachWindow calls fn with the index of every timeline whose window the
// interval [start, end) overlaps, or with only the given window.
func eachWindow(tls []*Timeline, window int, start, end int64, fn func(k int)) {
	if window >= 0 {
		fn(window)
		return
	}
	for k, tl := range tls {
		if start < tl.Window.End && end > tl.Window.Start {
			fn(k)
		}
	}
}
