package triage

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nsyssync/nsyssync/internal/safefile"
)

// MergeStats counts what a merge took and what it skipped.
type MergeStats struct {
	Sources int `json:"sources"`
	Runs    int `json:"runs"`
	Traces  int `json:"traces"`
	Failed  int `json:"failed"`
	// Duplicates are traces already present (the same path in the same
	// run), skipped so that merging twice changes nothing.
	Duplicates int `json:"duplicates"`
}

// MergeLines copies the JSON Lines files (or JSON report streams) into w,
// one compact line per trace, each trace path once, and hands each line to
// fn when fn is not nil. Lines are copied as read, so fields this version
// does not know survive.
func MergeLines(ctx context.Context, paths []string, w io.Writer, fn func(Line) error) (MergeStats, error) {
	var st MergeStats
	seen := map[string]bool{}
	bw := bufio.NewWriterSize(w, 1<<16)
	for _, path := range paths {
		if err := mergeLinesFile(ctx, path, bw, seen, &st, fn); err != nil {
			return st, err
		}
		st.Sources++
	}
	if err := bw.Flush(); err != nil {
		return st, fmt.Errorf("writing the merged lines: %w", err)
	}
	return st, nil
}

func mergeLinesFile(ctx context.Context, path string, w *bufio.Writer, seen map[string]bool, st *MergeStats, fn func(Line) error) error {
	f, err := safefile.OpenRegular(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, fileProblem(err))
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<16))
	var compact bytes.Buffer
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: not JSON Lines of nsyssync reports: %w", path, n, err)
		}
		var head struct {
			Schema string `json:"schema"`
			Trace  struct {
				Path string `json:"path"`
			} `json:"trace"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(raw, &head); err != nil || head.Schema == "" {
			return fmt.Errorf("%s: document %d: not an nsyssync report", path, n)
		}
		if seen[head.Trace.Path] {
			st.Duplicates++
			continue
		}
		seen[head.Trace.Path] = true
		st.Traces++
		if head.Error != "" {
			st.Failed++
		}
		if fn != nil {
			var l Line
			if err := json.Unmarshal(raw, &l); err != nil {
				return fmt.Errorf("%s: document %d: %w", path, n, err)
			}
			if err := fn(l); err != nil {
				return err
			}
		}
		compact.Reset()
		if err := json.Compact(&compact, raw); err != nil {
			return fmt.Errorf("%s: document %d: %w", path, n, err)
		}
		compact.WriteByte('\n')
		if _, err := w.Write(compact.Bytes()); err != nil {
			return fmt.Errorf("writing the merged lines: %w", err)
		}
	}
}

// MergeDB copies the runs of the findings database at src into d. A run
// joins the latest run of d with the same label (shards of one night
// recorded with the same --run label become one run), or a new one;
// label, when not empty, puts every run of src under that label. A trace
// already in the run (same path) is skipped. src is only read.
func (d *DB) MergeDB(ctx context.Context, src, label string) (MergeStats, error) {
	st := MergeStats{Sources: 1}
	if _, err := os.Stat(src); err != nil {
		return st, fmt.Errorf("%s: %w", src, fileProblem(err))
	}
	sdb, err := openSQLite(src, true)
	if err != nil {
		return st, err
	}
	defer sdb.Close()
	version, err := schemaVersion(ctx, sdb, src)
	if err != nil {
		return st, err
	}
	if version == 0 {
		return st, fmt.Errorf("%s: %w (empty)", src, ErrNotFindingsDB)
	}
	if version > SchemaVersion() {
		return st, fmt.Errorf("%s: findings database schema version %d is newer than this nsyssync knows (%d)", src, version, SchemaVersion())
	}
	source := &DB{db: sdb, path: src}
	runs, err := source.Runs(ctx)
	if err != nil {
		return st, err
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return st, fmt.Errorf("%s: %w", d.path, err)
	}
	defer tx.Rollback()
	for _, r := range runs {
		if label != "" {
			r.Label = label
		}
		dst, err := joinRun(ctx, tx, r)
		if err != nil {
			return st, fmt.Errorf("%s: merging %s: %w", d.path, r.Name(), err)
		}
		st.Runs++
		if err := copyTraces(ctx, sdb, tx, version, r.ID, dst, &st); err != nil {
			return st, fmt.Errorf("merging %s of %s into %s: %w", r.Name(), src, d.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return st, fmt.Errorf("%s: %w", d.path, err)
	}
	return st, nil
}

// joinRun finds the run of the destination with r's label, widening its
// time span and shard list, or records a new one.
func joinRun(ctx context.Context, tx *sql.Tx, r Run) (int64, error) {
	var id int64
	var started, finished, shard string
	err := tx.QueryRowContext(ctx, `SELECT id, started_at, coalesce(finished_at, ''), shard FROM runs WHERE label = ? ORDER BY id DESC LIMIT 1`,
		r.Label).Scan(&id, &started, &finished, &shard)
	if errors.Is(err, sql.ErrNoRows) {
		var fin any
		if r.Finished != "" {
			fin = r.Finished
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO runs (label, started_at, finished_at, host, tool_version, shard) VALUES (?, ?, ?, ?, ?, ?)`,
			r.Label, r.Started, fin, r.Host, r.ToolVersion, r.Shard)
		if err != nil {
			return 0, err
		}
		return res.LastInsertId()
	}
	if err != nil {
		return 0, err
	}
	started = min(started, r.Started) // RFC 3339 UTC strings sort as times
	var fin any
	if finished != "" && r.Finished != "" {
		fin = max(finished, r.Finished)
	}
	_, err = tx.ExecContext(ctx, `UPDATE runs SET started_at = ?, finished_at = ?, shard = ? WHERE id = ?`, started, fin, joinShards(shard, r.Shard), id)
	return id, err
}

