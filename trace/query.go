package trace

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// scanRows runs a query and calls fn for each row with the scanned values.
// Integer columns are scanned as sql.NullInt64; NULL reads as the zero
// value with Valid false.
func (x *Export) scanRows(ctx context.Context, what, query string, dest []any, fn func() error, args ...any) (int64, error) {
	rows, err := x.db.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, x.dbErr(err, what)
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return n, x.dbErr(err, what)
		}
		n++
		if n&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return n, err
			}
		}
		if err := fn(); err != nil {
			return n, err
		}
	}
	if err := rows.Err(); err != nil {
		return n, x.dbErr(err, what)
	}
	return n, nil
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
