package trace

import (
	"context"
	"fmt"
	"strings"
)

// Host functions: a program may enqueue a host function on a stream
// (cuLaunchHostFunc, cudaLaunchHostFunc) and wait on the host for it to
// run, with a condition variable or a future instead of a CUDA call. JAX
// and XLA wait so for float(), block_until_ready() and device_get()
// (docs/groundtruth-nonpytorch.md): the CUDA trace records the launch of
// the host function but no wait. Where a region holds such launches, the
// report says that waits on them are not among its syncs, rather than
// letting "no host syncs" read as "the host never waited".

// isHostFuncName reports whether an API name launches a host function.
func isHostFuncName(raw string) bool {
	return strings.HasPrefix(raw, "cuLaunchHostFunc") || strings.HasPrefix(raw, "cudaLaunchHostFunc")
}

// countHostFuncs counts the host-function launches (by their StringIds
// ids) that start inside the region, each call once: a backtrace's twin
// row (eventClass 67) and a repeated row of an export without eventClass
// are the same call (loadCalls reads them so too).
func (ld callLoader) countHostFuncs(ctx context.Context, ids []int64, r Region) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	class := "0"
	if ld.Schema.HasColumn(tableRuntime, "eventClass") {
		class = "eventClass"
	}
	q := fmt.Sprintf(`SELECT start, globalTid, correlationId FROM %s WHERE nameId IN (%s) AND %s IN (0, 1)`,
		ld.Schema.Name(tableRuntime), inList(ids), class)
	v, dest := nullInts(3)
	seen := map[tidCorr]bool{}
	var n int64
	_, err := ld.scanRows(ctx, "reading host-function launches", q, dest, func() error {
		key := tidCorr{GlobalTid(v[1].Int64), intOr(v[2], -1)}
		if !v[0].Valid || !r.Contains(v[0].Int64) || (key.corr >= 0 && seen[key]) {
			return nil
		}
		seen[key] = true
		n++
		return nil
	})
	return n, err
}

// hostFuncWarning is the report's note on a region that launches n host
// functions beside its syncs ("" when there is nothing to say).
func hostFuncWarning(n int64, syncs int) string {
	if n == 0 {
		return ""
	}
	head := fmt.Sprintf("no host sync in the region, but %d host-function launches (cuLaunchHostFunc)", n)
	if syncs > 0 {
		head = fmt.Sprintf("besides its %d syncs, the region holds %d host-function launches (cuLaunchHostFunc)", syncs, n)
	}
	return head + ": a program may wait on those on the host (JAX/XLA does for float(), block_until_ready() and device_get()), " +
		"which a CUDA trace does not record, so such waits are not listed here"
}
