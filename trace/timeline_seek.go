package trace

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nsyssync/nsyssync/internal/sqlitefile"
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
	tr := timelineReader{x.src}
	tls := newTimelines(windows)
	idx := map[string]*startIndex{}
	rd := timelineRead{ordered: true,
		rows: func(ctx context.Context, table string) ([]rowQuery, error) {
			ix, err := tr.orderedIndex(ctx, table, idx)
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
					qs = append(qs, rowQuery{where: "rowid >= ? AND rowid < ?", args: []any{a, b}, window: k, ranged: true, lo: a, hi: b})
				}
			}
			return qs, nil
		},
		events: tr.eventRecordsOf,
	}
	return tls, tr.readTimelines(ctx, tls, rd)
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
		ix, err := timelineReader{x.src}.newStartIndex(ctx, table)
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
	src    *source
	table  string // as the export names it
	lo, hi int64  // rowid bounds; hi < lo when empty
	// noRowid: a WITHOUT ROWID table, never searched by rowid (lo and hi
	// only count its rows).
	noRowid bool
}

// newStartIndex reads a table's rowid bounds; nil when it has no start
// column.
func (tr timelineReader) newStartIndex(ctx context.Context, table string) (*startIndex, error) {
	if !tr.Schema.HasColumn(table, "start") {
		return nil, nil
	}
	ix := &startIndex{src: tr.source, table: tr.Schema.Name(table), lo: 0, hi: -1, noRowid: !tr.Schema.HasRowid(table)}
	q := fmt.Sprintf(`SELECT (SELECT min(rowid) FROM %[1]s), (SELECT max(rowid) FROM %[1]s)`, ix.table)
	if ix.noRowid {
		q = fmt.Sprintf(`SELECT 0, count(*) - 1 FROM %s`, ix.table)
	}
	v, dest := nullInts(2)
	if _, err := tr.scanRows(ctx, "measuring "+table, q, dest, func() error { return nil }); err != nil {
		return nil, err
	}
	if v[0].Valid {
		ix.lo, ix.hi = v[0].Int64, v[1].Int64
	}
	return ix, nil
}

