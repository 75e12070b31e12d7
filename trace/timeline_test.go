package trace

import (
	"context"
	"testing"
)

// TestTimeline reads the measured region of a real fixture and checks it
// against the test's own SQL counts and the program's known structure.
func TestTimeline(t *testing.T) {
	ctx := context.Background()
	x, err := Open(ctx, leanFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	tr, err := x.Load(ctx, LoadOptions{NVTX: "measured"})
	if err != nil {
		t.Fatal(err)
	}
	w := Interval{tr.Region.Start, tr.Region.End}
	tl, err := x.Timeline(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, leanFixture)
	wantCalls := queryInt(t, db, sqlf(`SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass IN (0,1) AND start < %d AND "end" > %d`, w.End, w.Start))
	wantKernels := queryInt(t, db, sqlf(`SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start < %d AND "end" > %d`, w.End, w.Start))
	if len(tl.Calls) != wantCalls {
		t.Errorf("calls: got %d, SQL %d", len(tl.Calls), wantCalls)
	}
	kinds := map[OpKind]int{}
	for i, op := range tl.Ops {
		kinds[op.Kind]++
		if op.Name == "" || op.End < op.Start {
			t.Errorf("op %d: %+v", i, op)
		}
		if i > 0 && op.Start < tl.Ops[i-1].Start {
			t.Fatalf("ops not sorted")
		}
	}
	if kinds[OpKernel] != wantKernels || kinds[OpMemcpy] == 0 || kinds[OpGraph] != 3 {
		t.Errorf("op kinds %v, want %d kernels, memcpys, and the 3 graph replays", kinds, wantKernels)
	}
	// The program makes one side-stream wait per iteration (3 in measured):
	// each links the side stream to a record on the legacy stream 7.
	if len(tl.Waits) != 3 {
		t.Fatalf("stream waits: got %d, want 3: %+v", len(tl.Waits), tl.Waits)
	}
	for _, wt := range tl.Waits {
		if wt.Stream == wt.RecordStream || wt.RecordCorrelationID >= wt.CorrelationID {
			t.Errorf("wait %+v: want a record on another stream made before the wait", wt)
		}
	}
}
