package trace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/nsyssync/nsyssync/internal/sqlitefile"
)

// intScan is a full scan of integer columns of one of the large tables.
// It reads the table's B-tree pages straight from the file (see
// internal/sqlitefile: a tenth of the CPU of SQLite's own scan) and falls
// back to SQL where the file's layout is not one that package reads.
type intScan struct {
	what  string // for errors: "reading GPU activity"
	table string // canonical table name
	cols  []intCol
	// where is keep as an SQL condition, applied by the SQL path before
	// the row is decoded; "" for none. keep (nil: every row) is applied on
	// both paths.
	where string
	keep  func(v []sql.NullInt64) bool
	// serial reads the table in one part, on one goroutine.
	serial bool
	// see, when set, is given every row read, before keep; the SQL path
	// then does not apply where, so that it sees them all. Like onPart, it
	// is called at the start of each part for the function that takes the
	// part's rows (its error is ignored).
	see onPart
}

// intCol is a column of an intScan, and its value in exports whose table
// lacks it.
type intCol struct {
	name string
	def  sql.NullInt64
}

func col(name string) intCol { return intCol{name: name} }

func colOr(name string, def int64) intCol {
	return intCol{name: name, def: sql.NullInt64{Int64: def, Valid: true}}
}

// tableLayout is where a table's rows are in the file: the root page of
// its B-tree and the record index of each column (sqlitefile.Rowid for an
// INTEGER PRIMARY KEY). ok is false when the file path cannot read it.
// needSQL marks the columns only SQLite can give: one with a default
// value (SQLite supplies it for rows written before the column was
// added) and a VIRTUAL generated column (computed, not in the record).
type tableLayout struct {
	ok      bool
	root    uint32
	index   map[string]int
	needSQL map[string]bool
}

// onPart is called when worker w (0 ≤ w < GOMAXPROCS) begins part p of a
// scan, and returns the function that receives the part's rows, one at a
// time, in rowid order. Workers run at once: calls for different workers
// must not share unguarded state.
type onPart func(w, p int) func(v []sql.NullInt64) error

// scanInts runs the scan over rowid-ordered parts of the table on all
// cores, and returns the rows kept. With serial set, one worker reads the
// table as one part.
func (src *source) scanInts(ctx context.Context, s intScan, fn onPart) (int64, error) {
	f, lay, err := src.fileLayout(ctx, s.table)
	if err != nil {
		return 0, src.dbErr(err, s.what)
	}
	if f != nil && lay.ok && !s.needsSQL(lay) {
		workers := runtime.GOMAXPROCS(0)
		nparts := partsPerCore * workers
		if s.serial {
			workers, nparts = 1, 1
		}
		parts, err := f.Parts(lay.root, nparts)
		if err == nil {
			n, err := src.scanFileParts(ctx, f, lay, s, parts, workers, fn)
			return n, src.dbErr(err, s.what)
		}
	}
	return src.scanIntsSQL(ctx, s, fn)
}

// recordColumns maps columns to their record indexes; a column the table
// lacks is sqlitefile.Absent, its target keeps the column's default.
func (lay *tableLayout) recordColumns(cols []intCol) []int {
	idx := make([]int, len(cols))
	for i, c := range cols {
		if k, ok := lay.index[c.name]; ok {
			idx[i] = k
		} else {
			idx[i] = sqlitefile.Absent
		}
	}
	return idx
}

// valueErr turns a column that holds text where an integer belongs into
// the same error as the SQL path's; other errors pass.
func (src *source) valueErr(err error, what string, cols []intCol, idx []int) error {
	var ve *sqlitefile.ValueError
	if errors.As(err, &ve) {
		name := "?"
		if i := slices.Index(idx, ve.Column); i >= 0 {
			name = cols[i].name
		}
		return inputErr(src.Path, ErrUnreadableRow, "unexpected value while %s: column %s: text %q where an integer was expected",
			what, name, truncate(ve.Text, 40))
	}
	return err
}

// selectList is the SQL select list of columns: a column the table lacks
// reads as its default.
func (src *source) selectList(table string, cols []intCol) string {
	exprs := make([]string, len(cols))
	for i, c := range cols {
		lit := "NULL"
		if c.def.Valid {
			lit = strconv.FormatInt(c.def.Int64, 10)
		}
		exprs[i] = src.Schema.col(table, c.name, lit)
		if c.name == rowidColumn && !src.Schema.HasColumn(table, rowidColumn) && src.Schema.HasRowid(table) {
			exprs[i] = rowidColumn
		}
	}
	return strings.Join(exprs, ", ")
}

// needsSQL reports whether a requested column is one only SQLite can
// give (tableLayout.needSQL).
func (s intScan) needsSQL(lay *tableLayout) bool {
	for _, c := range s.cols {
		if lay.needSQL[c.name] {
			return true
		}
	}
	return false
}

func (src *source) scanFileParts(ctx context.Context, f *sqlitefile.File, lay *tableLayout, s intScan, parts []sqlitefile.Part, workers int, onPart onPart) (int64, error) {
	cols := lay.recordColumns(s.cols)
	var kept atomic.Int64
	err := runParts(ctx, len(parts), workers, func(gctx context.Context, w int, work <-chan int) error {
		v := make([]sql.NullInt64, len(s.cols))
		for i, c := range s.cols {
			v[i] = c.def
		}
		var n int64
		defer func() { kept.Add(n) }()
		for p := range work {
			fn := onPart(w, p)
			var see func([]sql.NullInt64) error
			if s.see != nil {
				see = s.see(w, p)
			}
			_, err := f.ScanInts(gctx, parts[p], cols, v, func() error {
				if see != nil {
					see(v)
				}
				if s.keep != nil && !s.keep(v) {
					return nil
				}
				n++
				return fn(v)
			})
			if err != nil {
				return src.valueErr(err, s.what, s.cols, cols)
			}
		}
		return nil
	})
	return kept.Load(), err
}

