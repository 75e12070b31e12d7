package trace

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// contextLoader reads the context of the run: the streams' flags, the GPUs, and
// the names of processes and threads. It reads through the export's source.
type contextLoader struct{ *source }

// streamKey identifies a stream: stream ids are per process and context.
type streamKey struct{ pid, ctx, stream int64 }

// streamInfo holds what TARGET_INFO_CUDA_STREAM and the context tables say
// of the streams: which are legacy NULL streams and which non-blocking.
type streamInfo struct {
	// nonBlocking marks streams created non-blocking, by (pid, stream):
	// stream ids are unique within a process.
	nonBlocking map[[2]int64]bool
	legacy      map[streamKey]bool
	// legacyByPid marks null streams by (pid, stream) for rows without a
	// context id.
	legacyByPid map[[2]int64]bool
}

// isLegacy reports whether the stream is a legacy NULL stream of the
// process (its operating-system pid) and context.
func (si *streamInfo) isLegacy(pid int64, ctx ContextID, stream StreamID) bool {
	return si.legacy[streamKey{pid, int64(ctx), int64(stream)}] || si.legacyByPid[[2]int64{pid, int64(stream)}]
}

// loadStreams reads stream flags (1 default, 2 non-blocking, 3 null) and the
// contexts' null stream ids.
func (ld contextLoader) loadStreams(ctx context.Context) (*streamInfo, error) {
	si := &streamInfo{nonBlocking: map[[2]int64]bool{}, legacy: map[streamKey]bool{}, legacyByPid: map[[2]int64]bool{}}
	s := ld.Schema
	if s.HasColumn(tableStream, "flag") && s.HasColumn(tableStream, "processId") {
		q := fmt.Sprintf(`SELECT streamId, processId, contextId, flag FROM %s`, s.Name(tableStream))
		v, dest := nullInts(4)
		_, err := ld.scanRows(ctx, "reading streams", q, dest, func() error {
			k := streamKey{v[1].Int64, v[2].Int64, v[0].Int64}
			switch v[3].Int64 {
			case 2:
				si.nonBlocking[[2]int64{k.pid, k.stream}] = true
			case 3:
				si.legacy[k] = true
				si.legacyByPid[[2]int64{k.pid, k.stream}] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, t := range []struct{ table, col string }{{tableContext, "nullStreamId"}, {tableNullStream, "streamId"}} {
		if !s.HasColumn(t.table, t.col) || !s.HasColumn(t.table, "processId") || !s.HasColumn(t.table, "contextId") {
			continue
		}
		q := fmt.Sprintf(`SELECT %s, processId, contextId FROM %s`, t.col, s.Name(t.table))
		v, dest := nullInts(3)
		_, err := ld.scanRows(ctx, "reading CUDA contexts", q, dest, func() error {
			si.legacy[streamKey{v[1].Int64, v[2].Int64, v[0].Int64}] = true
			si.legacyByPid[[2]int64{v[1].Int64, v[0].Int64}] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return si, nil
}

// loadGPUs reads TARGET_INFO_GPU, whose columns changed across versions
// (deviceId before 2021, id and cuDevice after).
func (ld contextLoader) loadGPUs(ctx context.Context) ([]GPU, error) {
	s := ld.Schema
	if !s.HasColumn(tableGPU, "name") {
		return nil, nil
	}
	idCol := s.col(tableGPU, "id", s.col(tableGPU, "deviceId", "0"))
	q := fmt.Sprintf(`SELECT %s, %s, name, %s, %s, %s, %s FROM %s ORDER BY 1`, idCol,
		s.col(tableGPU, "cuDevice", idCol), s.col(tableGPU, "smCount", "0"),
		s.col(tableGPU, "computeMajor", "0"), s.col(tableGPU, "computeMinor", "0"),
		s.col(tableGPU, "busLocation", "''"), s.Name(tableGPU))
	var gpus []GPU
	var id, cu, sm, major, minor sql.NullInt64
	var name, bus sql.NullString
	_, err := ld.scanRows(ctx, "reading GPUs", q, []any{&id, &cu, &name, &sm, &major, &minor, &bus}, func() error {
		g := GPU{ID: id.Int64, CUDAID: DeviceID(cu.Int64), Name: name.String, SMCount: sm.Int64, BusLabel: bus.String}
		if major.Int64 > 0 {
			g.Compute = fmt.Sprintf("%d.%d", major.Int64, minor.Int64)
		}
		gpus = append(gpus, g)
		return nil
	})
	return gpus, err
}

// loadProcessesAndThreads names the processes and threads of the syncs.
func (ld contextLoader) loadProcessesAndThreads(ctx context.Context, tids map[GlobalTid]bool) (map[GlobalPid]Process, map[GlobalTid]Thread, error) {
	s := ld.Schema
	procs := map[GlobalPid]Process{}
	threads := map[GlobalTid]Thread{}
	for tid := range tids {
		threads[tid] = Thread{GlobalTid: tid, Pid: tid.Pid(), Tid: tid.Tid()}
		procs[tid.Process()] = Process{GlobalPid: tid.Process(), Pid: tid.Pid()}
	}
	if s.HasColumn(tableProcesses, "globalPid") && s.HasColumn(tableProcesses, "name") && len(procs) > 0 {
		var gp sql.NullInt64
		var name sql.NullString
		q := fmt.Sprintf(`SELECT globalPid, name FROM %s`, s.Name(tableProcesses))
		_, err := ld.scanRows(ctx, "reading processes", q, []any{&gp, &name}, func() error {
			if p, ok := procs[GlobalPid(gp.Int64)]; ok && name.Valid {
				p.Name = name.String
				procs[p.GlobalPid] = p
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	if s.HasColumn(tableThreadNames, "globalTid") && s.HasColumn(tableThreadNames, "nameId") && len(tids) > 0 {
		nameIDs := map[GlobalTid]int64{}
		var gt, nid sql.NullInt64
		q := fmt.Sprintf(`SELECT globalTid, nameId FROM %s`, s.Name(tableThreadNames))
		_, err := ld.scanRows(ctx, "reading thread names", q, []any{&gt, &nid}, func() error {
			if tid := GlobalTid(gt.Int64); tids[tid] {
				nameIDs[tid] = nid.Int64
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		want := map[int64]bool{}
		for _, id := range nameIDs {
			want[id] = true
		}
		strs, err := ld.lookupStrings(ctx, want)
		if err != nil {
			return nil, nil, err
		}
		for tid, id := range nameIDs {
			t := threads[tid]
			t.Name = strings.TrimSpace(strs[id])
			threads[tid] = t
		}
	}
	return procs, threads, nil
}
