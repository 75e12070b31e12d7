package trace

import (
	"context"
	"database/sql"
	"math"
	"sort"
	"strings"
)

// timelineReader reads the API calls, GPU ops and stream waits of time
// windows, for the simulator, the GPU replay and the HTML timelines:
// Export.Timeline and its kin run it. It reads through the export's source.
type timelineReader struct{ *source }

// OpKind says what a GPU op is.
type OpKind string

// GPU op kinds.
const (
	OpKernel OpKind = "kernel"
	OpMemcpy OpKind = "memcpy"
	OpMemset OpKind = "memset"
	OpGraph  OpKind = "graph"
)

// Timeline is every CUDA API call and GPU op of a time window: what a
// simulator replays and a report draws.
type Timeline struct {
	Window Interval
	// Calls are the runtime and driver API calls (backtrace twins left
	// out), in time order.
	Calls []TimelineCall
	// Ops are the GPU ops that overlap the window, in start order.
	Ops []Op
	// Waits are GPU-side dependencies between streams
	// (cudaStreamWaitEvent): the waiting stream may not run past the wait
	// until the recording stream has reached the record.
	Waits []StreamWait
}

// TimelineCall is one API call of a timeline.
type TimelineCall struct {
	Name          string // normalised
	Kind          CallKind
	Start, End    int64
	GlobalTid     GlobalTid
	CorrelationID int64
}

// Op is one GPU op of a timeline.
type Op struct {
	Kind          OpKind
	Name          string // kernel short name, copy direction, …
	Start, End    int64
	Device        DeviceID
	Context       ContextID
	Stream        StreamID
	CorrelationID int64
	GlobalPid     GlobalPid
	Bytes         int64 // memcpy and memset
	// HostMem is a copy's host-side memory kind: the source of a
	// host-to-device copy, the destination of a device-to-host one
	// (MemUnknown for other ops and where the export lacks the columns).
	HostMem MemKind
	// Launch is a kernel's launch configuration (zero for other ops, and
	// where the export lacks the columns).
	Launch KernelLaunch
}

// KernelLaunch is how a kernel was launched, as CUPTI recorded it: what
// decides how much of the GPU each of its blocks held, and so which
// kernels of other streams could run beside it.
type KernelLaunch struct {
	Grid, Block [3]int32
	// StaticShared and DynamicShared are bytes of shared memory per block.
	StaticShared, DynamicShared int32
	Registers                   int32 // per thread
}

// Blocks is the number of blocks in the grid (0: not recorded).
func (l KernelLaunch) Blocks() int64 {
	return int64(l.Grid[0]) * int64(l.Grid[1]) * int64(l.Grid[2])
}

// Threads is the number of threads in a block (0: not recorded).
func (l KernelLaunch) Threads() int64 {
	return int64(l.Block[0]) * int64(l.Block[1]) * int64(l.Block[2])
}

// SharedBytes is the shared memory a block used, static and dynamic.
func (l KernelLaunch) SharedBytes() int64 {
	return int64(l.StaticShared) + int64(l.DynamicShared)
}

// StreamWait is a cudaStreamWaitEvent: Stream waits for the work that
// RecordStream had enqueued before the record call RecordCorrelationID.
type StreamWait struct {
	GlobalPid           GlobalPid
	CorrelationID       int64 // of the wait call
	Stream              StreamID
	RecordStream        StreamID
	RecordCorrelationID int64
}

// Timeline reads every API call and GPU op that overlaps the window. The
// time filter runs in SQL.
func (x *Export) Timeline(ctx context.Context, window Interval) (*Timeline, error) {
	tls, err := x.Timelines(ctx, []Interval{window})
	if err != nil {
		return nil, err
	}
	return tls[0], nil
}

// Timelines reads the timelines of several windows, in the order given,
// with one scan of each table (an export has no index on time, so each
// scan reads the whole table): what Timeline reads for each window. A row
// that overlaps several windows is in each.
func (x *Export) Timelines(ctx context.Context, windows []Interval) ([]*Timeline, error) {
	tls := newTimelines(windows)
	conds := make([]string, len(windows))
	args := make([]any, 0, 2*len(windows))
	for i, w := range windows {
		conds[i] = `(start < ? AND "end" > ?)`
		args = append(args, w.End, w.Start)
	}
	overlap := []rowQuery{{where: "(" + strings.Join(conds, " OR ") + ")", args: args, window: -1}}
	rd := timelineRead{
		rows: func(_ context.Context, table string) ([]rowQuery, error) {
			if table == tableSync {
				return []rowQuery{{where: "1", window: -1}}, nil
			}
			return overlap, nil
		},
		events: func(ctx context.Context, _ []*Timeline) (*activity, error) {
			act := &activity{}
			return act, activityLoader{x.src}.loadEventRecords(ctx, act, &Stats{})
		},
	}
	return tls, timelineReader{x.src}.readTimelines(ctx, tls, rd)
}

