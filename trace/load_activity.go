package trace

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// activityLoader reads the GPU activity that tells what a call did or waited
// for: the memcpy and memset rows, the synchronization rows and the event
// records, and (hostmapped.go) the processes using memory the host reads
// without a copy. It reads through the export's source.
type activityLoader struct{ *source }

// syncRecord is a CUPTI_ACTIVITY_KIND_SYNCHRONIZATION row: the stream,
// context or event a sync call waited on.
type syncRecord struct {
	device               DeviceID
	context              ContextID
	stream               StreamID
	eventID, eventSyncID int64
}

// eventRecord is a CUPTI_ACTIVITY_KIND_CUDA_EVENT row: an event record on a
// stream, made by the call with correlationId.
type eventRecord struct {
	corr                 int64
	device               DeviceID
	context              ContextID
	stream               StreamID
	eventID, eventSyncID int64
}

// activity is what the export says about the GPU side of the calls.
type activity struct {
	copies    []Copy
	copyIndex *corrIndex // (globalPid, correlationId) -> copies
	syncs     []syncRecord
	syncIndex *corrIndex // (globalPid, correlationId) -> syncs
	events    *eventRecords

	// memcpyActivity and memsetActivity: the export has the activity table,
	// so a call without a kept row is known not to block.
	memcpyActivity, memsetActivity bool
	// mapped: the processes whose activity shows managed memory.
	mapped hostMapped
}

// loadCopies reads the memcpy and memset rows that can matter to a host
// wait. The filters run in SQL: device-to-device and peer copies never
// block and never pair with a sync, and a memset blocks only into pinned
// or managed memory, so those rows are not read at all.
func (ld activityLoader) loadCopies(ctx context.Context, st *Stats) (*activity, error) {
	act := &activity{mapped: hostMapped{}}
	s := ld.Schema
	var rows corrRows[Copy]
	var mu sync.Mutex // rows is shared by the workers
	if s.HasColumn(tableMemcpy, "correlationId") && s.HasColumn(tableMemcpy, "copyKind") {
		act.memcpyActivity = true
		scan := intScan{what: "reading memcpy activity", table: tableMemcpy,
			cols: []intCol{col("correlationId"), colOr("globalPid", 0), col("start"), col("end"), col("deviceId"), col("contextId"),
				col("streamId"), col("bytes"), col("copyKind"), colOr("srcKind", -1), colOr("dstKind", -1)},
			where: "copyKind NOT IN (5, 6, 7, 8, 10, 13)",
			keep: func(v []sql.NullInt64) bool {
				switch v[8].Int64 {
				case 5, 6, 7, 8, 10, 13:
					return false
				}
				return v[8].Valid
			}}
		n, err := ld.scanInts(ctx, scan, func(_, _ int) func(v []sql.NullInt64) error {
			return func(v []sql.NullInt64) error {
				c := Copy{Direction: CopyKind(v[8].Int64), SrcKind: MemKind(intOr(v[9], -1)), DstKind: MemKind(intOr(v[10], -1)),
					Bytes: v[7].Int64, Start: v[2].Int64, End: v[3].Int64, Device: DeviceID(v[4].Int64), Context: ContextID(v[5].Int64), Stream: StreamID(v[6].Int64),
					FromActivity: true, CorrelationID: v[0].Int64}
				mu.Lock()
				rows.add(v[1].Int64, v[0].Int64, c)
				if c.Direction == CopyUnifiedHtoD || c.Direction == CopyUnifiedDtoH {
					act.mapped.note(GlobalPid(v[1].Int64), "managed memory: unified-memory migrations in its GPU activity")
				}
				mu.Unlock()
				return nil
			}
		})
		if err != nil {
			return nil, err
		}
		st.RowsScanned += n
	}
	if s.HasColumn(tableMemset, "correlationId") && s.HasColumn(tableMemset, "memKind") {
		act.memsetActivity = true
		scan := intScan{what: "reading memset activity", table: tableMemset,
			cols: []intCol{col("correlationId"), colOr("globalPid", 0), col("start"), col("end"), col("deviceId"), col("contextId"),
				col("streamId"), col("bytes"), col("memKind")},
			where: fmt.Sprintf("memKind IN (%d, %d)", MemPinned, MemManaged),
			keep: func(v []sql.NullInt64) bool {
				return v[8].Valid && (MemKind(v[8].Int64) == MemPinned || MemKind(v[8].Int64) == MemManaged)
			}}
		n, err := ld.scanInts(ctx, scan, func(_, _ int) func(v []sql.NullInt64) error {
			return func(v []sql.NullInt64) error {
				c := Copy{Memset: true, DstKind: MemKind(v[8].Int64), SrcKind: MemUnknown, Bytes: v[7].Int64,
					Start: v[2].Int64, End: v[3].Int64, Device: DeviceID(v[4].Int64), Context: ContextID(v[5].Int64), Stream: StreamID(v[6].Int64),
					FromActivity: true, CorrelationID: v[0].Int64}
				mu.Lock()
				rows.add(v[1].Int64, v[0].Int64, c)
				if c.DstKind == MemManaged {
					act.mapped.note(GlobalPid(v[1].Int64), "managed memory: a memset into it")
				}
				mu.Unlock()
				return nil
			}
		})
		if err != nil {
			return nil, err
		}
		st.RowsScanned += n
	}
	act.copyIndex, act.copies = rows.index()
	return act, nil
}

