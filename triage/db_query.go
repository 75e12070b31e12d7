package triage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Run is a recorded run with its totals.
type Run struct {
	ID          int64  `json:"id"`
	Label       string `json:"label"`
	Started     string `json:"started_at"`
	Finished    string `json:"finished_at,omitempty"`
	Host        string `json:"host,omitempty"`
	ToolVersion string `json:"tool_version,omitempty"`
	Shard       string `json:"shard,omitempty"`
	// Traces analysed and inputs that failed.
	Traces    int   `json:"traces"`
	Failed    int   `json:"failed"`
	Syncs     int   `json:"syncs"`
	BlockedNs int64 `json:"blocked_ns"`
}

// Name says which run it is in a few words.
func (r Run) Name() string { return fmt.Sprintf("run %d (%s)", r.ID, r.Label) }

// ErrNoRun says that a run reference names no recorded run.
var ErrNoRun = errors.New("no such run")

// Runs lists the recorded runs, oldest first.
func (d *DB) Runs(ctx context.Context) ([]Run, error) {
	return d.runs(ctx, "")
}

func (d *DB) runs(ctx context.Context, where string, args ...any) ([]Run, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT r.id, r.label, r.started_at, coalesce(r.finished_at, ''), r.host, r.tool_version, r.shard,
		count(CASE WHEN t.id IS NOT NULL AND t.error IS NULL THEN 1 END), count(t.error),
		coalesce(sum(t.syncs), 0), coalesce(sum(t.blocked_ns), 0)
		FROM runs r LEFT JOIN traces t ON t.run_id = r.id `+where+` GROUP BY r.id ORDER BY r.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: listing runs: %w", d.path, err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		if err := rows.Scan(&r.ID, &r.Label, &r.Started, &r.Finished, &r.Host, &r.ToolVersion, &r.Shard, &r.Traces, &r.Failed,
			&r.Syncs, &r.BlockedNs); err != nil {
			return nil, fmt.Errorf("%s: listing runs: %w", d.path, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: listing runs: %w", d.path, err)
	}
	return out, nil
}

// ResolveRun finds a run by reference: its id, "latest", "previous" (the
// one before the latest), or its label (the latest run of that label).
func (d *DB) ResolveRun(ctx context.Context, ref string) (Run, error) {
	runs, err := d.Runs(ctx)
	if err != nil {
		return Run{}, err
	}
	if len(runs) == 0 {
		return Run{}, fmt.Errorf("%s: %w %q: the database holds no runs", d.path, ErrNoRun, ref)
	}
	switch ref {
	case "latest":
		return runs[len(runs)-1], nil
	case "previous":
		if len(runs) < 2 {
			return Run{}, fmt.Errorf("%s: %w %q: the database holds one run", d.path, ErrNoRun, ref)
		}
		return runs[len(runs)-2], nil
	}
	if id, err := strconv.ParseInt(strings.TrimPrefix(ref, "#"), 10, 64); err == nil {
		for _, r := range runs {
			if r.ID == id {
				return r, nil
			}
		}
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Label == ref {
			return runs[i], nil
		}
	}
	return Run{}, fmt.Errorf("%s: %w %q (want a run id, a label, latest or previous; 'nsyssync history --runs' lists them)", d.path, ErrNoRun, ref)
}