func newTimelines(windows []Interval) []*Timeline {
	tls := make([]*Timeline, len(windows))
	for i, w := range windows {
		tls[i] = &Timeline{Window: w}
	}
	return tls
}

// callName is an API name as a timeline carries it: normalised and
// classified once per StringIds id, so every call of one API shares one
// string.
type callName struct {
	name string
	kind CallKind
}

func (tr timelineReader) timelineCalls(ctx context.Context, tls []*Timeline, rd timelineRead) error {
	nameIDs := map[int64]bool{}
	ids := make([][]int64, len(tls)) // per window, each call's nameId
	cols := []intCol{col("start"), col("end"), col("globalTid"), col("correlationId"), col("nameId"), colOr("eventClass", 0)}
	isCall := func(v []sql.NullInt64) bool { return v[5].Valid && (v[5].Int64 == 0 || v[5].Int64 == 1) }
	keepSQL := tr.Schema.col(tableRuntime, "eventClass", "0") + " IN (0, 1)"
	err := tr.scanQueries(ctx, "reading the timeline's API calls", tableRuntime, cols, isCall, keepSQL, rd, func(v []sql.NullInt64, window int) error {
		c := TimelineCall{Start: v[0].Int64, End: v[1].Int64, GlobalTid: GlobalTid(v[2].Int64), CorrelationID: intOr(v[3], -1)}
		nameIDs[v[4].Int64] = true
		eachWindow(tls, window, c.Start, c.End, func(k int) {
			tls[k].Calls = append(tls[k].Calls, c)
			ids[k] = append(ids[k], v[4].Int64)
		})
		return nil
	})
	if err != nil {
		return err
	}
	raw, err := tr.lookupStrings(ctx, nameIDs)
	if err != nil {
		return err
	}
	names := make(map[int64]callName, len(raw))
	for id := range nameIDs {
		n := NormalizeName(raw[id])
		names[id] = callName{n, ClassifyName(n)}
	}
	for k, tl := range tls {
		for i := range tl.Calls {
			n := names[ids[k][i]]
			tl.Calls[i].Name, tl.Calls[i].Kind = n.name, n.kind
		}
		ids[k] = nil
		sort.SliceStable(tl.Calls, func(i, j int) bool { return tl.Calls[i].Start < tl.Calls[j].Start })
	}
	return nil
}

func (tr timelineReader) timelineOps(ctx context.Context, tls []*Timeline, rd timelineRead) error {
	s := tr.Schema
	kernelName := "shortName"
	if !s.HasColumn(tableKernel, kernelName) {
		kernelName = "demangledName"
	}
	sources := []struct {
		table string
		kind  OpKind
	}{{tableKernel, OpKernel}, {tableMemcpy, OpMemcpy}, {tableMemset, OpMemset}, {tableGraphTrace, OpGraph}}
	nameIDs := map[int64]bool{}
	ids := make([][]int64, len(tls)) // per window, each op's name id; -1: named already
	for _, src := range sources {
		if !s.HasColumn(src.table, "start") || !s.HasColumn(src.table, "streamId") {
			continue
		}
		// A column read only from some tables is given a name no table
		// has ("-") elsewhere, so that it reads as its default.
		name, bytes, extra, launch, srcKind, dstKind := "-", "-", "-", "-", "-", "-"
		switch src.kind {
		case OpKernel:
			name, launch = kernelName, ""
		case OpMemcpy:
			bytes, extra, srcKind, dstKind = "bytes", "copyKind", "srcKind", "dstKind"
		case OpMemset:
			bytes = "bytes"
		}
		cols := []intCol{col("start"), col("end"), col("deviceId"), colOr("contextId", 0), col("streamId"), colOr("correlationId", 0),
			colOr("globalPid", 0), colOr(bytes, 0), col(name), col(extra), colOr(srcKind, int64(MemUnknown)), colOr(dstKind, int64(MemUnknown))}
		for _, c := range launchColumns {
			cols = append(cols, colOr(launch+c, 0))
		}
		err := tr.scanQueries(ctx, "reading the timeline's GPU ops", src.table, cols, nil, "", rd, func(v []sql.NullInt64, window int) error {
			op := Op{Kind: src.kind, Start: v[0].Int64, End: v[1].Int64, Device: DeviceID(v[2].Int64), Context: ContextID(v[3].Int64), Stream: StreamID(v[4].Int64),
				CorrelationID: v[5].Int64, GlobalPid: GlobalPid(v[6].Int64), Bytes: v[7].Int64, HostMem: MemUnknown, Launch: launchOf(v[12:])}
			nameID := int64(-1)
			switch src.kind {
			case OpKernel:
				if v[8].Valid {
					nameID = v[8].Int64
					nameIDs[nameID] = true
				}
			case OpMemcpy:
				dir := CopyKind(v[9].Int64)
				op.Name = copyKindName(dir)
				op.HostMem = hostMemOf(dir, v[10], v[11])
			default:
				op.Name = string(src.kind)
			}
			eachWindow(tls, window, op.Start, op.End, func(k int) {
				tls[k].Ops = append(tls[k].Ops, op)
				ids[k] = append(ids[k], nameID)
			})
			return nil
		})
		if err != nil {
			return err
		}
	}
	names, err := tr.lookupStrings(ctx, nameIDs)
	if err != nil {
		return err
	}
	for k, tl := range tls {
		for i, id := range ids[k] {
			if id >= 0 {
				tl.Ops[i].Name = names[id]
			}
		}
		ids[k] = nil
		sort.SliceStable(tl.Ops, func(i, j int) bool { return tl.Ops[i].Start < tl.Ops[j].Start })
	}
	return nil
}

