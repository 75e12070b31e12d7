package triage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/nsyssync/nsyssync/contract"
)

// RunInfo describes a run when it is recorded.
type RunInfo struct {
	// Label names the run; shards of one night given the same label are
	// merged into one run. Empty: the start time.
	Label       string
	Started     time.Time
	Host        string
	ToolVersion string
	// Shard is "i/n" when the run covers one shard.
	Shard string
}

// BeginRun records a new run and returns its id. The run is unfinished
// until FinishRun.
func (d *DB) BeginRun(ctx context.Context, info RunInfo) (int64, error) {
	if info.Started.IsZero() {
		info.Started = time.Now()
	}
	started := info.Started.UTC().Format(time.RFC3339)
	if info.Label == "" {
		info.Label = started
	}
	res, err := d.db.ExecContext(ctx, `INSERT INTO runs (label, started_at, host, tool_version, shard) VALUES (?, ?, ?, ?, ?)`,
		info.Label, started, info.Host, info.ToolVersion, info.Shard)
	if err != nil {
		return 0, fmt.Errorf("%s: recording the run: %w", d.path, err)
	}
	return res.LastInsertId()
}

// FinishRun marks the run complete.
func (d *DB) FinishRun(ctx context.Context, runID int64) error {
	_, err := d.db.ExecContext(ctx, `UPDATE runs SET finished_at = ? WHERE id = ?`, time.Now().UTC().Format(time.RFC3339), runID)
	if err != nil {
		return fmt.Errorf("%s: finishing run %d: %w", d.path, runID, err)
	}
	return nil
}

// AddResult records one trace of a run — its totals and its sites, or why
// it failed — in one transaction. Recording the same path twice in a run
// replaces the first record.
func (d *DB) AddResult(ctx context.Context, runID int64, r Result) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", d.path, err)
	}
	defer tx.Rollback()
	if err := addResult(ctx, tx, runID, r); err != nil {
		return fmt.Errorf("%s: recording %s: %w", d.path, r.Path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: recording %s: %w", d.path, r.Path, err)
	}
	return nil
}

func addResult(ctx context.Context, tx *sql.Tx, runID int64, r Result) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM traces WHERE run_id = ? AND path = ?`, runID, r.Path); err != nil {
		return err
	}
	name := filepath.Base(r.Path)
	if r.Err != nil || r.Doc == nil {
		msg := "no document"
		if r.Err != nil {
			msg = r.Err.Error()
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO traces (run_id, path, name, error) VALUES (?, ?, ?, ?)`, runID, r.Path, name, msg)
		return err
	}
	doc := r.Doc
	res, err := tx.ExecContext(ctx, `INSERT INTO traces (run_id, path, name, nsys_version, gpu, region, region_ns, syncs, blocked_ns, estimated_savings_ns)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, runID, r.Path, name, doc.Trace.NsysVersion, doc.Trace.GPU, doc.Trace.Region.Name,
		doc.Trace.Region.DurationNs, doc.Totals.Syncs, doc.Totals.BlockedNs, doc.Totals.EstimatedSavingsNs)
	if err != nil {
		return err
	}
	traceID, err := res.LastInsertId()
	if err != nil {
		return err
	}
	for _, f := range findingsOf(doc) {
		if err := insertFinding(ctx, tx, traceID, f); err != nil {
			return err
		}
	}
	return nil
}

// finding is one row of the findings table with its site.
type finding struct {
	Fingerprint, APIs, Location string
	SiteID                      string
	Count                       int
	BlockedNs                   int64
	Dependency, Category        string
	Confidence                  float64
	Evidence, Fix, NVTX         string
	EstimatedSavingsNs          int64
	EstimatedSavingsFraction    float64
	MeasuredSavingsNs           int64
	ReplayGPU                   string
}

// findingsOf turns a document's sites into findings, one per fingerprint
// (two sites of one trace that share a fingerprint are summed).
func findingsOf(doc *contract.Document) []finding {
	var out []finding
	at := map[string]int{}
	for i := range doc.Sites {
		s := &doc.Sites[i]
		if j, ok := at[s.Fingerprint]; ok {
			f := &out[j]
			f.Count += s.Count
			f.BlockedNs += s.BlockedNs
			f.EstimatedSavingsNs += s.EstimatedSavingsNs
			f.EstimatedSavingsFraction += s.EstimatedSavingsFraction
			f.Dependency, f.Category = agree(f.Dependency, s.Dependency), agree(f.Category, s.Category)
			continue
		}
		f := finding{Fingerprint: s.Fingerprint, APIs: strings.Join(s.APIs, "+"), Location: Where(s), SiteID: s.ID, Count: s.Count,
			BlockedNs: s.BlockedNs, Dependency: s.Dependency, Category: s.Category, Confidence: s.Confidence,
			Evidence: jsonList(s.Evidence), Fix: s.Fix, NVTX: jsonList(s.NVTX),
			EstimatedSavingsNs: s.EstimatedSavingsNs, EstimatedSavingsFraction: s.EstimatedSavingsFraction}
		if s.Replay != nil {
			f.MeasuredSavingsNs, f.ReplayGPU = s.Replay.MeasuredSavingsNs, s.Replay.GPU
		}
		at[s.Fingerprint] = len(out)
		out = append(out, f)
	}
	return out
}

func insertFinding(ctx context.Context, tx *sql.Tx, traceID int64, f finding) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO sites (fingerprint, apis, location) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
		f.Fingerprint, f.APIs, f.Location); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO findings (trace_id, fingerprint, site_id, count, blocked_ns, dependency, category,
		confidence, evidence, fix, nvtx, estimated_savings_ns, estimated_savings_fraction, measured_savings_ns, replay_gpu)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, traceID, f.Fingerprint, f.SiteID, f.Count, f.BlockedNs, f.Dependency,
		f.Category, f.Confidence, f.Evidence, f.Fix, f.NVTX, f.EstimatedSavingsNs, f.EstimatedSavingsFraction, f.MeasuredSavingsNs, f.ReplayGPU)
	return err
}

func jsonList(s []string) string {
	if s == nil {
		s = []string{}
	}
	b, _ := json.Marshal(s) // a []string always encodes
	return string(b)
}
