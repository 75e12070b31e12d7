package tracegen

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Options says what to generate. Exactly one of TargetBytes and Copies is set.
type Options struct {
	Source      string    // a real nsys SQLite export; only read
	Output      string    // the file to write; replaced if it exists (never the Source)
	TargetBytes int64     // add copies until the output is at least this large
	Copies      int       // or: the number of copies of the trace, the original included
	Progress    io.Writer // progress lines; nil for none
}

// Result describes the generated file.
type Result struct {
	Copies int   // copies of the trace in the output, the original included
	Rows   int64 // rows inserted
	Bytes  int64 // size of the output file
	Period int64 // ns between copies: copy k is the original shifted by k × Period
}

// batchCopies is how many copies of one table go into one transaction.
const batchCopies = 64

// Generate copies opt.Source to opt.Output and replicates the trace inside
// the copy (see the package documentation). On error the output file is
// removed and the error says which step failed.
func Generate(ctx context.Context, opt Options) (res Result, err error) {
	switch {
	case opt.Source == "" || opt.Output == "":
		return res, errors.New("tracegen: both a source and an output path are needed")
	case opt.TargetBytes < 0 || opt.Copies < 0:
		return res, errors.New("tracegen: size and copies cannot be negative")
	case (opt.TargetBytes > 0) == (opt.Copies > 0):
		return res, errors.New("tracegen: set exactly one of a target size and a copy count")
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("tracegen: %w", err)
	}
	if err := copyFile(opt.Source, opt.Output); err != nil {
		return res, fmt.Errorf("tracegen: %w", err)
	}
	defer func() {
		if err != nil {
			os.Remove(opt.Output)
		}
	}()
	g := &gen{opt: opt, out: opt.Progress, start: time.Now()}
	if g.out == nil {
		g.out = io.Discard
	}
	if err := g.run(ctx); err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			return res, fmt.Errorf("tracegen: replicate %s into %s: %w (%w)", opt.Source, opt.Output, cerr, err)
		}
		return res, fmt.Errorf("tracegen: replicate %s into %s: %w", opt.Source, opt.Output, err)
	}
	fi, err := os.Stat(opt.Output)
	if err != nil {
		return res, fmt.Errorf("tracegen: %w", err)
	}
	res = Result{Copies: int(g.copies), Rows: g.rows, Bytes: fi.Size(), Period: g.p.step[timeCol]}
	fmt.Fprintf(g.out, "done: %d copies, %d rows inserted, %s in %s\n",
		res.Copies, res.Rows, human(res.Bytes), time.Since(g.start).Round(time.Millisecond))
	return res, nil
}

