package report

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
)

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("coordinate %q: %v", s, err)
	}
	return v
}

// TestTimelineLayout lays out the representative sync of every site of a
// real region and checks the picture against the sync it shows: the wait
// band spans the sync, the bubble starts where the wait ends, the sync's
// own calls are marked, GPU lanes name their streams, and nothing leaves
// the plot.
func TestTimelineLayout(t *testing.T) {
	l := load(t, "syncs_backtrace.sqlite.gz", "measured")
	a := l.analysis
	for _, site := range a.Ordered() {
		idx := representativeSync(a.Trace, site)
		s := &a.Trace.Syncs[idx]
		window, bubble := syncWindow(s)
		if window.Start >= s.Start || window.End <= s.End {
			t.Errorf("%s: window %v does not surround the sync [%d, %d]", site.ID, window, s.Start, s.End)
		}
		tl, err := l.export.Timeline(context.Background(), window)
		if err != nil {
			t.Fatal(err)
		}
		svg := layoutTimeline(tl, a.Trace, s, bubble, "recorded", true)
		var syncBand, bubbleBand *svgBand
		for i := range svg.Bands {
			switch svg.Bands[i].Class {
			case "syncband":
				syncBand = &svg.Bands[i]
			case "bubble":
				bubbleBand = &svg.Bands[i]
			}
		}
		if syncBand == nil {
			t.Fatalf("%s: no wait band", site.ID)
		}
		plotW := float64(svgWidth - svgGutter - svgRight)
		wantW := plotW * float64(s.Duration()) / float64(window.End-window.Start)
		if got := num(t, syncBand.W); math.Abs(got-max(wantW, 1)) > 0.2 {
			t.Errorf("%s: wait band %.1f px wide, want %.1f", site.ID, got, wantW)
		}
		if (bubble.End > bubble.Start) != (bubbleBand != nil) {
			t.Errorf("%s: bubble %v but band %v", site.ID, bubble, bubbleBand)
		}
		if bubbleBand != nil && math.Abs(num(t, bubbleBand.X)-(num(t, syncBand.X)+num(t, syncBand.W))) > 0.2 {
			t.Errorf("%s: bubble starts at %s, the wait ends at %s+%s", site.ID, bubbleBand.X, syncBand.X, syncBand.W)
		}
		marked := 0
		for _, r := range svg.Rects {
			x, w := num(t, r.X), num(t, r.W)
			if x < svgGutter-0.1 || x+w > float64(svgWidth-svgRight)+1.1 {
				t.Errorf("%s: rect %+v leaves the plot", site.ID, r)
			}
			if r.Class == "synccall" {
				marked++
			}
		}
		if marked != len(s.Calls()) {
			t.Errorf("%s: %d calls marked as the sync's, it has %d", site.ID, marked, len(s.Calls()))
		}
		gpuLanes := 0
		for _, lane := range svg.Lanes {
			if lane.GPU && strings.Contains(lane.Label, "stream ") {
				gpuLanes++
			}
		}
		if s.Waited.Ops > 0 && gpuLanes == 0 {
			t.Errorf("%s: the sync waited for %d ops but no GPU stream is drawn", site.ID, s.Waited.Ops)
		}
		if len(svg.Ticks) < 3 {
			t.Errorf("%s: %d axis ticks", site.ID, len(svg.Ticks))
		}
	}
}
