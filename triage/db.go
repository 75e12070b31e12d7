package triage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// migrations build the findings database step by step: migrations[i]
// takes a database from version i to version i+1. Applied steps are rows
// of schema_version; a database is never moved backwards, and one written
// by a newer nsyssync is refused.
var migrations = []string{
	// 1: runs, the traces of each run, sites by fingerprint, and what each
	// trace found at each site (verdict and estimates).
	`CREATE TABLE runs (
		id           INTEGER PRIMARY KEY,
		label        TEXT NOT NULL,          -- names the run; shards of one night share it
		started_at   TEXT NOT NULL,          -- RFC 3339, UTC
		finished_at  TEXT,                   -- NULL while the run is being recorded
		host         TEXT NOT NULL DEFAULT '',
		tool_version TEXT NOT NULL DEFAULT '',
		shard        TEXT NOT NULL DEFAULT '' -- "i/n" of the shards recorded, comma separated
	);
	CREATE TABLE traces (
		id                   INTEGER PRIMARY KEY,
		run_id               INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		path                 TEXT NOT NULL,
		name                 TEXT NOT NULL,  -- base name: the same trace on any machine
		error                TEXT,           -- why it could not be analysed; NULL when it was
		nsys_version         TEXT NOT NULL DEFAULT '',
		gpu                  TEXT NOT NULL DEFAULT '',
		region               TEXT NOT NULL DEFAULT '',
		region_ns            INTEGER NOT NULL DEFAULT 0,
		syncs                INTEGER NOT NULL DEFAULT 0,
		blocked_ns           INTEGER NOT NULL DEFAULT 0,
		estimated_savings_ns INTEGER NOT NULL DEFAULT 0,
		UNIQUE (run_id, path)
	);
	CREATE TABLE sites (
		fingerprint TEXT PRIMARY KEY,        -- report.Fingerprint: stable across runs and machines
		apis        TEXT NOT NULL,           -- "cudaMemcpyAsync+cudaStreamSynchronize"
		location    TEXT NOT NULL            -- file:line function, native frame, or NVTX path
	);
	CREATE TABLE findings (
		trace_id                   INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
		fingerprint                TEXT NOT NULL REFERENCES sites(fingerprint),
		site_id                    TEXT NOT NULL,  -- the site's id in its trace's report (s1, s2, …)
		count                      INTEGER NOT NULL,
		blocked_ns                 INTEGER NOT NULL,
		dependency                 TEXT NOT NULL,
		category                   TEXT NOT NULL,
		confidence                 REAL NOT NULL,
		evidence                   TEXT NOT NULL,  -- JSON array
		fix                        TEXT NOT NULL,
		nvtx                       TEXT NOT NULL,  -- JSON array, digits folded
		estimated_savings_ns       INTEGER NOT NULL DEFAULT 0,
		estimated_savings_fraction REAL NOT NULL DEFAULT 0,
		PRIMARY KEY (trace_id, fingerprint)
	);`,
	// 2: the GPU replay's measured saving beside the estimate, and the
	// indexes that history and diff read through.
	`ALTER TABLE findings ADD COLUMN measured_savings_ns INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE findings ADD COLUMN replay_gpu TEXT NOT NULL DEFAULT '';
	CREATE INDEX findings_by_fingerprint ON findings(fingerprint);
	CREATE INDEX traces_by_run ON traces(run_id);`,
}

// SchemaVersion is the version of the findings database this package
// writes.
func SchemaVersion() int { return len(migrations) }

// ErrNotFindingsDB says that a file is an SQLite database but not one
// that nsyssync wrote.
var ErrNotFindingsDB = errors.New("not an nsyssync findings database")

// DB is a findings database: runs, traces, sites and what each trace found
// at each site.
type DB struct {
	db   *sql.DB
	path string
}

// OpenDB opens the findings database at path, creating it when absent and
// migrating it to SchemaVersion().
func OpenDB(ctx context.Context, path string) (*DB, error) {
	db, err := openSQLite(path, false)
	if err != nil {
		return nil, err
	}
	if err := migrateTo(ctx, db, path, SchemaVersion()); err != nil {
		db.Close()
		return nil, err
	}
	return &DB{db: db, path: path}, nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// Path is where the database is.
func (d *DB) Path() string { return d.path }

// openSQLite opens a database file, read-write (created when absent) or
// read-only, with foreign keys on. One connection: writes are serial and
// a read sees the writes before it.
func openSQLite(path string, readOnly bool) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	mode := "rwc"
	if readOnly {
		mode = "ro"
	}
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?mode=" + mode +
		"&_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: opening the findings database: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// schemaVersion returns the database's version: 0 for an empty database.
// A database with tables but no schema_version was not written by
// nsyssync, and is left alone.
func schemaVersion(ctx context.Context, db *sql.DB, path string) (int, error) {
	var tables, versioned int
	err := db.QueryRowContext(ctx, `SELECT count(*), count(CASE WHEN name = 'schema_version' THEN 1 END)
		FROM sqlite_master WHERE type = 'table'`).Scan(&tables, &versioned)
	if err != nil {
		if strings.Contains(err.Error(), "not a database") {
			return 0, fmt.Errorf("%s: %w (not an SQLite file)", path, ErrNotFindingsDB)
		}
		return 0, fmt.Errorf("%s: reading the findings database: %w", path, err)
	}
	if versioned == 0 {
		if tables > 0 {
			return 0, fmt.Errorf("%s: %w (it has tables but no schema_version; is it an nsys export?)", path, ErrNotFindingsDB)
		}
		return 0, nil
	}
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT max(version) FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("%s: reading the schema version: %w", path, err)
	}
	return int(v.Int64), nil
}

// migrateTo applies the migrations from the database's version up to
// target, each step in its own transaction.
func migrateTo(ctx context.Context, db *sql.DB, path string, target int) error {
	v, err := schemaVersion(ctx, db, path)
	if err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("%s: findings database schema version %d is newer than this nsyssync knows (%d): upgrade nsyssync", path, v, len(migrations))
	}
	if v == 0 && target > 0 {
		if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
			version    INTEGER PRIMARY KEY,
			applied_at TEXT NOT NULL)`); err != nil {
			return fmt.Errorf("%s: creating schema_version: %w", path, err)
		}
	}
	for ; v < target; v++ {
		if err := applyMigration(ctx, db, v+1); err != nil {
			return fmt.Errorf("%s: migrating the findings database to version %d: %w", path, v+1, err)
		}
	}
	return nil
}

func applyMigration(ctx context.Context, db *sql.DB, version int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, migrations[version-1]); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, applied_at) VALUES (?, ?)`,
		version, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return err
	}
	return tx.Commit()
}
