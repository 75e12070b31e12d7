package trace

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
)

// scanRows runs a query and calls fn for each row with the values stored
// into dest (*sql.NullInt64, *sql.NullString or *[]byte). It reads through
// the driver directly: database/sql's per-row locking and reflection cost
// more than SQLite's own scan on the tables of a large export.
func (x *Export) scanRows(ctx context.Context, what, query string, dest []any, fn func() error, args ...any) (int64, error) {
	conn, err := x.db.Conn(ctx)
	if err != nil {
		return 0, x.dbErr(err, what)
	}
	defer conn.Close()
	var n int64
	err = conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("the SQLite driver cannot run queries")
		}
		named := make([]driver.NamedValue, len(args))
		for i, a := range args {
			named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
		}
		rows, err := q.QueryContext(ctx, query, named)
		if err != nil {
			return err
		}
		defer rows.Close()
		if got := len(rows.Columns()); got != len(dest) {
			return fmt.Errorf("query returns %d columns, want %d", got, len(dest))
		}
		vals := make([]driver.Value, len(dest))
		for {
			if err := rows.Next(vals); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
			n++
			if n&0xffff == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			for i, v := range vals {
				if err := assign(dest[i], v); err != nil {
					return inputErr(x.Path, ErrUnreadableRow, "unexpected value while %s: column %d: %v", what, i+1, err)
				}
			}
			if err := fn(); err != nil {
				return err
			}
		}
	})
	return n, x.dbErr(err, what)
}

// assign stores a driver value into a scan target.
func assign(dst any, v driver.Value) error {
	switch d := dst.(type) {
	case *sql.NullInt64:
		switch t := v.(type) {
		case nil:
			*d = sql.NullInt64{}
		case int64:
			*d = sql.NullInt64{Int64: t, Valid: true}
		case float64:
			*d = sql.NullInt64{Int64: int64(t), Valid: true}
		case bool:
			*d = sql.NullInt64{Valid: true}
			if t {
				d.Int64 = 1
			}
		case string, []byte:
			n, err := strconv.ParseInt(fmt.Sprint(asString(t)), 10, 64)
			if err != nil {
				return fmt.Errorf("text %q where an integer was expected", truncate(asString(t), 40))
			}
			*d = sql.NullInt64{Int64: n, Valid: true}
		default:
			return fmt.Errorf("%T where an integer was expected", v)
		}
	case *sql.NullString:
		switch t := v.(type) {
		case nil:
			*d = sql.NullString{}
		case int64:
			*d = sql.NullString{String: strconv.FormatInt(t, 10), Valid: true}
		case float64:
			*d = sql.NullString{String: strconv.FormatFloat(t, 'g', -1, 64), Valid: true}
		default:
			*d = sql.NullString{String: asString(t), Valid: true}
		}
	case *[]byte:
		switch t := v.(type) {
		case nil:
			*d = nil
		case []byte:
			*d = append((*d)[:0], t...)
		case string:
			*d = append((*d)[:0], t...)
		default:
			*d = nil
		}
	default:
		return fmt.Errorf("unsupported scan target %T", dst)
	}
	return nil
}

func asString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []byte:
		return string(t)
	}
	return fmt.Sprint(v)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// rowidParts splits a query over a table into one query per core, each on
// a rowid range, so that separate connections scan a large table in
// parallel. conj joins the range condition to the query ("WHERE" or "AND").
func (x *Export) rowidParts(ctx context.Context, table, query, conj string) ([]string, error) {
	v, dest := nullInts(1)
	q := fmt.Sprintf(`SELECT max(rowid) FROM %s`, x.Schema.Name(table))
	if _, err := x.scanRows(ctx, "sizing "+table, q, dest, func() error { return nil }); err != nil {
		return nil, err
	}
	n := int64(runtime.GOMAXPROCS(0))
	step := v[0].Int64/n + 1
	var parts []string
	for lo := int64(0); lo <= v[0].Int64; lo += step {
		parts = append(parts, fmt.Sprintf(`%s %s rowid BETWEEN %d AND %d`, query, conj, lo, lo+step-1))
	}
	return parts, nil
}

// scanParts runs a query of integer columns over rowid parts of a table on
// all cores. fn sees one row at a time (calls are serialised), so it may
// write shared state; the scanning and decoding run in parallel.
func (x *Export) scanParts(ctx context.Context, what, table, query, conj string, ncols int, fn func(v []sql.NullInt64) error) (int64, error) {
	parts, err := x.rowidParts(ctx, table, query, conj)
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
			n, err := x.scanRows(gctx, what, q, dest, func() error {
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
func (x *Export) lookupStrings(ctx context.Context, ids map[int64]bool) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	list := make([]int64, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	var id sql.NullInt64
	var val sql.NullString
	for _, batch := range chunks(list, 500) {
		q := fmt.Sprintf(`SELECT id, value FROM %s WHERE id IN (%s)`, x.Schema.Name(tableStrings), inList(batch))
		_, err := x.scanRows(ctx, "reading strings", q, []any{&id, &val}, func() error {
			out[id.Int64] = val.String
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pidOf returns the globalPid of a globalTid (tid bits cleared).
func pidOf(globalTid int64) int64 { return globalTid &^ 0xFFFFFF }

// PidOf returns the operating-system pid encoded in a globalTid or globalPid.
func PidOf(global int64) int64 { return (global >> 24) & 0xFFFFFF }

// TidOf returns the operating-system tid encoded in a globalTid.
func TidOf(globalTid int64) int64 { return globalTid & 0xFFFFFF }
