package tracegen

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// replicated lists the tables whose rows are copied, in processing order.
// Every other table (StringIds, ThreadNames, OSRT_API, TARGET_INFO_*, …) is
// left exactly as it is in the source.
var replicated = []string{
	"CUPTI_ACTIVITY_KIND_RUNTIME",
	"CUPTI_ACTIVITY_KIND_KERNEL",
	"CUPTI_ACTIVITY_KIND_MEMCPY",
	"CUPTI_ACTIVITY_KIND_MEMSET",
	"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
	"CUPTI_ACTIVITY_KIND_CUDA_EVENT",
	"CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
	"CUDA_CALLCHAINS",
	"NVTX_EVENTS",
}

// nvtxDefinitionTypes are NVTX_EVENTS.eventType values of rows that define
// something once per process rather than record an event: category, thread
// and CUDA object naming, NVTXT metadata, domain create (75) and destroy
// (76). They are not replicated, so that every domainId still resolves to
// exactly one NvtxDomainCreate row per process.
const nvtxDefinitionTypes = "33, 39, 64, 72, 73, 74, 75, 76, 97, 98, 99"

// gapNs is the idle time inserted between the end of one copy and the start
// of the next.
const gapNs = 1_000_000

// invalidID is CUPTI's CUPTI_SYNCHRONIZATION_INVALID_VALUE (0xFFFFFFFF),
// used as "none" in eventSyncId and eventId.
const invalidID = 4294967295

// colKind says how a column is shifted in each copy.
type colKind int

const (
	plain    colKind = iota // copied as is
	timeCol                 // start, end: shifted by k × period (NULL stays NULL)
	stampCol                // other timestamps: shifted unless 0 ("not collected") or NULL
	corrID                  // correlationId
	chainID                 // RUNTIME.callchainId, CUDA_CALLCHAINS.id
	syncID                  // eventSyncId
	rangeID                 // NVTX rangeId
	numKinds
)

type column struct {
	name string
	kind colKind
}

type table struct {
	name   string
	cols   []column
	filter string // SQL condition selecting the rows to replicate; "" = all
	rows   int64  // rows replicated per copy
	snap   string // name of the temp snapshot of those rows
}

// plan holds the shifts: copy k moves kind K by k × step[K].
type plan struct {
	tables    []*table
	step      [numKinds]int64
	maxCopies int64 // copies beyond which a shifted value would overflow int64
}

func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// valid is the SQL condition under which a value of column c is shifted.
func (c column) valid() string {
	q := quote(c.name)
	switch c.kind {
	case timeCol:
		return q + " IS NOT NULL"
	case stampCol:
		return q + " <> 0"
	case chainID:
		return q + " >= 0" // callchainId 0 is a valid id
	case corrID, syncID, rangeID:
		return fmt.Sprintf("%s > 0 AND %s <> %d", q, q, invalidID)
	}
	return ""
}

// expr is the SQL expression giving column c in copy k.
func (c column) expr(p *plan, k int64) string {
	q := quote(c.name)
	switch c.kind {
	case plain:
		return q
	case timeCol:
		return q + " + " + strconv.FormatInt(k*p.step[timeCol], 10)
	}
	return fmt.Sprintf("CASE WHEN %s THEN %s + %d ELSE %s END", c.valid(), q, k*p.step[c.kind], q)
}

// classify tells the kind of a column from its name and, for columns whose
// name says nothing, from the comment nsys puts after it in the DDL.
func classify(tbl, col string, stamps map[string]bool) colKind {
	switch {
	case strings.EqualFold(col, "start"), strings.EqualFold(col, "end"):
		return timeCol
	case strings.EqualFold(col, "timestamp"), stamps[strings.ToLower(col)]:
		return stampCol
	case strings.EqualFold(col, "correlationId"):
		return corrID
	case strings.EqualFold(col, "callchainId"),
		tbl == "CUDA_CALLCHAINS" && strings.EqualFold(col, "id"):
		return chainID
	case strings.EqualFold(col, "eventSyncId"):
		return syncID
	case tbl == "NVTX_EVENTS" && strings.EqualFold(col, "rangeId"):
		return rangeID
	}
	return plain
}

// commentStamps returns the lower-cased names of columns whose DDL comment
// calls them a timestamp ("qmdPreexitDone INTEGER, -- QMD pre-exit done
// timestamp from CWD events.").
func commentStamps(ddl string) map[string]bool {
	m := map[string]bool{}
	for _, line := range strings.Split(ddl, "\n") {
		code, comment, ok := strings.Cut(line, "--")
		if !ok || !strings.Contains(strings.ToLower(comment), "timestamp") {
			continue
		}
		if f := strings.Fields(code); len(f) > 0 {
			m[strings.ToLower(strings.Trim(f[0], "\"`[]"))] = true
		}
	}
	return m
}