// copyFile copies src to dst, refusing to overwrite src itself.
func copyFile(src, dst string) (err error) {
	si, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	if !si.Mode().IsRegular() {
		return fmt.Errorf("source %s is not a regular file", src)
	}
	if di, err := os.Stat(dst); err == nil && os.SameFile(si, di) {
		return fmt.Errorf("output %s is the source file", dst)
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	defer in.Close()
	head := make([]byte, 16)
	if _, err := io.ReadFull(in, head); err != nil || string(head) != "SQLite format 3\x00" {
		return fmt.Errorf("source %s is not an SQLite database", src)
	}
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("source: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("output: %w", err)
	}
	if _, err = io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err = out.Close(); err != nil {
		os.Remove(dst)
		return fmt.Errorf("output: %w", err)
	}
	return nil
}

type gen struct {
	opt    Options
	out    io.Writer
	start  time.Time
	conn   *sql.Conn
	p      *plan
	copies int64 // copies present in the output, the original included
	rows   int64
}

func (g *gen) run(ctx context.Context) error {
	abs, err := filepath.Abs(g.opt.Output)
	if err != nil {
		return err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	dsn := u.String() + "?mode=rw&_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)&_pragma=cache_size(-65536)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// One connection throughout: the snapshots are TEMP tables.
	if g.conn, err = db.Conn(ctx); err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer g.conn.Close()

	if g.p, err = discover(ctx, g.conn); err != nil {
		return err
	}
	var names []string
	for _, t := range g.p.tables {
		names = append(names, fmt.Sprintf("%s (%d)", t.name, t.rows))
	}
	fmt.Fprintf(g.out, "replicating %s; period %d ns\n", strings.Join(names, ", "), g.p.step[timeCol])
	if err := g.snapshot(ctx); err != nil {
		return err
	}
	g.copies = 1
	if g.opt.Copies > 0 {
		if err := g.add(ctx, int64(g.opt.Copies)); err != nil {
			return err
		}
	} else if err := g.fill(ctx); err != nil {
		return err
	}
	for _, t := range g.p.tables {
		if _, err := g.conn.ExecContext(ctx, "DROP TABLE temp."+quote(t.snap)); err != nil {
			return fmt.Errorf("drop snapshot of %s: %w", t.name, err)
		}
	}
	return nil
}

// snapshot copies the rows to replicate into TEMP tables, in rowid order, so
// that every copy reads the original values and the inserts do not read the
// table they write.
func (g *gen) snapshot(ctx context.Context) error {
	for i, t := range g.p.tables {
		t.snap = "tracegen_src_" + strconv.Itoa(i)
		cols := make([]string, len(t.cols))
		for j, c := range t.cols {
			cols[j] = quote(c.name)
		}
		q := fmt.Sprintf("CREATE TEMP TABLE %s AS SELECT %s FROM main.%s%s ORDER BY rowid",
			quote(t.snap), strings.Join(cols, ", "), quote(t.name), t.where())
		if _, err := g.conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("snapshot %s: %w", t.name, err)
		}
	}
	return nil
}

// fill adds copies until the file reaches the target size. A copy takes
// more bytes the further it is shifted (larger integers need longer
// varints: +12% at copy 800 of a 0.27 s trace), so fill works in rounds,
// each adding a part of the copies still needed at the bytes per copy of
// the round before: one copy, then half, then 90%, …, then single copies.
func (g *gen) fill(ctx context.Context) error {
	target := g.opt.TargetBytes
	s, err := g.size(ctx)
	if err != nil {
		return err
	}
	per, n := int64(0), int64(1)
	for round := 0; s < target; round++ {
		if round == 1 {
			n = max(1, (target-s)/2/per)
		} else if round > 1 {
			n = max(1, (target-s)*9/10/per)
		}
		if err := g.add(ctx, g.copies+n); err != nil {
			return err
		}
		s1, err := g.size(ctx)
		if err != nil {
			return err
		}
		per, s = max(1, (s1-s)/n), s1
	}
	return nil
}

// size is the database size: page_count × page_size.
func (g *gen) size(ctx context.Context) (int64, error) {
	var n int64
	err := g.conn.QueryRowContext(ctx, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("database size: %w", err)
	}
	return n, nil
}

// add appends copies g.copies … total-1, table by table, so that each
// table's new pages lie together in the file as in a real export.
func (g *gen) add(ctx context.Context, total int64) error {
	from := g.copies
	if total <= from {
		return nil
	}
	if total-1 > g.p.maxCopies {
		return fmt.Errorf("%d copies would overflow 64-bit times or ids (at most %d)", total, g.p.maxCopies+1)
	}
	for _, t := range g.p.tables {
		began := time.Now()
		cols := make([]string, len(t.cols))
		for j, c := range t.cols {
			cols[j] = quote(c.name)
		}
		head := fmt.Sprintf("INSERT INTO main.%s (%s) SELECT ", quote(t.name), strings.Join(cols, ", "))
		tail := fmt.Sprintf(" FROM temp.%s ORDER BY rowid", quote(t.snap))
		for lo := from; lo < total; lo += batchCopies {
			hi := min(lo+batchCopies, total)
			if err := g.batch(ctx, t, head, tail, lo, hi); err != nil {
				return err
			}
		}
		if total-from > 1 {
			fmt.Fprintf(g.out, "%s: copies %d-%d, %d rows in %s\n", t.name, from, total-1,
				(total-from)*t.rows, time.Since(began).Round(time.Millisecond))
		}
	}
	g.copies = total
	if s, err := g.size(ctx); err == nil {
		fmt.Fprintf(g.out, "%d copies, %s, %s elapsed\n", total, human(s), time.Since(g.start).Round(time.Millisecond))
	}
	return nil
}

// batch inserts copies lo … hi-1 of table t in one transaction.
func (g *gen) batch(ctx context.Context, t *table, head, tail string, lo, hi int64) (err error) {
	tx, err := g.conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	exprs := make([]string, len(t.cols))
	for k := lo; k < hi; k++ {
		for j, c := range t.cols {
			exprs[j] = c.expr(g.p, k)
		}
		r, err := tx.ExecContext(ctx, head+strings.Join(exprs, ", ")+tail)
		if err != nil {
			return fmt.Errorf("copy %d of %s: %w", k, t.name, err)
		}
		if n, err := r.RowsAffected(); err == nil {
			g.rows += n
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit copies %d-%d of %s: %w", lo, hi-1, t.name, err)
	}
	return nil
}

func human(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%d B", n)
}
