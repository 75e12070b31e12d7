package trace

import (
	"cmp"
	"slices"
)

// eventRecords holds the CUDA event records of an export for the event
// syncs to find theirs: by eventSyncId, and by event handle and time,
// because handles are reused. Both are sorted arrays, searched in
// O(log n): a trace may hold millions of records, and one handle
// recorded again and again.
type eventRecords struct {
	bySyncIndex *corrIndex // (globalPid, eventSyncId) -> bySync
	bySync      []eventRecord
	byEvent     []pidEventRecord // by (pid, eventID, corr)
}

type pidEventRecord struct {
	pid int64
	eventRecord
}

// eventRows collects event records in any order.
type eventRows struct{ rows chunked[pidEventRecord] }

func (e *eventRows) add(pid int64, r eventRecord) {
	e.rows.append(pidEventRecord{pid, r})
}

// index sorts the records. Of records with the same eventSyncId (there
// should be none), the latest wins.
func (e *eventRows) index() *eventRecords {
	all := e.rows.appendTo(make([]pidEventRecord, 0, e.rows.len()))
	slices.SortStableFunc(all, func(a, b pidEventRecord) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.corr, b.corr))
	})
	var bySync corrRows[eventRecord]
	byEvent := make([]pidEventRecord, 0, len(all))
	for _, r := range all {
		if r.eventSyncID >= 0 {
			bySync.add(r.pid, r.eventSyncID, r.eventRecord)
		}
		if r.eventID >= 0 {
			byEvent = append(byEvent, r)
		}
	}
	slices.SortStableFunc(byEvent, func(a, b pidEventRecord) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.eventID, b.eventID))
	})
	ix, recs := bySync.index()
	return &eventRecords{bySyncIndex: ix, bySync: recs, byEvent: byEvent}
}

// withSyncID returns the record of an eventSyncId.
func (e *eventRecords) withSyncID(pid, eventSyncID int64) (eventRecord, bool) {
	if e == nil {
		return eventRecord{}, false
	}
	if i, ok := e.bySyncIndex.rank(pid, eventSyncID); ok {
		return e.bySync[i], true
	}
	return eventRecord{}, false
}

// lastBefore returns the last record of an event handle made before the
// call with correlation id corr.
func (e *eventRecords) lastBefore(pid, eventID, corr int64) (eventRecord, bool) {
	if e == nil {
		return eventRecord{}, false
	}
	i, _ := slices.BinarySearchFunc(e.byEvent, pidEventRecord{pid, eventRecord{eventID: eventID, corr: corr}}, func(a, b pidEventRecord) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.eventID, b.eventID), cmp.Compare(a.corr, b.corr))
	})
	if i == 0 {
		return eventRecord{}, false
	}
	r := e.byEvent[i-1]
	if r.pid != pid || r.eventID != eventID {
		return eventRecord{}, false
	}
	return r.eventRecord, true
}
