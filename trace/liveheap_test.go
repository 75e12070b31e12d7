package trace

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestLiveHeapAfterLoad loads the export named by NSYSSYNC_HEAP_EXPORT and
// logs the time Load took and the live heap after it (after a forced
// collection, with the trace still held): the figure docs/performance.md
// gives for what an inventory holds. Skipped without the variable.
//
//	NSYSSYNC_HEAP_EXPORT=/tmp/x.sqlite go test -run LiveHeap -v ./trace/
func TestLiveHeapAfterLoad(t *testing.T) {
	path := os.Getenv("NSYSSYNC_HEAP_EXPORT")
	if path == "" {
		t.Skip("NSYSSYNC_HEAP_EXPORT not set")
	}
	x, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	t0 := time.Now()
	tr, err := x.Load(context.Background(), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	gpu := 0
	for i := range tr.Syncs {
		if tr.Syncs[i].detail != nil && tr.Syncs[i].detail.gpu != nil {
			gpu++
		}
	}
	t.Logf("%s: %d syncs (%d with GPU ops around them), Load %.2f s, live heap after Load %.1f MiB (%.1f before), %d GCs",
		path, len(tr.Syncs), gpu, took.Seconds(), float64(after.HeapAlloc)/(1<<20), float64(before.HeapAlloc)/(1<<20), after.NumGC-before.NumGC)
	runtime.KeepAlive(tr)
}
