package trace

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRowidsAtTheLimits: the parallel scans split tables by rowid and the
// timeline reads search them by rowid; rows at negative rowids and at the
// int64 limits must be read, and neither may loop (the split once looped
// forever when the largest rowid was near MaxInt64, and the search when
// the rowids spanned more than MaxInt64).
func TestRowidsAtTheLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rowids []string
	}{
		{"up to MaxInt64", []string{"-1", "0", "5", "4611686018427387904", "9223372036854775806", "9223372036854775807"}},
		{"from MinInt64", []string{"-9223372036854775808", "-1", "0", "5", "152280165752441601"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stmts := []string{`CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)`, runtimeDDL,
				`INSERT INTO StringIds VALUES (1, 'cudaStreamSynchronize_v3020')`}
			for i, r := range tc.rowids {
				stmts = append(stmts, sqlf(`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (rowid, start, "end", eventClass, globalTid, correlationId, nameId, returnValue)
					VALUES (%s, %d, %d, 0, 16777217, %d, 1, 0)`, r, 1000*(i+1), 1000*(i+1)+500, i+1))
			}
			path := makeDB(t, "rowids.sqlite", stmts...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			x, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			tr, err := x.Load(ctx, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Syncs) != len(tc.rowids) {
				t.Errorf("%d syncs, want one per row: %d", len(tr.Syncs), len(tc.rowids))
			}
			all := []Interval{{0, 1 << 40}}
			if _, err := x.TimelineRows(ctx, all); err != nil {
				t.Errorf("TimelineRows: %v", err)
			}
			if _, err := x.TimelinesByStart(ctx, all); err != nil && !errors.Is(err, ErrNotStartOrdered) {
				t.Errorf("TimelinesByStart: %v", err)
			}
		})
	}
}