// discover finds the replicated tables present in the export, their
// columns, the rows to copy, and the shifts that keep copies apart.
func discover(ctx context.Context, conn *sql.Conn) (*plan, error) {
	ddl := map[string]string{}
	rows, err := conn.QueryContext(ctx, `SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, fmt.Errorf("read sqlite_master (not an SQLite database?): %w", err)
	}
	for rows.Next() {
		var name, s string
		if err := rows.Scan(&name, &s); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read sqlite_master: %w", err)
		}
		ddl[name] = s
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("read sqlite_master: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read sqlite_master: %w", err)
	}

	p := &plan{}
	for _, name := range replicated {
		s, ok := ddl[name]
		if !ok {
			continue
		}
		t, err := describe(ctx, conn, name, s)
		if err != nil {
			return nil, err
		}
		if t.rows > 0 {
			p.tables = append(p.tables, t)
		}
	}
	if len(p.tables) == 0 {
		return nil, fmt.Errorf("no CUDA or NVTX rows to replicate (none of %s has rows)", strings.Join(replicated, ", "))
	}
	if err := p.measure(ctx, conn); err != nil {
		return nil, err
	}
	return p, nil
}

func describe(ctx context.Context, conn *sql.Conn, name, ddl string) (*table, error) {
	if strings.Contains(strings.ToUpper(ddl), "WITHOUT ROWID") {
		return nil, fmt.Errorf("table %s is WITHOUT ROWID, which nsys never writes: unsupported", name)
	}
	rows, err := conn.QueryContext(ctx, `SELECT name, upper(type), pk, hidden FROM pragma_table_xinfo(?)`, name)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", name, err)
	}
	type info struct {
		name, typ  string
		pk, hidden int
	}
	var all []info
	pks := 0
	for rows.Next() {
		var c info
		if err := rows.Scan(&c.name, &c.typ, &c.pk, &c.hidden); err != nil {
			rows.Close()
			return nil, fmt.Errorf("columns of %s: %w", name, err)
		}
		if c.pk > 0 {
			pks++
		}
		all = append(all, c)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("columns of %s: %w", name, err)
	}
	stamps := commentStamps(ddl)
	t := &table{name: name}
	hasEventType := false
	for _, c := range all {
		if c.hidden != 0 {
			continue // generated columns cannot be inserted
		}
		if c.pk > 0 && pks == 1 && c.typ == "INTEGER" {
			continue // rowid alias (NVTX_EVENTS.eventId in newer schemas): SQLite assigns new ones
		}
		if name == "NVTX_EVENTS" && strings.EqualFold(c.name, "eventType") {
			hasEventType = true
		}
		t.cols = append(t.cols, column{name: c.name, kind: classify(name, c.name, stamps)})
	}
	if len(t.cols) == 0 {
		return t, nil
	}
	if hasEventType {
		t.filter = `"eventType" NOT IN (` + nvtxDefinitionTypes + `)`
	}
	q := `SELECT count(*) FROM main.` + quote(name) + t.where()
	if err := conn.QueryRowContext(ctx, q).Scan(&t.rows); err != nil {
		return nil, fmt.Errorf("count rows of %s: %w", name, err)
	}
	return t, nil
}

func (t *table) where() string {
	if t.filter == "" {
		return ""
	}
	return " WHERE " + t.filter
}

// measure sets the time period (span of all replicated rows + gapNs) and
// the id steps (max valid id + 1), and the copy count that would overflow.
func (p *plan) measure(ctx context.Context, conn *sql.Conn) error {
	var lo, hi [numKinds]sql.NullInt64
	for _, t := range p.tables {
		var aggs []string
		var idx []colKind
		for _, c := range t.cols {
			if c.kind == plain {
				continue
			}
			v := fmt.Sprintf("CASE WHEN %s THEN %s END", c.valid(), quote(c.name))
			aggs = append(aggs, "min("+v+")", "max("+v+")")
			idx = append(idx, c.kind)
		}
		if len(aggs) == 0 {
			continue
		}
		vals := make([]sql.NullInt64, len(aggs))
		dst := make([]any, len(aggs))
		for i := range vals {
			dst[i] = &vals[i]
		}
		q := "SELECT " + strings.Join(aggs, ", ") + " FROM main." + quote(t.name) + t.where()
		if err := conn.QueryRowContext(ctx, q).Scan(dst...); err != nil {
			return fmt.Errorf("measure %s: %w", t.name, err)
		}
		for i, k := range idx {
			if k == stampCol {
				k = timeCol // all timestamps share one period
			}
			if v := vals[2*i]; v.Valid && (!lo[k].Valid || v.Int64 < lo[k].Int64) {
				lo[k] = v
			}
			if v := vals[2*i+1]; v.Valid && (!hi[k].Valid || v.Int64 > hi[k].Int64) {
				hi[k] = v
			}
		}
	}
	p.maxCopies = math.MaxInt64
	for k := timeCol; k < numKinds; k++ {
		if k == stampCol || !hi[k].Valid {
			p.step[k] = 1
			continue
		}
		if k == timeCol {
			if hi[k].Int64-lo[k].Int64 > math.MaxInt64/2 {
				return fmt.Errorf("time span %d..%d too wide to replicate", lo[k].Int64, hi[k].Int64)
			}
			p.step[k] = hi[k].Int64 - lo[k].Int64 + gapNs
		} else {
			if hi[k].Int64 == math.MaxInt64 {
				return fmt.Errorf("an id reaches the largest integer; cannot shift it")
			}
			p.step[k] = hi[k].Int64 + 1
		}
		if hi[k].Int64 > 0 {
			p.maxCopies = min(p.maxCopies, (math.MaxInt64-hi[k].Int64)/p.step[k])
		} else {
			p.maxCopies = min(p.maxCopies, math.MaxInt64/p.step[k])
		}
	}
	p.step[stampCol] = p.step[timeCol]
	return nil
}