// launchColumns are the CUPTI_ACTIVITY_KIND_KERNEL columns of a kernel's
// launch configuration, in the order launchOf reads them.
var launchColumns = []string{"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
	"staticSharedMemory", "dynamicSharedMemory", "registersPerThread"}

// launchOf reads the launchColumns; values out of int32's range (a
// corrupt row) read as 0.
func launchOf(v []sql.NullInt64) KernelLaunch {
	get := func(i int) int32 {
		if n := v[i].Int64; n > 0 && n <= math.MaxInt32 {
			return int32(n)
		}
		return 0
	}
	return KernelLaunch{Grid: [3]int32{get(0), get(1), get(2)}, Block: [3]int32{get(3), get(4), get(5)},
		StaticShared: get(6), DynamicShared: get(7), Registers: get(8)}
}

// timelineWaits links the windows' cudaStreamWaitEvent calls to the event
// records they wait for, through their synchronization rows.
func (tr timelineReader) timelineWaits(ctx context.Context, tls []*Timeline, rd timelineRead) error {
	want := map[callKey][]int{} // wait call -> the timelines that hold it
	isWait := map[string]bool{} // by name: baseName is a regexp
	for k, tl := range tls {
		for _, c := range tl.Calls {
			w, ok := isWait[c.Name]
			if !ok {
				b := baseName(c.Name)
				w = b == "cudaStreamWaitEvent" || b == "cuStreamWaitEvent"
				isWait[c.Name] = w
			}
			if w {
				key := callKey{int64(c.GlobalTid.Process()), c.CorrelationID}
				want[key] = append(want[key], k)
			}
		}
	}
	s := tr.Schema
	if len(want) == 0 || !s.HasColumn(tableSync, "correlationId") {
		return nil
	}
	act, err := rd.events(ctx, tls)
	if err != nil {
		return err
	}
	cols := []intCol{colOr("start", 0), col("correlationId"), colOr("globalPid", 0), col("streamId"), colOr("eventId", -1), colOr("eventSyncId", -1)}
	return tr.scanQueries(ctx, "reading stream waits", tableSync, cols, nil, "", rd, func(v []sql.NullInt64, window int) error {
		corr, gpid, stream, eventID, eventSyncID := v[1], v[2], v[3], v[4], v[5]
		k := callKey{gpid.Int64, corr.Int64}
		in := want[k]
		if len(in) == 0 {
			return nil
		}
		rec := syncRecord{stream: StreamID(stream.Int64), eventID: intOr(eventID, -1), eventSyncID: intOr(eventSyncID, -1)}
		if r, ok := act.eventRecordFor(GlobalPid(k.pid), rec, k.corr); ok {
			for _, w := range in {
				if window >= 0 && w != window {
					continue // another window's query reads its own
				}
				tls[w].Waits = append(tls[w].Waits, StreamWait{GlobalPid: GlobalPid(k.pid), CorrelationID: k.corr, Stream: rec.stream,
					RecordStream: r.stream, RecordCorrelationID: r.corr})
			}
		}
		return nil
	})
}

// hostMemOf is the host side's memory kind of a copy in direction dir
// from its source and destination kinds (MemUnknown where neither side is
// the host, or the column is missing).
func hostMemOf(dir CopyKind, src, dst sql.NullInt64) MemKind {
	pick := src
	switch normDirection(dir) {
	case CopyHtoD:
	case CopyDtoH:
		pick = dst
	default:
		return MemUnknown
	}
	if !pick.Valid {
		return MemUnknown
	}
	return MemKind(pick.Int64)
}

func copyKindName(k CopyKind) string {
	switch normDirection(k) {
	case CopyHtoD:
		return "memcpy HtoD"
	case CopyDtoH:
		return "memcpy DtoH"
	case CopyDtoD:
		return "memcpy DtoD"
	case CopyHtoH:
		return "memcpy HtoH"
	case CopyPtoP:
		return "memcpy PtoP"
	}
	return "memcpy"
}