// Snapshot returns a run's sites summed over its traces.
func (d *DB) Snapshot(ctx context.Context, run Run) (*Snapshot, error) {
	s := NewSnapshot(run.Name())
	s.Traces, s.Failed, s.Syncs, s.BlockedNs = run.Traces, run.Failed, run.Syncs, run.BlockedNs
	if err := d.db.QueryRowContext(ctx, `SELECT coalesce(sum(estimated_savings_ns), 0) FROM traces WHERE run_id = ?`, run.ID).
		Scan(&s.EstimatedSavingsNs); err != nil {
		return nil, fmt.Errorf("%s: reading %s: %w", d.path, run.Name(), err)
	}
	rows, err := d.db.QueryContext(ctx, `SELECT f.fingerprint, s.apis, s.location, f.dependency, f.category, f.count, f.blocked_ns,
		f.estimated_savings_ns, t.path
		FROM findings f JOIN traces t ON t.id = f.trace_id JOIN sites s ON s.fingerprint = f.fingerprint
		WHERE t.run_id = ? ORDER BY t.id, f.fingerprint`, run.ID)
	if err != nil {
		return nil, fmt.Errorf("%s: reading %s: %w", d.path, run.Name(), err)
	}
	defer rows.Close()
	for rows.Next() {
		var st SiteTotal
		var apis, tracePath string
		if err := rows.Scan(&st.Fingerprint, &apis, &st.Location, &st.Dependency, &st.Category, &st.Count, &st.BlockedNs,
			&st.EstimatedSavingsNs, &tracePath); err != nil {
			return nil, fmt.Errorf("%s: reading %s: %w", d.path, run.Name(), err)
		}
		st.APIs = splitAPIs(apis)
		st.TracePaths = []string{tracePath}
		s.add(st, true) // one row per trace and fingerprint
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: reading %s: %w", d.path, run.Name(), err)
	}
	return s, nil
}

func splitAPIs(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, "+")
}

// HistoryPoint is a site in one run.
type HistoryPoint struct {
	Run Run `json:"run"`
	// Traces of the run in which the site appears; 0: absent from the run.
	Traces             int    `json:"traces"`
	Count              int    `json:"count"`
	BlockedNs          int64  `json:"blocked_ns"`
	EstimatedSavingsNs int64  `json:"estimated_savings_ns"`
	Dependency         string `json:"dependency,omitempty"`
	Category           string `json:"category,omitempty"`
	// TracePaths are the run's traces in which the site appears, as
	// recorded, in the order they were recorded; absent when none.
	TracePaths []string `json:"trace_paths,omitempty"`
}

// SiteHistory is a site's trend across runs.
type SiteHistory struct {
	Fingerprint string   `json:"fingerprint"`
	APIs        []string `json:"apis"`
	Location    string   `json:"location"`
	// Points has one entry per run, oldest first.
	Points []HistoryPoint `json:"runs"`
}

