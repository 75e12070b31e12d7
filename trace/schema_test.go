package trace

import (
	"testing"
)

// TestSchemaVariants loads copies of a real fixture altered the way older
// or leaner exports differ: tables absent (exports are lazy), columns that
// older schemas lack, metadata under its old name or missing. The inventory
// must come out the same wherever the evidence it needs is still there.
func TestSchemaVariants(t *testing.T) {
	base := loadFile(t, leanFixture, LoadOptions{})
	tests := []struct {
		name  string
		stmts []string
		check func(t *testing.T, tr *Trace)
	}{
		{"optional tables absent", []string{
			`DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL`, `DROP TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`,
			`DROP TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT`, `DROP TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE`, `DROP TABLE NVTX_EVENTS`,
			`DROP TABLE TARGET_INFO_GPU`, `DROP TABLE TARGET_INFO_CUDA_STREAM`, `DROP TABLE TARGET_INFO_CUDA_CONTEXT_INFO`,
			`DROP TABLE ThreadNames`, `DROP TABLE PROCESSES`, `DROP TABLE META_DATA_EXPORT`,
		}, func(t *testing.T, tr *Trace) {
			if len(tr.Syncs) != len(base.Syncs) {
				t.Errorf("syncs: got %d, want %d (copies still have their activity)", len(tr.Syncs), len(base.Syncs))
			}
			if tr.Evidence.SyncRecords || tr.Evidence.NVTX || len(tr.GPUs) != 0 || tr.Schema.NsysVersion != "" {
				t.Errorf("evidence claims what is absent: %+v, %d GPUs, version %q", tr.Evidence, len(tr.GPUs), tr.Schema.NsysVersion)
			}
			for _, s := range tr.Syncs {
				if calls := s.Calls(); calls[len(calls)-1].Kind == CallStreamSync && s.Copy == nil && s.Resolved {
					t.Errorf("sync %d resolved without a synchronization record", s.Index)
				}
			}
		}},
		{"no copy activity", []string{`DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY`}, func(t *testing.T, tr *Trace) {
			// Async copies are then unknown and not called blocking; the
			// explicit syncs all remain.
			if got, want := countExplicit(tr), countExplicit(base); got != want {
				t.Errorf("explicit sync calls: got %d, want %d", got, want)
			}
		}},
		{"2020-era runtime table", []string{
			`ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME DROP COLUMN callchainId`,
			`ALTER TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION DROP COLUMN eventSyncId`,
			`ALTER TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT DROP COLUMN eventSyncId`,
			`ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY DROP COLUMN copyCount`,
			`ALTER TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION RENAME COLUMN syncType TO oldSyncType`,
			`ALTER TABLE META_DATA_EXPORT RENAME TO EXPORT_META_DATA`,
		}, func(t *testing.T, tr *Trace) {
			if len(tr.Syncs) != len(base.Syncs) {
				t.Errorf("syncs: got %d, want %d", len(tr.Syncs), len(base.Syncs))
			}
			if tr.Schema.MetaTable != "EXPORT_META_DATA" || tr.Schema.NsysVersion == "" {
				t.Errorf("metadata from the old table: %+v", tr.Schema)
			}
			// Event syncs fall back to the last record of the same handle.
			for i, s := range tr.Syncs {
				if b := base.Syncs[i]; s.Scope != b.Scope || s.Stream != b.Stream {
					t.Errorf("sync %d: scope %s/%d, want %s/%d", i, s.Scope, s.Stream, b.Scope, b.Stream)
				}
			}
		}},
		{"no eventClass column", []string{`ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME DROP COLUMN eventClass`}, func(t *testing.T, tr *Trace) {
			if len(tr.Syncs) != len(base.Syncs) {
				t.Errorf("syncs: got %d, want %d", len(tr.Syncs), len(base.Syncs))
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := copyFixture(t, leanPlain(t), tc.stmts...)
			tc.check(t, loadFile(t, path, LoadOptions{}))
		})
	}
}

func countExplicit(tr *Trace) int {
	n := 0
	for _, s := range tr.Syncs {
		for _, c := range s.Calls() {
			if c.Kind == CallStreamSync || c.Kind == CallEventSync || c.Kind == CallContextSync {
				n++
			}
		}
	}
	return n
}