// copyRow returns the copy or memset row of a call.
func (a *activity) copyRow(pid GlobalPid, corr int64) (*Copy, bool) {
	if i, ok := a.copyIndex.rank(int64(pid), corr); ok {
		return &a.copies[i], true
	}
	return nil, false
}

// syncRow returns the synchronization row of a call.
func (a *activity) syncRow(pid GlobalPid, corr int64) (syncRecord, bool) {
	if i, ok := a.syncIndex.rank(int64(pid), corr); ok {
		return a.syncs[i], true
	}
	return syncRecord{}, false
}

// keepCall says whether a loaded call can take part in a host wait: a copy
// or memset whose activity row was filtered out (device-to-device, device
// memset) cannot.
func (a *activity) keepCall(kind CallKind, pid GlobalPid, corr int64) bool {
	switch kind {
	case CallMemcpy:
		if a.memcpyActivity {
			return a.copyIndex.has(int64(pid), corr)
		}
	case CallMemset:
		if a.memsetActivity {
			return a.copyIndex.has(int64(pid), corr)
		}
	}
	return true
}

// loadSyncRecords reads the synchronization rows and the event records.
func (ld activityLoader) loadSyncRecords(ctx context.Context, act *activity, st *Stats) error {
	s := ld.Schema
	if s.HasColumn(tableSync, "correlationId") {
		// Every row is kept: the table holds a row for each sync call, all
		// of which are loaded, and one for each stream wait, which are few.
		var rows corrRows[syncRecord]
		var mu sync.Mutex
		scan := intScan{what: "reading synchronization records", table: tableSync,
			cols: []intCol{col("correlationId"), colOr("globalPid", 0), col("deviceId"), col("contextId"), col("streamId"),
				colOr("eventId", -1), colOr("eventSyncId", -1)}}
		n, err := ld.scanInts(ctx, scan, func(_, _ int) func(v []sql.NullInt64) error {
			return func(v []sql.NullInt64) error {
				r := syncRecord{device: DeviceID(v[2].Int64), context: ContextID(v[3].Int64), stream: StreamID(v[4].Int64),
					eventID: intOr(v[5], -1), eventSyncID: intOr(v[6], -1)}
				mu.Lock()
				rows.add(v[1].Int64, v[0].Int64, r)
				mu.Unlock()
				return nil
			}
		})
		if err != nil {
			return err
		}
		st.RowsScanned += n
		act.syncIndex, act.syncs = rows.index()
	}
	return ld.loadEventRecords(ctx, act, st)
}

// loadEventRecords reads CUPTI_ACTIVITY_KIND_CUDA_EVENT: one row per event
// record, keyed by eventSyncId and by event handle.
func (ld activityLoader) loadEventRecords(ctx context.Context, act *activity, st *Stats) error {
	s := ld.Schema
	if s.HasColumn(tableCudaEvent, "correlationId") && s.HasColumn(tableCudaEvent, "streamId") {
		var rows eventRows
		scan := intScan{what: "reading CUDA event records", table: tableCudaEvent, serial: true,
			cols: []intCol{col("correlationId"), colOr("globalPid", 0), col("deviceId"), col("contextId"), col("streamId"),
				colOr("eventId", -1), colOr("eventSyncId", -1)}}
		n, err := ld.scanInts(ctx, scan, func(_, _ int) func(v []sql.NullInt64) error {
			return func(v []sql.NullInt64) error {
				r := eventRecord{corr: v[0].Int64, device: DeviceID(v[2].Int64), context: ContextID(v[3].Int64), stream: StreamID(v[4].Int64),
					eventID: intOr(v[5], -1), eventSyncID: intOr(v[6], -1)}
				rows.add(v[1].Int64, r)
				return nil
			}
		})
		if err != nil {
			return err
		}
		st.RowsScanned += n
		act.events = rows.index()
	}
	return nil
}

// eventRecordFor finds the record an event sync waited for: through
// eventSyncId when the export has it, else the last record of the same
// event handle made before the sync (handles are reused).
func (a *activity) eventRecordFor(pid GlobalPid, rec syncRecord, syncCorr int64) (eventRecord, bool) {
	if rec.eventSyncID >= 0 && rec.eventSyncID != invalidID {
		if r, ok := a.events.withSyncID(int64(pid), rec.eventSyncID); ok {
			return r, true
		}
	}
	if rec.eventID < 0 || rec.eventID == invalidID {
		return eventRecord{}, false
	}
	return a.events.lastBefore(int64(pid), rec.eventID, syncCorr)
}

// invalidID is CUPTI_SYNCHRONIZATION_INVALID_VALUE.
const invalidID = 0xFFFFFFFF
