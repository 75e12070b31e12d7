package trace

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/nsyssync/nsyssync/internal/sqlitescan"
)

// scanRows runs a query and calls fn for each row with the values stored
// into dest (*sql.NullInt64, *sql.NullString or *[]byte). It reads through
// SQLite's own API on a pooled connection of the export (see
// internal/sqlitescan): database/sql's locking, boxing and the driver's
// per-column mutex cost more than SQLite's scan on the tables of a large
// export.
func (src *source) scanRows(ctx context.Context, what, query string, dest []any, fn func() error, args ...any) (int64, error) {
	c, err := src.conn()
	if err != nil {
		return 0, src.dbErr(err, what)
	}
	// ints holds dest when every target is an integer, the scans of the
	// large tables: they take the typed fast path.
	ints := make([]*sql.NullInt64, 0, len(dest))
	for _, d := range dest {
		if p, ok := d.(*sql.NullInt64); ok {
			ints = append(ints, p)
		}
	}
	if len(ints) != len(dest) {
		ints = nil
	}
	checked := false
	n, err := c.Scan(ctx, query, args, func(r sqlitescan.Row) error {
		if !checked {
			if got := r.Columns(); got != len(dest) {
				return fmt.Errorf("query returns %d columns, want %d", got, len(dest))
			}
			checked = true
		}
		for i, p := range ints {
			if v, typ := r.IntValue(i); typ == sqlitescan.TypeInteger {
				*p = sql.NullInt64{Int64: v, Valid: true}
			} else if err := assignInt(p, r, i, typ); err != nil {
				return inputErr(src.Path, ErrUnreadableRow, "unexpected value while %s: column %d: %v", what, i+1, err)
			}
		}
		if ints != nil {
			return fn()
		}
		for i, d := range dest {
			if err := assign(d, r, i); err != nil {
				return inputErr(src.Path, ErrUnreadableRow, "unexpected value while %s: column %d: %v", what, i+1, err)
			}
		}
		return fn()
	})
	src.release(c, err)
	return n, src.dbErr(err, what)
}

// assign stores column i of a row into a scan target.
func assign(dst any, r sqlitescan.Row, i int) error {
	typ := r.Type(i)
	switch d := dst.(type) {
	case *sql.NullInt64:
		if typ == sqlitescan.TypeInteger {
			*d = sql.NullInt64{Int64: r.Int64(i), Valid: true}
			return nil
		}
		return assignInt(d, r, i, typ)
	case *sql.NullString:
		if typ == sqlitescan.TypeNull {
			*d = sql.NullString{}
		} else {
			*d = sql.NullString{String: r.Text(i), Valid: true}
		}
	case *[]byte:
		if typ == sqlitescan.TypeText || typ == sqlitescan.TypeBlob {
			*d = append((*d)[:0], r.Bytes(i)...)
		} else {
			*d = nil
		}
	default:
		return fmt.Errorf("unsupported scan target %T", dst)
	}
	return nil
}

