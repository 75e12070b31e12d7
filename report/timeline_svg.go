package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/internal/format"
	"github.com/nsyssync/nsyssync/trace"
)

// svgTimeline is a timeline picture laid out for the HTML template: every
// coordinate is computed here, every string is escaped by html/template.
type svgTimeline struct {
	Width, Height int
	Caption       string
	Lanes         []svgLane
	Bands         []svgBand
	Rects         []svgRect
	Ticks         []svgTick
	AxisY         int
	PlotLeft      int
	PlotRight     int
}

type svgLane struct {
	Y, LabelY, Height int
	Label             string
	GPU               bool
}

type svgRect struct {
	X, Y, W, H string
	Class      string
	Title      string
}

type svgBand struct {
	X, W, Y, H   string
	LabelX       string
	LabelY       int
	Class, Label string
	Title        string
}

type svgTick struct {
	X     string
	Label string
}

// Timeline picture geometry, in CSS pixels.
const (
	svgWidth     = 960
	svgGutter    = 150 // lane labels
	svgRight     = 16
	svgTop       = 36 // two rows of band labels
	svgLaneH     = 22
	svgLaneGap   = 6
	svgAxisH     = 28
	maxHostLanes = 3
	maxGPULanes  = 6
)

// syncWindow chooses the window that shows a sync: a little of what the
// host waited for before it, the wait, and the GPU's idle time after it
// (capped, so that a long bubble does not shrink the wait to a pixel).
func syncWindow(s *trace.Sync) (window trace.Interval, bubble trace.Interval) {
	span := max(s.End-s.Start, 1)
	start := s.Start
	if s.Waited.Ops > 0 && s.Waited.FirstStart > 0 && s.Waited.FirstStart < s.Start {
		start = s.Start - min(s.Start-s.Waited.FirstStart, max(2*span, 50_000))
	}
	end := s.End
	if !s.Gap.DeviceBusy && s.Gap.IdleAfterNs > 0 {
		bubble = trace.Interval{Start: s.End, End: s.End + s.Gap.IdleAfterNs}
		end = s.End + min(s.Gap.IdleAfterNs, max(3*span, 100_000))
	}
	pad := max((end-start)/5, 10_000)
	return trace.Interval{Start: start - pad, End: end + pad}, bubble
}

// layoutTimeline draws the sync's thread and process's other busy
// threads, and the GPU streams of its device, over the window; with marks
// set, the sync and the bubble after it as bands (a simulated timeline
// without the sync has neither).
func layoutTimeline(tl *trace.Timeline, t *trace.Trace, s *trace.Sync, bubble trace.Interval, caption string, marks bool) *svgTimeline {
	w := tl.Window
	plotW := float64(svgWidth - svgGutter - svgRight)
	x := func(ns int64) float64 {
		ns = min(max(ns, w.Start), w.End)
		// Differences in uint64: exact for any window inside int64.
		return float64(svgGutter) + plotW*float64(uint64(ns)-uint64(w.Start))/float64(max(uint64(w.End)-uint64(w.Start), 1))
	}
	pid := s.GlobalPid

	// Host lanes: the sync's thread first, then the process's other
	// threads with calls in the window.
	threads := []trace.GlobalTid{s.GlobalTid}
	for _, c := range tl.Calls {
		if c.GlobalTid.Pid() == pid.Pid() && !slices.Contains(threads, c.GlobalTid) && len(threads) < maxHostLanes {
			threads = append(threads, c.GlobalTid)
		}
	}
	// GPU lanes: the streams of the sync's process (and device, when
	// known), the sync's stream first.
	type gpuStream struct {
		device trace.DeviceID
		stream trace.StreamID
	}
	var streams []gpuStream
	for _, op := range tl.Ops {
		k := gpuStream{op.Device, op.Stream}
		if op.GlobalPid != pid || (s.Device >= 0 && op.Device != s.Device) || slices.Contains(streams, k) {
			continue
		}
		streams = append(streams, k)
	}
	slices.SortFunc(streams, func(a, b gpuStream) int {
		aSync, bSync := a.stream == s.Stream, b.stream == s.Stream
		switch {
		case aSync != bSync && aSync:
			return -1
		case aSync != bSync:
			return 1
		case a.device != b.device:
			return cmp.Compare(a.device, b.device)
		}
		return cmp.Compare(a.stream, b.stream)
	})
	if len(streams) > maxGPULanes {
		streams = streams[:maxGPULanes]
	}
	streamKey := func(device trace.DeviceID, stream trace.StreamID) string {
		return fmt.Sprintf("s%d/%d", device, stream)
	}

	svg := &svgTimeline{Width: svgWidth, Caption: caption, PlotLeft: svgGutter, PlotRight: svgWidth - svgRight}
	y := svgTop
	laneY := map[string]int{}
	for _, tid := range threads {
		label := fmt.Sprintf("CPU %d/%d", tid.Pid(), tid.Tid())
		if th, ok := t.Threads[tid]; ok && th.Name != "" {
			label += " " + htmlText(th.Name)
		}
		laneY["t"+strconv.FormatInt(int64(tid), 10)] = y
		svg.Lanes = append(svg.Lanes, svgLane{Y: y, LabelY: y + svgLaneH/2 + 4, Height: svgLaneH, Label: label})
		y += svgLaneH + svgLaneGap
	}
	gpuTop := y
	for _, st := range streams {
		label := fmt.Sprintf("GPU %d stream %d", st.device, st.stream)
		laneY[streamKey(st.device, st.stream)] = y
		svg.Lanes = append(svg.Lanes, svgLane{Y: y, LabelY: y + svgLaneH/2 + 4, Height: svgLaneH, Label: label, GPU: true})
		y += svgLaneH + svgLaneGap
	}
	if len(streams) == 0 {
		svg.Lanes = append(svg.Lanes, svgLane{Y: y, LabelY: y + svgLaneH/2 + 4, Height: svgLaneH, Label: "GPU (no ops in window)", GPU: true})
		y += svgLaneH + svgLaneGap
	}
	bottom := y - svgLaneGap

	if marks {
		svg.Bands = syncBands(s, bubble, x, w, gpuTop, bottom)
	}

	inSync := map[int64]bool{}
	for _, c := range s.Calls() {
		inSync[c.CorrelationID] = true
	}
	for _, c := range tl.Calls {
		ly, ok := laneY["t"+strconv.FormatInt(int64(c.GlobalTid), 10)]
		if !ok {
			continue
		}
		class := "api"
		switch {
		case c.GlobalTid == s.GlobalTid && inSync[c.CorrelationID]:
			class = "synccall"
		case strings.Contains(c.Name, "Launch"):
			class = "launch"
		}
		svg.Rects = append(svg.Rects, rect(x(c.Start), x(c.End), ly, class,
			fmt.Sprintf("%s, %s", htmlText(c.Name), format.Duration(c.End-c.Start))))
	}
	for _, op := range tl.Ops {
		ly, ok := laneY[streamKey(op.Device, op.Stream)]
		if !ok || op.GlobalPid != pid || (s.Device >= 0 && op.Device != s.Device) {
			continue
		}
		title := fmt.Sprintf("%s, %s", htmlText(op.Name), format.Duration(op.End-op.Start))
		if op.Bytes > 0 {
			title += fmt.Sprintf(", %d B", op.Bytes)
		}
		svg.Rects = append(svg.Rects, rect(x(op.Start), x(op.End), ly, string(op.Kind), title))
	}

	svg.AxisY = bottom + 8
	svg.Ticks = ticks(w, s.Start, x)
	svg.Height = svg.AxisY + svgAxisH
	return svg
}

