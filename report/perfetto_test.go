package report

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// TestPerfetto checks the Chrome trace of real regions against the
// export's own timeline and inventory: every API call and GPU op once,
// every sync on the annotation track with its verdict, a bubble for each
// sync after which the GPU sat idle, and a name for every track.
func TestPerfetto(t *testing.T) {
	for _, tc := range []struct{ fixture, nvtx string }{
		{"syncs_backtrace.sqlite.gz", "measured"},
		{"syncs_autograd.sqlite.gz", ""},
		{"multiproc_lean.sqlite.gz", ""},
	} {
		t.Run(tc.fixture+"@"+tc.nvtx, func(t *testing.T) {
			ctx := context.Background()
			l := load(t, tc.fixture, tc.nvtx)
			tr := l.analysis.Trace
			var b bytes.Buffer
			if err := l.analysis.WritePerfetto(ctx, &b, l.export); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				DisplayTimeUnit string        `json:"displayTimeUnit"`
				TraceEvents     []chromeEvent `json:"traceEvents"`
			}
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatalf("invalid JSON: %v", err)
			}
			tl, err := l.export.Timeline(ctx, trace.Interval{Start: tr.Region.Start, End: tr.Region.End})
			if err != nil {
				t.Fatal(err)
			}
			wantBubbles := 0
			for _, s := range tr.Syncs {
				if !s.Gap.DeviceBusy && s.Gap.IdleAfterNs > 0 && s.Device >= 0 {
					wantBubbles++
				}
			}
			count := map[string]int{}
			named := map[[2]int64]bool{}
			used := map[[2]int64]bool{}
			sites := map[string]bool{}
			for _, e := range doc.TraceEvents {
				if e.Ph == "M" {
					if e.Name == "thread_name" {
						named[[2]int64{e.Pid, e.Tid}] = true
					}
					continue
				}
				count[e.Cat]++
				used[[2]int64{e.Pid, e.Tid}] = true
				if _, err := e.Ts.Float64(); err != nil {
					t.Fatalf("ts %q: %v", e.Ts, err)
				}
				if d, err := e.Dur.Float64(); err != nil || d < 0 {
					t.Fatalf("dur %q: %v", e.Dur, err)
				}
				if e.Cat == "sync" {
					sites[e.Args["site"].(string)] = true
					if e.Args["dependency"] == nil || e.Args["fingerprint"] == nil {
						t.Errorf("sync event without verdict: %+v", e)
					}
				}
			}
			ops := count["kernel"] + count["memcpy"] + count["memset"] + count["graph"]
			if count["cuda_api"] != len(tl.Calls) || ops != len(tl.Ops) {
				t.Errorf("%d calls and %d ops, the timeline has %d and %d", count["cuda_api"], ops, len(tl.Calls), len(tl.Ops))
			}
			if count["sync"] != len(tr.Syncs) || count["bubble"] != wantBubbles {
				t.Errorf("%d syncs and %d bubbles, want %d and %d", count["sync"], count["bubble"], len(tr.Syncs), wantBubbles)
			}
			if len(sites) != len(l.analysis.Sites) {
				t.Errorf("sync events name %d sites, the analysis has %d", len(sites), len(l.analysis.Sites))
			}
			for k := range used {
				if !named[k] {
					t.Errorf("track pid %d tid %d has no name", k[0], k[1])
				}
			}
		})
	}
}