// orderedIndex returns the table's index, made once and checked for
// order; a table without a start column reads as empty.
func (tr timelineReader) orderedIndex(ctx context.Context, table string, cache map[string]*startIndex) (*startIndex, error) {
	if ix, ok := cache[table]; ok {
		return ix, nil
	}
	ix, err := tr.newStartIndex(ctx, table)
	if err != nil {
		return nil, err
	}
	if ix == nil {
		ix = &startIndex{src: tr.source, table: table, lo: 0, hi: -1}
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
	if ix.noRowid || ix.lo < 0 || ix.hi == math.MaxInt64 {
		// A WITHOUT ROWID table cannot be searched by rowid, and rowids
		// nsys never writes (a damaged file) would overflow the binary
		// search's bounds: either table is read whole.
		return false, nil
	}
	ids := make([]string, points)
	for i := range ids {
		ids[i] = fmt.Sprint(ix.lo + int64(i)*(ix.hi-ix.lo)/(points-1))
	}
	q := fmt.Sprintf(`SELECT start FROM %s WHERE rowid IN (%s) ORDER BY rowid`, ix.table, strings.Join(ids, ", "))
	var start sql.NullInt64
	last, ok := int64(math.MinInt64), true
	_, err := ix.src.scanRows(ctx, "checking the order of "+ix.table, q, []any{&start}, func() error {
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
		if _, err := ix.src.scanRows(ctx, "searching "+ix.table, q, []any{&start}, func() error { found = true; return nil }, mid); err != nil {
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
func (tr timelineReader) eventRecordsOf(ctx context.Context, tls []*Timeline) (*activity, error) {
	act := &activity{}
	s := tr.Schema
	if !s.HasColumn(tableCudaEvent, "correlationId") || !s.HasColumn(tableCudaEvent, "streamId") {
		return act, nil
	}
	var conds []string
	var spans []Interval // correlation id ranges, sorted by their start
	for _, tl := range tls {
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, c := range tl.Calls {
			lo, hi = min(lo, c.CorrelationID), max(hi, c.CorrelationID)
		}
		if lo <= hi {
			conds = append(conds, fmt.Sprintf("correlationId BETWEEN %d AND %d", lo, hi))
			spans = append(spans, Interval{lo, hi})
		}
	}
	if len(conds) == 0 {
		return act, nil
	}
	in := inRanges(spans)
	inSpan := func(v []sql.NullInt64) bool { return v[0].Valid && in(v[0].Int64) }
	var rows eventRows
	scan := intScan{what: "reading CUDA event records", table: tableCudaEvent, serial: true,
		cols: []intCol{col("correlationId"), colOr("globalPid", 0), col("deviceId"), col("contextId"), col("streamId"),
			colOr("eventId", -1), colOr("eventSyncId", -1)},
		where: strings.Join(conds, " OR "), keep: inSpan}
	_, err := tr.scanInts(ctx, scan, func(_, _ int) func(v []sql.NullInt64) error {
		return func(v []sql.NullInt64) error {
			rows.add(v[1].Int64, eventRecord{corr: v[0].Int64, device: DeviceID(v[2].Int64), context: ContextID(v[3].Int64), stream: StreamID(v[4].Int64),
				eventID: intOr(v[5], -1), eventSyncID: intOr(v[6], -1)})
			return nil
		}
	})
	act.events = rows.index()
	return act, err
}

// inRanges returns the test of whether a value lies in any of the closed
// ranges: merged into disjoint ones, a binary search finds the one range
// that can hold it.
func inRanges(ranges []Interval) func(int64) bool {
	if len(ranges) == 0 {
		return func(int64) bool { return false }
	}
	sorted := slices.SortedFunc(slices.Values(ranges), func(a, b Interval) int { return cmp.Compare(a.Start, b.Start) })
	merged := sorted[:1]
	for _, r := range sorted[1:] {
		if last := &merged[len(merged)-1]; r.Start <= last.End {
			last.End = max(last.End, r.End)
		} else {
			merged = append(merged, r)
		}
	}
	return func(v int64) bool {
		i, _ := slices.BinarySearchFunc(merged, v, func(r Interval, v int64) int {
			if r.Start > v {
				return 1
			}
			return -1
		})
		return i > 0 && v <= merged[i-1].End
	}
}

// rowQuery selects rows of a timeline table: the SQL condition, its
// arguments, and the window its rows go to (-1: every window they
// overlap). Read from the file's pages, a ranged query reads the rowids
// lo <= rowid < hi, any other the whole table (the rows a window does not
// overlap are dropped by eachWindow).
type rowQuery struct {
	where  string
	args   []any
	window int
	ranged bool
	lo, hi int64
}

// timelineRead says how a timeline read finds its rows: the queries of
// each table, and the event records the stream waits link to. ordered:
// each query's rows come in start order, checked.
type timelineRead struct {
	rows    func(ctx context.Context, table string) ([]rowQuery, error)
	events  func(ctx context.Context, tls []*Timeline) (*activity, error)
	ordered bool
}

func (tr timelineReader) readTimelines(ctx context.Context, tls []*Timeline, rd timelineRead) error {
	if len(tls) == 0 {
		return nil
	}
	if err := tr.timelineCalls(ctx, tls, rd); err != nil {
		return err
	}
	if err := tr.timelineOps(ctx, tls, rd); err != nil {
		return err
	}
	return tr.timelineWaits(ctx, tls, rd)
}

// scanQueries runs a table's queries over the columns cols (the first
// two: start and end) and calls fn with each row kept (keep nil: every
// row) and the window of its query. keepSQL is keep as an SQL condition,
// for the SQL path.
func (tr timelineReader) scanQueries(ctx context.Context, what, table string, cols []intCol, keep func(v []sql.NullInt64) bool, keepSQL string, rd timelineRead, fn func(v []sql.NullInt64, window int) error) error {
	qs, err := rd.rows(ctx, table)
	if err != nil || len(qs) == 0 {
		return err
	}
	f, lay, err := tr.fileLayout(ctx, table)
	if err != nil {
		return tr.dbErr(err, what)
	}
	fromFile := f != nil && lay.ok && !(intScan{cols: cols}).needsSQL(lay)
	var idx []int
	if fromFile {
		idx = lay.recordColumns(cols)
	}
	v, dest := nullInts(len(cols))
	for i, c := range cols {
		v[i] = c.def // what a column the file's table lacks reads as
	}
	for _, q := range qs {
		last := int64(math.MinInt64)
		row := func() error {
			if keep != nil && !keep(v) {
				return nil
			}
			if rd.ordered {
				if v[0].Int64 < last {
					return fmt.Errorf("%s: %w", table, ErrNotStartOrdered)
				}
				last = v[0].Int64
			}
			return fn(v, q.window)
		}
		if fromFile {
			part := sqlitefile.RowidRange(lay.root, q.lo, q.hi)
			if !q.ranged {
				parts, err := f.Parts(lay.root, 1)
				if err != nil {
					return tr.dbErr(err, what)
				}
				part = parts[0]
			}
			if _, err := f.ScanInts(ctx, part, idx, v, row); err != nil {
				return tr.dbErr(tr.valueErr(err, what, cols, idx), what)
			}
			continue
		}
		where := q.where
		if keepSQL != "" {
			where = keepSQL + " AND " + where
		}
		sqlText := fmt.Sprintf("SELECT %s FROM %s WHERE %s", tr.selectList(table, cols), tr.Schema.Name(table), where)
		if _, err := tr.scanRows(ctx, what, sqlText, dest, row, q.args...); err != nil {
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