// syncBands marks the host's wait over every lane and the GPU idle time
// after it over the GPU lanes.
func syncBands(s *trace.Sync, bubble trace.Interval, x func(int64) float64, w trace.Interval, gpuTop, bottom int) []svgBand {
	var bands []svgBand
	syncX, syncX2 := x(s.Start), x(s.End)
	bands = append(bands, svgBand{X: px(syncX), W: px(max(syncX2-syncX, 1)), Y: px(float64(svgTop - 4)), H: px(float64(bottom - svgTop + 8)),
		Class: "syncband", Label: "host blocked " + format.Duration(s.Duration()), LabelX: px(syncX), LabelY: svgTop - 24,
		Title: htmlText(What(s)) + ", blocked " + format.Duration(s.Duration())})
	if bubble.End > bubble.Start {
		bx, bx2 := x(bubble.Start), x(bubble.End)
		label := "GPU idle " + format.Duration(bubble.End-bubble.Start)
		if bubble.End > w.End {
			label += " →"
		}
		bands = append(bands, svgBand{X: px(bx), W: px(max(bx2-bx, 1)), Y: px(float64(gpuTop - 2)), H: px(float64(bottom - gpuTop + 4)),
			Class: "bubble", Label: label, LabelX: px(bx), LabelY: svgTop - 10,
			Title: "GPU idle after the sync returned: " + format.Duration(bubble.End-bubble.Start)})
	}

	return bands
}

func rect(x1, x2 float64, laneY int, class, title string) svgRect {
	return svgRect{X: px(x1), Y: px(float64(laneY + 2)), W: px(max(x2-x1, 1)), H: px(float64(svgLaneH - 4)), Class: class, Title: title}
}

// maxTicks bounds the ticks of an axis: a round step gives at most seven.
const maxTicks = 12

// ticks places axis ticks at a round step, labelled relative to the
// sync's start. The arithmetic holds for windows at the ends of int64 (a
// damaged export): the width is taken in uint64, and the loop stops before
// the time overflows — it once looped forever there.
func ticks(w trace.Interval, zero int64, x func(int64) float64) []svgTick {
	if w.End <= w.Start {
		return nil
	}
	span := float64(uint64(w.End) - uint64(w.Start))
	raw := span / 6
	mag := math.Pow(10, math.Floor(math.Log10(max(raw, 1))))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if step > math.MaxInt64/2 {
		return nil
	}
	st := int64(step)
	var out []svgTick
	first := zero - ((zero-w.Start)/st)*st
	for ns := first; ns <= w.End && len(out) < maxTicks; ns += st {
		label := "0"
		switch d := ns - zero; {
		case d > 0:
			label = "+" + format.Duration(d)
		case d < 0:
			label = "−" + format.Duration(-d)
		}
		out = append(out, svgTick{X: px(x(ns)), Label: label})
		if ns > math.MaxInt64-st {
			break
		}
	}
	return out
}

// px formats a coordinate with one decimal, so that output is stable.
func px(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
