package report

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// Chrome-trace ids of the tracks nsyssync adds. Host processes keep their
// pid; GPU devices and the annotation tracks get ids no real pid or tid
// reaches (both are 24-bit in nsys).
const (
	perfettoGPUPidBase = 1 << 28 // + device
	perfettoSyncTid    = 1 << 27 // "host syncs" track of a process
	perfettoBubbleTid  = 1 << 27 // "GPU idle after syncs" track of a device
)

// chromeEvent is one Chrome trace event (the JSON format Perfetto and
// chrome://tracing read). Times are microseconds.
type chromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   json.Number    `json:"ts,omitempty"`
	Dur  json.Number    `json:"dur,omitempty"`
	Pid  int64          `json:"pid"`
	Tid  int64          `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// usec formats nanoseconds as microseconds with nanosecond precision. The
// magnitude is taken in uint64, where -math.MinInt64 exists: a fuzzed
// export with a call at the start of time once gave "--9223372036854775.-808".
func usec(ns int64) json.Number {
	sign, abs := "", uint64(ns)
	if ns < 0 {
		sign, abs = "-", -abs
	}
	return json.Number(fmt.Sprintf("%s%d.%03d", sign, abs/1000, abs%1000))
}

// WritePerfetto writes a Chrome-trace JSON of the analysed region, to open
// in ui.perfetto.dev: the host threads' CUDA API calls and the GPU
// streams' ops from the export, and annotation tracks — each process's
// host syncs labelled with their site and verdict, and each device's idle
// time after them.
func (a *Analysis) WritePerfetto(ctx context.Context, w io.Writer, tr TimelineReader) error {
	t := a.Trace
	tl, err := tr.Timeline(ctx, trace.Interval{Start: t.Region.Start, End: t.Region.End})
	if err != nil {
		return fmt.Errorf("reading the region's timeline: %w", err)
	}
	bw := bufio.NewWriter(w)
	enc := &eventWriter{w: bw}
	bw.WriteString(`{"displayTimeUnit":"ns","otherData":{"generator":"nsyssync","trace":`)
	path, _ := json.Marshal(t.Path)
	bw.Write(path)
	bw.WriteString(`},"traceEvents":[`)

	a.perfettoNames(enc, tl)
	for _, c := range tl.Calls {
		enc.add(chromeEvent{Name: c.Name, Cat: "cuda_api", Ph: "X", Ts: usec(c.Start), Dur: usec(c.End - c.Start),
			Pid: trace.PidOf(c.GlobalTid), Tid: trace.TidOf(c.GlobalTid), Args: map[string]any{"correlation_id": c.CorrelationID}})
	}
	for _, op := range tl.Ops {
		args := map[string]any{"correlation_id": op.CorrelationID, "pid": trace.PidOf(op.GlobalPid)}
		if op.Bytes > 0 {
			args["bytes"] = op.Bytes
		}
		enc.add(chromeEvent{Name: op.Name, Cat: string(op.Kind), Ph: "X", Ts: usec(op.Start), Dur: usec(op.End - op.Start),
			Pid: perfettoGPUPidBase + op.Device, Tid: op.Stream, Args: args})
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	a.perfettoSyncs(enc)
	bw.WriteString("\n]}\n")
	if enc.err != nil {
		return fmt.Errorf("writing the Perfetto trace: %w", enc.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the Perfetto trace: %w", err)
	}
	return nil
}

// perfettoSyncs adds the annotation tracks: every sync with its site's
// verdict, and the GPU idle time after it.
func (a *Analysis) perfettoSyncs(enc *eventWriter) {
	t := a.Trace
	siteOf := a.siteIndex()
	for i := range t.Syncs {
		s := &t.Syncs[i]
		si := siteOf[i]
		if si < 0 {
			continue
		}
		site := &a.Sites[si]
		id := "e" + itoa(i+1)
		args := map[string]any{
			"sync": id, "site": site.ID, "fingerprint": Fingerprint(site), "dependency": string(site.Dependency),
			"category": site.Category, "confidence": site.Confidence, "location": siteLabel(site), "what": What(s),
			"blocked_ns": s.Duration(), "waited_for": waited(s), "gpu_idle_after": idleAfter(s), "thread": trace.TidOf(s.GlobalTid),
		}
		if len(site.Evidence) > 0 {
			args["evidence"] = strings.Join(site.Evidence, "; ")
		}
		if site.Fix != "" {
			args["fix"] = site.Fix
		}
		if a.Estimated() {
			args["site_estimated_savings_ns"] = a.SavingsNs(site)
		}
		if reason, ok := a.Allowed[site.ID]; ok {
			args["allowed"] = reason
		}
		name := fmt.Sprintf("%s %s: %s %s", id, site.ID, site.Dependency, site.Category)
		enc.add(chromeEvent{Name: name, Cat: "sync", Ph: "X", Ts: usec(s.Start), Dur: usec(s.Duration()),
			Pid: trace.PidOf(s.GlobalPid), Tid: perfettoSyncTid, Args: args})
		if !s.Gap.DeviceBusy && s.Gap.IdleAfterNs > 0 && s.Device >= 0 {
			enc.add(chromeEvent{Name: "GPU idle after " + id, Cat: "bubble", Ph: "X", Ts: usec(s.End), Dur: usec(s.Gap.IdleAfterNs),
				Pid: perfettoGPUPidBase + s.Device, Tid: perfettoBubbleTid,
				Args: map[string]any{"sync": id, "site": site.ID, "dependency": string(site.Dependency), "idle_ns": s.Gap.IdleAfterNs}})
		}
	}
}

// perfettoNames names the processes and tracks, in a fixed order.
func (a *Analysis) perfettoNames(enc *eventWriter, tl *trace.Timeline) {
	t := a.Trace
	meta := func(name string, pid, tid int64, value string) {
		enc.add(chromeEvent{Name: name, Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"name": value}})
	}
	sortIdx := func(pid, tid int64, idx int) {
		enc.add(chromeEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"sort_index": idx}})
	}
	pids := map[int64]bool{}
	var tids []int64
	for _, c := range tl.Calls {
		if !slices.Contains(tids, c.GlobalTid) {
			tids = append(tids, c.GlobalTid)
		}
		pids[trace.PidOf(c.GlobalTid)] = true
	}
	for i := range t.Syncs {
		pids[trace.PidOf(t.Syncs[i].GlobalPid)] = true
	}
	slices.Sort(tids)
	for _, pid := range sortedKeys(pids) {
		name := "process " + strconv.FormatInt(pid, 10)
		for _, p := range t.Processes {
			if p.Pid == pid && p.Name != "" {
				name = p.Name + " " + strconv.FormatInt(pid, 10)
			}
		}
		meta("process_name", pid, 0, name)
		meta("thread_name", pid, perfettoSyncTid, "host syncs (nsyssync verdicts)")
		sortIdx(pid, perfettoSyncTid, -1)
	}
	for _, tid := range tids {
		name := "thread " + strconv.FormatInt(trace.TidOf(tid), 10)
		if th, ok := t.Threads[tid]; ok && th.Name != "" {
			name = th.Name + " " + strconv.FormatInt(trace.TidOf(tid), 10)
		}
		meta("thread_name", trace.PidOf(tid), trace.TidOf(tid), name+" (CUDA API)")
	}
	devices := map[int64]bool{}
	streams := map[[2]int64]bool{}
	for _, op := range tl.Ops {
		devices[op.Device] = true
		streams[[2]int64{op.Device, op.Stream}] = true
	}
	for i := range t.Syncs {
		if d := t.Syncs[i].Device; d >= 0 {
			devices[d] = true
		}
	}
	for _, d := range sortedKeys(devices) {
		meta("process_name", perfettoGPUPidBase+d, 0, "GPU "+strconv.FormatInt(d, 10))
		meta("thread_name", perfettoGPUPidBase+d, perfettoBubbleTid, "GPU idle after syncs (nsyssync)")
		sortIdx(perfettoGPUPidBase+d, perfettoBubbleTid, -1)
	}
	keys := make([][2]int64, 0, len(streams))
	for k := range streams {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y [2]int64) int {
		if x[0] != y[0] {
			return int(x[0] - y[0])
		}
		return int(x[1] - y[1])
	})
	for _, k := range keys {
		meta("thread_name", perfettoGPUPidBase+k[0], k[1], "stream "+strconv.FormatInt(k[1], 10))
	}
}

func sortedKeys(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// eventWriter writes comma-separated events and keeps the first error.
type eventWriter struct {
	w   *bufio.Writer
	n   int
	err error
}

func (e *eventWriter) add(ev chromeEvent) {
	if e.err != nil {
		return
	}
	data, err := json.Marshal(ev)
	if err != nil {
		e.err = err
		return
	}
	if e.n > 0 {
		e.w.WriteByte(',')
	}
	e.w.WriteByte('\n')
	if _, err := e.w.Write(data); err != nil {
		e.err = err
	}
	e.n++
}
