package report

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/nsyssync/nsyssync/internal/textsafe"
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
	path, _ := json.Marshal(textsafe.Bound(t.Path))
	bw.Write(path)
	bw.WriteString(`},"traceEvents":[`)

	a.perfettoNames(enc, tl)
	for i := range tl.Calls {
		c := &tl.Calls[i]
		b := complete(appendJSONString(enc.open(), textsafe.Bound(c.Name)), "cuda_api", c.Start, c.End-c.Start, c.GlobalTid.Pid(), c.GlobalTid.Tid())
		enc.end(appendInt(append(b, `"correlation_id":`...), c.CorrelationID))
	}
	for i := range tl.Ops {
		op := &tl.Ops[i]
		b := complete(appendJSONString(enc.open(), textsafe.Bound(op.Name)), string(op.Kind), op.Start, op.End-op.Start, perfettoGPUPidBase+int64(op.Device), int64(op.Stream))
		if op.Bytes > 0 {
			b = append(appendInt(append(b, `"bytes":`...), op.Bytes), ',')
		}
		b = appendInt(append(b, `"correlation_id":`...), op.CorrelationID)
		enc.end(appendInt(append(b, `,"pid":`...), op.GlobalPid.Pid()))
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
	sites := make([]*perfettoSite, len(a.Sites))
	for i := range t.Syncs {
		si := siteOf[i]
		if si < 0 {
			continue
		}
		if sites[si] == nil {
			p, err := a.perfettoSite(&a.Sites[si])
			if err != nil && enc.err == nil {
				enc.err = err
			}
			sites[si] = &p
		}
		enc.syncEvent(&t.Syncs[i], i, sites[si])
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
	var tids []trace.GlobalTid
	for _, c := range tl.Calls {
		if !slices.Contains(tids, c.GlobalTid) {
			tids = append(tids, c.GlobalTid)
		}
		pids[c.GlobalTid.Pid()] = true
	}
	for i := range t.Syncs {
		pids[t.Syncs[i].GlobalPid.Pid()] = true
	}
	slices.Sort(tids)
	for _, pid := range sortedKeys(pids) {
		name := "process " + strconv.FormatInt(pid, 10)
		for _, p := range t.Processes {
			if p.Pid == pid && p.Name != "" {
				name = textsafe.Bound(p.Name) + " " + strconv.FormatInt(pid, 10)
			}
		}
		meta("process_name", pid, 0, name)
		meta("thread_name", pid, perfettoSyncTid, "host syncs (nsyssync verdicts)")
		sortIdx(pid, perfettoSyncTid, -1)
	}
	for _, tid := range tids {
		name := "thread " + strconv.FormatInt(tid.Tid(), 10)
		if th, ok := t.Threads[tid]; ok && th.Name != "" {
			name = textsafe.Bound(th.Name) + " " + strconv.FormatInt(tid.Tid(), 10)
		}
		meta("thread_name", tid.Pid(), tid.Tid(), name+" (CUDA API)")
	}
	devices := map[int64]bool{}
	streams := map[[2]int64]bool{}
	for _, op := range tl.Ops {
		devices[int64(op.Device)] = true
		streams[[2]int64{int64(op.Device), int64(op.Stream)}] = true
	}
	for i := range t.Syncs {
		if d := t.Syncs[i].Device; d >= 0 {
			devices[int64(d)] = true
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
