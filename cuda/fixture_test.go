package cuda

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/trace"
)

// fixture is a real export loaded for a test: its region's trace and
// timeline.
type fixture struct {
	name string
	t    *trace.Trace
	tl   *trace.Timeline
}

func loadFixture(tb testing.TB, name, nvtx string) *fixture {
	tb.Helper()
	return loadFixtureFile(tb, fixturegz.Path(filepath.Join("..", "fixtures"), name), name, nvtx)
}

// loadFixtureFile is loadFixture on an export at path.
func loadFixtureFile(tb testing.TB, path, name, nvtx string) *fixture {
	tb.Helper()
	ctx := context.Background()
	x, err := trace.Open(ctx, path)
	if err != nil {
		tb.Fatalf("opening %s: %v", name, err)
	}
	defer x.Close()
	t, err := x.Load(ctx, trace.LoadOptions{NVTX: nvtx})
	if err != nil {
		tb.Fatalf("loading %s: %v", name, err)
	}
	r := t.Region
	tl, err := x.Timeline(ctx, trace.Interval{Start: r.Start, End: r.End + min(r.Duration, 2_000_000_000)})
	if err != nil {
		tb.Fatalf("timeline of %s: %v", name, err)
	}
	return &fixture{name: name, t: t, tl: tl}
}

// syncsInRange returns the syncs inside an NVTX range whose name starts
// with prefix (the ground-truth programs put each site in "sync:SITE").
func (f *fixture) syncsInRange(prefix string) []int {
	var out []int
	for i, s := range f.t.Syncs {
		for _, r := range s.NVTX() {
			if strings.HasPrefix(r.Name, prefix) {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// regionCalls returns the timeline's calls that start in the region, by
// (pid, correlation id).
func (f *fixture) regionCalls() map[callKey]trace.TimelineCall {
	out := map[callKey]trace.TimelineCall{}
	for _, c := range f.tl.Calls {
		if inRegion(f.t.Region, c.Start) {
			out[callKey{c.GlobalTid.Process(), c.CorrelationID}] = c
		}
	}
	return out
}

// readTruth reads a ground-truth file (NAME.truth.json) into v.
func readTruth(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