// joinShards adds the shards of b to the comma-separated list a.
func joinShards(a, b string) string {
	have := map[string]bool{}
	var out []string
	for _, s := range strings.Split(a+","+b, ",") {
		if s != "" && !have[s] {
			have[s] = true
			out = append(out, s)
		}
	}
	return strings.Join(out, ",")
}

// copyTraces copies the traces of a source run, with their findings and
// sites, into the destination run.
func copyTraces(ctx context.Context, src *sql.DB, tx *sql.Tx, version int, srcRun, dstRun int64, st *MergeStats) error {
	rows, err := src.QueryContext(ctx, `SELECT id, path, name, error, nsys_version, gpu, region, region_ns, syncs, blocked_ns, estimated_savings_ns
		FROM traces WHERE run_id = ? ORDER BY id`, srcRun)
	if err != nil {
		return err
	}
	type traceRow struct {
		id                                      int64
		path, name                              string
		errText                                 sql.NullString
		nsys, gpu, region                       string
		regionNs, syncs, blocked, estimatedSave int64
	}
	var traces []traceRow
	for rows.Next() {
		var t traceRow
		if err := rows.Scan(&t.id, &t.path, &t.name, &t.errText, &t.nsys, &t.gpu, &t.region, &t.regionNs, &t.syncs, &t.blocked, &t.estimatedSave); err != nil {
			rows.Close()
			return err
		}
		traces = append(traces, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range traces {
		var exists int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM traces WHERE run_id = ? AND path = ?`, dstRun, t.path).Scan(&exists); err != nil {
			return err
		}
		if exists > 0 {
			st.Duplicates++
			continue
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO traces (run_id, path, name, error, nsys_version, gpu, region, region_ns, syncs, blocked_ns,
			estimated_savings_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, dstRun, t.path, t.name, t.errText, t.nsys, t.gpu, t.region,
			t.regionNs, t.syncs, t.blocked, t.estimatedSave)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		st.Traces++
		if t.errText.Valid {
			st.Failed++
			continue
		}
		findings, err := sourceFindings(ctx, src, version, t.id)
		if err != nil {
			return err
		}
		for _, f := range findings {
			if err := insertFinding(ctx, tx, id, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// sourceFindings reads a trace's findings from a database of any known
// version (columns added by later versions read as their defaults).
func sourceFindings(ctx context.Context, src *sql.DB, version int, traceID int64) ([]finding, error) {
	replay := "0, ''"
	if version >= 2 {
		replay = "f.measured_savings_ns, f.replay_gpu"
	}
	rows, err := src.QueryContext(ctx, `SELECT f.fingerprint, s.apis, s.location, f.site_id, f.count, f.blocked_ns, f.dependency, f.category,
		f.confidence, f.evidence, f.fix, f.nvtx, f.estimated_savings_ns, f.estimated_savings_fraction, `+replay+`
		FROM findings f JOIN sites s ON s.fingerprint = f.fingerprint WHERE f.trace_id = ? ORDER BY f.fingerprint`, traceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []finding
	for rows.Next() {
		var f finding
		if err := rows.Scan(&f.Fingerprint, &f.APIs, &f.Location, &f.SiteID, &f.Count, &f.BlockedNs, &f.Dependency, &f.Category,
			&f.Confidence, &f.Evidence, &f.Fix, &f.NVTX, &f.EstimatedSavingsNs, &f.EstimatedSavingsFraction, &f.MeasuredSavingsNs,
			&f.ReplayGPU); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
