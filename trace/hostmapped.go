package trace

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// hostMappedAPIs are the calls that show a process using memory the host
// and the device both reach without a copy call: managed memory, and host
// memory whose device address the program asks for. cudaHostAlloc,
// cuMemHostAlloc and cudaHostRegister are not among them: the trace does
// not record their flags, and most programs use such memory only as the
// pinned end of copies (PyTorch's pin_memory, NVHPC's and UCX's staging
// buffers).
var hostMappedAPIs = []string{"cudaMallocManaged", "cuMemAllocManaged", "cudaHostGetDevicePointer", "cuMemHostGetDevicePointer"}

// isHostMappedName says whether a runtime or driver API name (with its
// version suffix) is one of hostMappedAPIs.
func isHostMappedName(raw string) bool {
	for _, p := range hostMappedAPIs {
		if raw == p || strings.HasPrefix(raw, p+"_") {
			return true
		}
	}
	return false
}

// hostMapped collects, per process (globalPid), the first evidence that
// it uses memory the host reads without a copy call: a hostMappedAPIs
// call, or unified-memory migrations in its memcpy activity (copyKind 11,
// 12: managed memory, a __managed__ variable's included, moving between
// host and device) or a memset of managed memory.
type hostMapped map[GlobalPid]string

func (h hostMapped) note(pid GlobalPid, why string) {
	if _, ok := h[pid]; !ok {
		h[pid] = why
	}
}

// loadHostMappedCalls adds to h the processes that call one of
// hostMappedAPIs (the call, when there is one, is the evidence given): a
// scan of the runtime table, made only when StringIds names one.
func (ld activityLoader) loadHostMappedCalls(ctx context.Context, h hostMapped) error {
	s := ld.Schema
	if !s.HasColumn(tableStrings, "value") || !s.HasColumn(tableRuntime, "nameId") || !s.HasColumn(tableRuntime, "globalTid") {
		return nil
	}
	var id sql.NullInt64
	var val sql.NullString
	names := map[int64]string{}
	q := fmt.Sprintf(`SELECT id, value FROM %s WHERE value GLOB 'cu*Managed*' OR value GLOB 'cu*HostGetDevicePointer*'`, s.Name(tableStrings))
	if _, err := ld.scanRows(ctx, "reading mapped-memory API names", q, []any{&id, &val}, func() error {
		if isHostMappedName(val.String) {
			names[id.Int64] = NormalizeName(val.String)
		}
		return nil
	}); err != nil {
		return err
	}
	if len(names) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(names))
	for k := range names {
		ids = append(ids, k)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	// A call says more than the activity it leaves: it replaces it.
	called := map[GlobalPid]bool{}
	var tid, nameID sql.NullInt64
	q = fmt.Sprintf(`SELECT globalTid, nameId FROM %s WHERE nameId IN (%s) GROUP BY globalTid >> 24, nameId`, s.Name(tableRuntime), inList(ids))
	_, err := ld.scanRows(ctx, "reading mapped-memory calls", q, []any{&tid, &nameID}, func() error {
		if pid := GlobalTid(tid.Int64).Process(); !called[pid] {
			called[pid], h[pid] = true, "it calls "+names[nameID.Int64]
		}
		return nil
	})
	return err
}
