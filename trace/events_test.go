package trace

import "testing"

func TestEventRecords(t *testing.T) {
	var rows eventRows
	// Handle 7 of process 1 recorded three times (out of order), handle 8
	// once; process 2 reuses handle 7; eventSyncIds 100 to 104.
	for _, r := range []struct {
		pid int64
		rec eventRecord
	}{
		{1, eventRecord{corr: 30, stream: 3, eventID: 7, eventSyncID: 102}},
		{1, eventRecord{corr: 10, stream: 1, eventID: 7, eventSyncID: 100}},
		{1, eventRecord{corr: 20, stream: 2, eventID: 7, eventSyncID: 101}},
		{1, eventRecord{corr: 15, stream: 5, eventID: 8, eventSyncID: 103}},
		{2, eventRecord{corr: 12, stream: 9, eventID: 7, eventSyncID: 104}},
	} {
		rows.add(r.pid, r.rec)
	}
	ev := rows.index()
	before := []struct {
		name             string
		pid, event, corr int64
		wantStream       int64 // -1: none
	}{
		{"before the first record", 1, 7, 10, -1},
		{"just after the first", 1, 7, 11, 1},
		{"between the second and third", 1, 7, 25, 2},
		{"after the last", 1, 7, 1000, 3},
		{"another handle", 1, 8, 16, 5},
		{"another process, same handle", 2, 7, 13, 9},
		{"a handle never recorded", 1, 9, 100, -1},
		{"a process never seen", 3, 7, 100, -1},
	}
	for _, tt := range before {
		r, ok := ev.lastBefore(tt.pid, tt.event, tt.corr)
		if got := map[bool]int64{true: int64(r.stream), false: -1}[ok]; got != tt.wantStream {
			t.Errorf("%s: lastBefore(%d, %d, %d) stream %d, want %d", tt.name, tt.pid, tt.event, tt.corr, got, tt.wantStream)
		}
	}
	for id, want := range map[int64]StreamID{100: 1, 101: 2, 102: 3, 103: 5} {
		if r, ok := ev.withSyncID(1, id); !ok || r.stream != want {
			t.Errorf("withSyncID(1, %d) = stream %d, %v; want %d", id, r.stream, ok, want)
		}
	}
	if _, ok := ev.withSyncID(1, 104); ok {
		t.Error("withSyncID(1, 104) found process 2's record")
	}
	var none *eventRecords // an export without the table
	if _, ok := none.lastBefore(1, 7, 100); ok {
		t.Error("nil records found a record")
	}
}