// assignInt stores a column that is not an SQLite integer into an integer
// target: NULL as invalid, a real by its integer part, text when it holds
// an integer.
func assignInt(d *sql.NullInt64, r sqlitescan.Row, i, typ int) error {
	switch typ {
	case sqlitescan.TypeInteger:
		*d = sql.NullInt64{Int64: r.Int64(i), Valid: true}
	case sqlitescan.TypeNull:
		*d = sql.NullInt64{}
	case sqlitescan.TypeFloat:
		*d = sql.NullInt64{Int64: int64(r.Float64(i)), Valid: true}
	default:
		text := string(r.Bytes(i))
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return fmt.Errorf("text %q where an integer was expected", truncate(text, 40))
		}
		*d = sql.NullInt64{Int64: n, Valid: true}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// rowidParts splits a query over a table into partsPerCore queries per
// core, each on a rowid range, so that separate connections scan a large
// table in parallel; more parts than cores keep the cores busy to the end
// where the rows of one range cost more than another's. conj joins the
// range condition to the query ("WHERE" or "AND").
//
// A WITHOUT ROWID table has no rowid: its query is one part.
func (src *source) rowidParts(ctx context.Context, table, query, conj string) ([]string, error) {
	if !src.Schema.HasRowid(table) {
		return []string{query}, nil
	}
	v, dest := nullInts(2)
	// Two sub-selects: SQLite answers a lone min() or max() of the rowid
	// from the B-tree's ends, but scans the table for both in one SELECT.
	q := fmt.Sprintf(`SELECT (SELECT min(rowid) FROM %[1]s), (SELECT max(rowid) FROM %[1]s)`, src.Schema.Name(table))
	if _, err := src.scanRows(ctx, "sizing "+table, q, dest, func() error { return nil }); err != nil {
		return nil, err
	}
	var parts []string
	for _, r := range splitRange(v[0].Int64, v[1].Int64, partsPerCore*runtime.GOMAXPROCS(0)) {
		parts = append(parts, fmt.Sprintf(`%s %s rowid BETWEEN %d AND %d`, query, conj, r[0], r[1]))
	}
	return parts, nil
}

// partsPerCore is how many rowid ranges a scan makes per core.
const partsPerCore = 2

// splitRange cuts [lo, hi] into at most n contiguous ranges of about equal
// width, whatever the values (rowids of a damaged file may be anywhere in
// int64): no overflow, no empty range; hi < lo gives one range that
// selects nothing.
func splitRange(lo, hi int64, n int) [][2]int64 {
	if hi < lo || n < 1 {
		return [][2]int64{{lo, hi}}
	}
	width := uint64(hi) - uint64(lo) // exact in uint64 for any lo <= hi
	step := width/uint64(n) + 1
	var out [][2]int64
	for from := uint64(0); ; from += step {
		to := from + step - 1
		if to >= width || to < from {
			return append(out, [2]int64{int64(uint64(lo) + from), hi})
		}
		out = append(out, [2]int64{int64(uint64(lo) + from), int64(uint64(lo) + to)})
	}
}

// scanParts runs a query of integer columns over rowid parts of a table on
// all cores. fn sees one row at a time (calls are serialised), so it may
// write shared state; the scanning and decoding run in parallel.
func (src *source) scanParts(ctx context.Context, what, table, query, conj string, ncols int, fn func(v []sql.NullInt64) error) (int64, error) {
	parts, err := src.rowidParts(ctx, table, query, conj)
	if err != nil {
		return 0, err
	}
	var mu sync.Mutex
	var total int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, q := range parts {
		g.Go(func() error {
			v, dest := nullInts(ncols)
			n, err := src.scanRows(gctx, what, q, dest, func() error {
				mu.Lock()
				defer mu.Unlock()
				return fn(v)
			})
			mu.Lock()
			total += n
			mu.Unlock()
			return err
		})
	}
	err = g.Wait()
	return total, err
}

// nullInts returns n NullInt64 values and their pointers as scan targets.
func nullInts(n int) ([]sql.NullInt64, []any) {
	vals := make([]sql.NullInt64, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return vals, ptrs
}

// intOr returns the value or def when NULL.
func intOr(v sql.NullInt64, def int64) int64 {
	if v.Valid {
		return v.Int64
	}
	return def
}

// inList formats integers as an SQL IN list body.
func inList(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}

// chunks splits ids into slices of at most n for batched IN queries.
func chunks(ids []int64, n int) [][]int64 {
	var out [][]int64
	for len(ids) > n {
		out = append(out, ids[:n])
		ids = ids[n:]
	}
	if len(ids) > 0 {
		out = append(out, ids)
	}
	return out
}

// lookupStrings resolves StringIds ids to their text, by primary key.
func (src *source) lookupStrings(ctx context.Context, ids map[int64]bool) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	list := make([]int64, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	var id sql.NullInt64
	var val sql.NullString
	for _, batch := range chunks(list, 500) {
		q := fmt.Sprintf(`SELECT id, value FROM %s WHERE id IN (%s)`, src.Schema.Name(tableStrings), inList(batch))
		_, err := src.scanRows(ctx, "reading strings", q, []any{&id, &val}, func() error {
			out[id.Int64] = val.String
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