// runParts runs worker on min(workers, nparts) goroutines, which take the
// part numbers 0 to nparts-1 from work; the first error cancels the rest.
func runParts(ctx context.Context, nparts, workers int, worker func(ctx context.Context, w int, work <-chan int) error) error {
	work := make(chan int, nparts)
	for p := range nparts {
		work <- p
	}
	close(work)
	g, gctx := errgroup.WithContext(ctx)
	for w := range min(workers, nparts) {
		g.Go(func() error { return worker(gctx, w, work) })
	}
	return g.Wait()
}

// scanIntsSQL is the same scan through SQLite, over rowid ranges.
func (src *source) scanIntsSQL(ctx context.Context, s intScan, onPart onPart) (int64, error) {
	q := fmt.Sprintf(`SELECT %s FROM %s`, src.selectList(s.table, s.cols), src.Schema.Name(s.table))
	conj := "WHERE"
	if s.where != "" && s.see == nil {
		q += " WHERE " + s.where
		conj = "AND"
	}
	parts := []string{q}
	workers := 1
	if !s.serial {
		var err error
		if parts, err = src.rowidParts(ctx, s.table, q, conj); err != nil {
			return 0, err
		}
		workers = runtime.GOMAXPROCS(0)
	}
	var kept atomic.Int64
	err := runParts(ctx, len(parts), workers, func(gctx context.Context, w int, work <-chan int) error {
		v, dest := nullInts(len(s.cols))
		for p := range work {
			fn := onPart(w, p)
			var see func([]sql.NullInt64) error
			if s.see != nil {
				see = s.see(w, p)
			}
			_, err := src.scanRows(gctx, s.what, parts[p], dest, func() error {
				if see != nil {
					see(v)
				}
				if s.keep != nil && !s.keep(v) {
					return nil
				}
				kept.Add(1)
				return fn(v)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return kept.Load(), err
}

// fileLayout opens the file for page reads (once) and finds the table's
// layout (once per table). f is nil where the file cannot be read so.
func (src *source) fileLayout(ctx context.Context, table string) (*sqlitefile.File, *tableLayout, error) {
	src.fileMu.Lock()
	defer src.fileMu.Unlock()
	if src.sqlOnly {
		return nil, nil, nil
	}
	if src.file == nil && src.fileErr == nil {
		src.file, src.fileErr = sqlitefile.Open(src.data)
	}
	if src.fileErr != nil {
		return nil, nil, nil
	}
	name := src.Schema.Name(table)
	if lay, ok := src.layouts[name]; ok {
		return src.file, lay, nil
	}
	lay, err := src.readLayout(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	if src.layouts == nil {
		src.layouts = map[string]*tableLayout{}
	}
	src.layouts[name] = lay
	return src.file, lay, nil
}

// readLayout reads a table's root page and record layout from the
// schema. PRAGMA table_xinfo lists every column in declared order,
// generated ones too (table_info hides them, and a STORED one before the
// columns read would shift their indexes): hidden is 0 for an ordinary
// column, 2 for a VIRTUAL generated column, which takes no slot in the
// record, and 3 for a STORED one, which does. A WITHOUT ROWID table, a
// virtual table, or a column hidden any other way is left to SQL.
func (src *source) readLayout(ctx context.Context, name string) (*tableLayout, error) {
	lay := &tableLayout{index: map[string]int{}, needSQL: map[string]bool{}}
	var root sql.NullInt64
	err := src.sqlDB.QueryRowContext(ctx, `SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&root)
	if errors.Is(err, sql.ErrNoRows) {
		return lay, nil
	}
	if err != nil {
		return nil, err
	}
	if !root.Valid || root.Int64 < 1 || root.Int64 > 0xFFFFFFFF || !src.Schema.HasRowid(name) {
		return lay, nil
	}
	rows, err := src.sqlDB.QueryContext(ctx, `SELECT name, type, pk, dflt_value IS NOT NULL, hidden,
		(SELECT count(*) FROM pragma_table_xinfo(?1) WHERE pk > 0) FROM pragma_table_xinfo(?1)`, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	slot := 0 // the column's index in the record
	for rows.Next() {
		var pk, hidden, npk int
		var col, typ string
		var dflt bool
		if err := rows.Scan(&col, &typ, &pk, &dflt, &hidden, &npk); err != nil {
			return nil, err
		}
		switch hidden {
		case 0, 3: // ordinary, STORED generated: in the record
			lay.index[col] = slot
			lay.needSQL[col] = dflt
			slot++
		case 2: // VIRTUAL generated: computed by SQLite
			lay.needSQL[col] = true
		default:
			return &tableLayout{}, nil
		}
		if hidden == 0 && pk == 1 && npk == 1 && strings.EqualFold(typ, "INTEGER") {
			lay.index[col] = sqlitefile.Rowid // the rowid's alias: NULL in the record
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if _, named := lay.index[rowidColumn]; !named {
		lay.index[rowidColumn] = sqlitefile.Rowid
	}
	lay.root, lay.ok = uint32(root.Int64), true
	return lay, nil
}

// rowidColumn names a row's rowid in an intScan of a table with no
// column of that name: the B-tree key on the file path, SQLite's rowid on
// the SQL path.
const rowidColumn = "rowid"
