package analysis

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/report"
)

// TestHTMLSimulatedTimeline: the HTML report of an estimated export draws,
// under each detailed site's recorded timeline, the simulator's timeline
// without the site's syncs — for every site whose saving is the replay's
// — and never says a simulated view is not available yet.
func TestHTMLSimulatedTimeline(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ fixture, nvtx string }{
		{"gt_mlp_train.sqlite.gz", "measured"},
		{"gt_cpu_copy.sqlite.gz", "measured"},
		{"syncs_backtrace.sqlite.gz", "measured"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			an, err := Analyze(ctx, filepath.Join(fixtures, tc.fixture), Options{NVTX: tc.nvtx})
			if err != nil {
				t.Fatal(err)
			}
			defer an.Close()
			a := an.Report
			if a.Estimates == nil || a.Estimates.WithoutSyncs == nil {
				t.Fatal("estimated without a simulated view")
			}
			const details = 5
			var buf bytes.Buffer
			if err := a.WriteHTML(ctx, &buf, report.HTMLOptions{Details: details, Timelines: an.Export}); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			want := 0
			for _, s := range a.Ordered()[:min(details, len(a.Sites))] {
				if s.Counting() != classify.CountNone && a.Estimates.Sites[s.ID].Bound != estimate.BoundCopyOverlap {
					want++
				}
			}
			if want == 0 {
				t.Fatal("no detailed site's saving is a replay")
			}
			got := strings.Count(page, `aria-label="timeline simulated without the site`)
			if got != want {
				t.Errorf("%d simulated timelines, want %d", got, want)
			}
			if strings.Contains(page, "not available yet") {
				t.Error("the page says a simulated view is not available yet")
			}
		})
	}
}