// FindSite resolves what a user typed — a fingerprint or its prefix, else
// part of the site's location ("train.py:42") — to one fingerprint.
func (d *DB) FindSite(ctx context.Context, query string) (string, error) {
	if query == "" {
		return "", errors.New("no site given")
	}
	for _, q := range []struct{ sql, arg string }{
		{`SELECT fingerprint, apis, location FROM sites WHERE fingerprint LIKE ? ESCAPE '\' ORDER BY fingerprint`, likeEscape(query) + "%"},
		{`SELECT fingerprint, apis, location FROM sites WHERE location LIKE ? ESCAPE '\' ORDER BY fingerprint`, "%" + likeEscape(query) + "%"},
	} {
		matches, err := d.querySites(ctx, q.sql, q.arg)
		if err != nil {
			return "", err
		}
		switch {
		case len(matches) == 1:
			return matches[0][0], nil
		case len(matches) > 1:
			var list []string
			for _, m := range matches[:min(len(matches), 8)] {
				list = append(list, fmt.Sprintf("  %s  %s  %s", m[0], m[1], m[2]))
			}
			return "", fmt.Errorf("%q matches %d sites; give a longer fingerprint:\n%s", query, len(matches), strings.Join(list, "\n"))
		}
	}
	return "", fmt.Errorf("%s: no site matches %q (give a fingerprint, or part of a location such as train.py:42)", d.path, query)
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func (d *DB) querySites(ctx context.Context, query, arg string) ([][3]string, error) {
	rows, err := d.db.QueryContext(ctx, query, arg)
	if err != nil {
		return nil, fmt.Errorf("%s: finding the site: %w", d.path, err)
	}
	defer rows.Close()
	var out [][3]string
	for rows.Next() {
		var m [3]string
		if err := rows.Scan(&m[0], &m[1], &m[2]); err != nil {
			return nil, fmt.Errorf("%s: finding the site: %w", d.path, err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// History returns the site's trend over the last lastRuns runs (0: all).
func (d *DB) History(ctx context.Context, fingerprint string, lastRuns int) (*SiteHistory, error) {
	runs, err := d.Runs(ctx)
	if err != nil {
		return nil, err
	}
	if lastRuns > 0 && len(runs) > lastRuns {
		runs = runs[len(runs)-lastRuns:]
	}
	h := &SiteHistory{Fingerprint: fingerprint, Points: []HistoryPoint{}}
	var apis string
	err = d.db.QueryRowContext(ctx, `SELECT apis, location FROM sites WHERE fingerprint = ?`, fingerprint).Scan(&apis, &h.Location)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s: no site %s", d.path, fingerprint)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading site %s: %w", d.path, fingerprint, err)
	}
	h.APIs = splitAPIs(apis)
	rows, err := d.db.QueryContext(ctx, `SELECT t.run_id, count(*), sum(f.count), sum(f.blocked_ns), sum(f.estimated_savings_ns),
		min(f.dependency), max(f.dependency), min(f.category), max(f.category)
		FROM findings f JOIN traces t ON t.id = f.trace_id WHERE f.fingerprint = ? GROUP BY t.run_id`, fingerprint)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the history of %s: %w", d.path, fingerprint, err)
	}
	defer rows.Close()
	byRun := map[int64]HistoryPoint{}
	for rows.Next() {
		var p HistoryPoint
		var runID int64
		var dep1, dep2, cat1, cat2 string
		if err := rows.Scan(&runID, &p.Traces, &p.Count, &p.BlockedNs, &p.EstimatedSavingsNs, &dep1, &dep2, &cat1, &cat2); err != nil {
			return nil, fmt.Errorf("%s: reading the history of %s: %w", d.path, fingerprint, err)
		}
		p.Dependency, p.Category = agree(dep1, dep2), agree(cat1, cat2)
		byRun[runID] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: reading the history of %s: %w", d.path, fingerprint, err)
	}
	paths, err := d.tracePaths(ctx, fingerprint)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		p := byRun[r.ID]
		p.Run = r
		p.TracePaths = paths[r.ID]
		h.Points = append(h.Points, p)
	}
	return h, nil
}

// Top returns the n sites that cost most in the latest run, each with its
// trend over the last lastRuns runs.
func (d *DB) Top(ctx context.Context, n, lastRuns int) ([]*SiteHistory, error) {
	latest, err := d.ResolveRun(ctx, "latest")
	if err != nil {
		return nil, err
	}
	snap, err := d.Snapshot(ctx, latest)
	if err != nil {
		return nil, err
	}
	sites := snap.Ordered()
	if n > 0 && len(sites) > n {
		sites = sites[:n]
	}
	out := []*SiteHistory{}
	for _, s := range sites {
		h, err := d.History(ctx, s.Fingerprint, lastRuns)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// tracePaths lists, per run, the traces in which the site appears, in the
// order they were recorded.
func (d *DB) tracePaths(ctx context.Context, fingerprint string) (map[int64][]string, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT t.run_id, t.path FROM findings f JOIN traces t ON t.id = f.trace_id
		WHERE f.fingerprint = ? ORDER BY t.id`, fingerprint)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the traces of %s: %w", d.path, fingerprint, err)
	}
	defer rows.Close()
	out := map[int64][]string{}
	for rows.Next() {
		var run int64
		var p string
		if err := rows.Scan(&run, &p); err != nil {
			return nil, fmt.Errorf("%s: reading the traces of %s: %w", d.path, fingerprint, err)
		}
		out[run] = append(out[run], p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: reading the traces of %s: %w", d.path, fingerprint, err)
	}
	return out, nil
}
