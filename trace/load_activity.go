package trace

import (
	"context"
	"fmt"
)

// syncRecord is a CUPTI_ACTIVITY_KIND_SYNCHRONIZATION row: the stream,
// context or event a sync call waited on.
type syncRecord struct {
	device, context, stream, eventID, eventSyncID int64
}

// eventRecord is a CUPTI_ACTIVITY_KIND_CUDA_EVENT row: an event record on a
// stream, made by the call with correlationId.
type eventRecord struct {
	corr, device, context, stream, eventID, eventSyncID int64
}

// activity is what the export says about the GPU side of the calls.
type activity struct {
	copies  map[callKey]*Copy
	syncs   map[callKey]syncRecord
	bySync  map[[2]int64]eventRecord   // (globalPid, eventSyncId) -> record
	byEvent map[[2]int64][]eventRecord // (globalPid, eventId) -> records by corr
}

// loadActivity reads the memcpy/memset rows of the loaded calls, their
// synchronization records and the event records. Each table is scanned
// once; rows are kept only when they belong to a loaded call.
func (x *Export) loadActivity(ctx context.Context, calls []Call, st *Stats) (*activity, error) {
	act := &activity{copies: map[callKey]*Copy{}, syncs: map[callKey]syncRecord{},
		bySync: map[[2]int64]eventRecord{}, byEvent: map[[2]int64][]eventRecord{}}
	want := map[callKey]CallKind{}
	for _, c := range calls {
		want[callKey{pidOf(c.GlobalTid), c.CorrelationID}] = c.Kind
	}
	s := x.Schema
	if s.HasColumn(tableMemcpy, "correlationId") {
		q := fmt.Sprintf(`SELECT correlationId, %s, start, "end", deviceId, contextId, streamId, bytes, copyKind, %s, %s FROM %s`,
			s.col(tableMemcpy, "globalPid", "0"), s.col(tableMemcpy, "srcKind", "-1"), s.col(tableMemcpy, "dstKind", "-1"), s.Name(tableMemcpy))
		v, dest := nullInts(11)
		n, err := x.scanRows(ctx, "reading memcpy activity", q, dest, func() error {
			k := callKey{v[1].Int64, v[0].Int64}
			if want[k] != CallMemcpy {
				return nil
			}
			act.copies[k] = &Copy{Direction: CopyKind(v[8].Int64), SrcKind: MemKind(intOr(v[9], -1)), DstKind: MemKind(intOr(v[10], -1)),
				Bytes: v[7].Int64, Start: v[2].Int64, End: v[3].Int64, Device: v[4].Int64, Context: v[5].Int64, Stream: v[6].Int64,
				FromActivity: true, CorrelationID: k.corr}
			return nil
		})
		if err != nil {
			return nil, err
		}
		st.RowsScanned += n
	}
	if s.HasColumn(tableMemset, "correlationId") {
		q := fmt.Sprintf(`SELECT correlationId, %s, start, "end", deviceId, contextId, streamId, bytes, %s FROM %s`,
			s.col(tableMemset, "globalPid", "0"), s.col(tableMemset, "memKind", "-1"), s.Name(tableMemset))
		v, dest := nullInts(9)
		n, err := x.scanRows(ctx, "reading memset activity", q, dest, func() error {
			k := callKey{v[1].Int64, v[0].Int64}
			if want[k] != CallMemset {
				return nil
			}
			act.copies[k] = &Copy{Memset: true, DstKind: MemKind(intOr(v[8], -1)), SrcKind: MemUnknown, Bytes: v[7].Int64,
				Start: v[2].Int64, End: v[3].Int64, Device: v[4].Int64, Context: v[5].Int64, Stream: v[6].Int64,
				FromActivity: true, CorrelationID: k.corr}
			return nil
		})
		if err != nil {
			return nil, err
		}
		st.RowsScanned += n
	}
	if s.HasColumn(tableSync, "correlationId") {
		q := fmt.Sprintf(`SELECT correlationId, %s, deviceId, contextId, streamId, %s, %s FROM %s`,
			s.col(tableSync, "globalPid", "0"), s.col(tableSync, "eventId", "-1"), s.col(tableSync, "eventSyncId", "-1"), s.Name(tableSync))
		v, dest := nullInts(7)
		n, err := x.scanRows(ctx, "reading synchronization records", q, dest, func() error {
			k := callKey{v[1].Int64, v[0].Int64}
			if _, ok := want[k]; !ok {
				return nil
			}
			act.syncs[k] = syncRecord{device: v[2].Int64, context: v[3].Int64, stream: v[4].Int64,
				eventID: intOr(v[5], -1), eventSyncID: intOr(v[6], -1)}
			return nil
		})
		if err != nil {
			return nil, err
		}
		st.RowsScanned += n
	}
	if err := x.loadEventRecords(ctx, act, st); err != nil {
		return nil, err
	}
	return act, nil
}

// loadEventRecords reads CUPTI_ACTIVITY_KIND_CUDA_EVENT: one row per event
// record, keyed by eventSyncId and by event handle.
func (x *Export) loadEventRecords(ctx context.Context, act *activity, st *Stats) error {
	s := x.Schema
	if s.HasColumn(tableCudaEvent, "correlationId") && s.HasColumn(tableCudaEvent, "streamId") {
		q := fmt.Sprintf(`SELECT correlationId, %s, deviceId, contextId, streamId, %s, %s FROM %s ORDER BY correlationId`,
			s.col(tableCudaEvent, "globalPid", "0"), s.col(tableCudaEvent, "eventId", "-1"), s.col(tableCudaEvent, "eventSyncId", "-1"), s.Name(tableCudaEvent))
		v, dest := nullInts(7)
		n, err := x.scanRows(ctx, "reading CUDA event records", q, dest, func() error {
			r := eventRecord{corr: v[0].Int64, device: v[2].Int64, context: v[3].Int64, stream: v[4].Int64,
				eventID: intOr(v[5], -1), eventSyncID: intOr(v[6], -1)}
			pid := v[1].Int64
			if r.eventSyncID >= 0 {
				act.bySync[[2]int64{pid, r.eventSyncID}] = r
			}
			if r.eventID >= 0 {
				k := [2]int64{pid, r.eventID}
				act.byEvent[k] = append(act.byEvent[k], r)
			}
			return nil
		})
		if err != nil {
			return err
		}
		st.RowsScanned += n
	}
	return nil
}

// eventRecordFor finds the record an event sync waited for: through
// eventSyncId when the export has it, else the last record of the same
// event handle made before the sync (handles are reused).
func (a *activity) eventRecordFor(pid int64, rec syncRecord, syncCorr int64) (eventRecord, bool) {
	if rec.eventSyncID >= 0 && rec.eventSyncID != invalidID {
		if r, ok := a.bySync[[2]int64{pid, rec.eventSyncID}]; ok {
			return r, true
		}
	}
	if rec.eventID < 0 || rec.eventID == invalidID {
		return eventRecord{}, false
	}
	list := a.byEvent[[2]int64{pid, rec.eventID}]
	best, found := eventRecord{}, false
	for _, r := range list { // sorted by corr
		if r.corr >= syncCorr {
			break
		}
		best, found = r, true
	}
	return best, found
}

// invalidID is CUPTI_SYNCHRONIZATION_INVALID_VALUE.
const invalidID = 0xFFFFFFFF
