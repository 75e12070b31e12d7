package triage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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

// minReadVersion is the oldest schema the read-only queries (runs,
// snapshots, site histories) can answer from: version 2 only added
// columns they do not read, and indexes. A read-only open of an older
// database fails with a line saying how to migrate it.
const minReadVersion = 1

// ErrNotFindingsDB says that a file is an SQLite database but not one
// that nsyssync wrote.
var ErrNotFindingsDB = errors.New("not an nsyssync findings database")

// ErrNeedsMigration says that a findings database is too old for a
// read-only command to read, and that a writer must migrate it first.
var ErrNeedsMigration = errors.New("findings database needs migrating")

// DB is a findings database: runs, traces, sites and what each trace found
// at each site.
type DB struct {
	db   *sql.DB
	path string
	// version is the database's schema version; below SchemaVersion()
	// only for a database opened read-only.
	version int
}

// OpenDB opens the findings database at path for writing, creating it
// when absent and migrating it to SchemaVersion(). Several processes may
// open, create and migrate one database at once: the migration runs in
// one write transaction that reads the version under the lock.
func OpenDB(ctx context.Context, path string) (*DB, error) {
	db, err := openSQLite(path, false)
	if err != nil {
		return nil, err
	}
	if err := migrateTo(ctx, db, path, SchemaVersion()); err != nil {
		db.Close()
		return nil, err
	}
	return &DB{db: db, path: path, version: SchemaVersion()}, nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// Path is where the database is.
func (d *DB) Path() string { return d.path }

// Version is the database's schema version.
func (d *DB) Version() int { return d.version }

// migrateTo brings the database from its version up to target in one
// IMMEDIATE transaction (openSQLite's _txlock): the version is read again
// once the write lock is held, so that writers racing to create or
// migrate one database apply each step once, and the others, waiting on
// the busy timeout, find it done. A database already at target takes no
// write lock.
func migrateTo(ctx context.Context, db *sql.DB, path string, target int) error {
	v, err := checkedVersion(ctx, db, path)
	if err != nil || v >= target {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: locking the findings database to migrate it: %w", path, err)
	}
	defer tx.Rollback()
	if v, err = checkedVersion(ctx, tx, path); err != nil || v >= target {
		return err
	}
	if v == 0 {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
			version    INTEGER PRIMARY KEY,
			applied_at TEXT NOT NULL)`); err != nil {
			return fmt.Errorf("%s: creating schema_version: %w", path, err)
		}
	}
	for ; v < target; v++ {
		if err := applyMigration(ctx, tx, v+1); err != nil {
			return fmt.Errorf("%s: migrating the findings database to version %d: %w", path, v+1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: migrating the findings database to version %d: %w", path, target, err)
	}
	return nil
}

// checkedVersion is schemaVersion, refusing a database newer than this
// nsyssync.
func checkedVersion(ctx context.Context, q querier, path string) (int, error) {
	v, err := schemaVersion(ctx, q, path)
	if err != nil {
		return 0, err
	}
	if v > len(migrations) {
		return 0, fmt.Errorf("%s: findings database schema version %d is newer than this nsyssync knows (%d): upgrade nsyssync", path, v, len(migrations))
	}
	return v, nil
}

// applyMigration runs one step inside the migration's transaction.
func applyMigration(ctx context.Context, tx *sql.Tx, version int) error {
	if _, err := tx.ExecContext(ctx, migrations[version-1]); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, applied_at) VALUES (?, ?)`,
		version, time.Now().UTC().Format(time.RFC3339))
	return err
}
