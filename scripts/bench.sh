#!/usr/bin/env bash
# Inventory speed on large exports made by replicating real ones: the Go
# benchmark (seconds, rows a second), the CLI's wall time and peak memory,
# and the floor — the sqlite3 shell scanning the same tables the same way.
# Usage: scripts/bench.sh [GB]   (default 1; exports are cached in $TMPDIR)
set -euo pipefail
cd "$(dirname "$0")/.."
GB=${1:-${NSYSSYNC_BENCH_GB:-1}}
TMP=${TMPDIR:-/tmp}
go build -o bin/nsyssync ./cmd/nsyssync
go build -o bin/nsysgen ./cmd/nsysgen

echo "== go test -bench (NSYSSYNC_BENCH_GB=$GB)"
NSYSSYNC_BENCH_GB=$GB go test -run '^$' -bench Inventory -benchtime 1x ./trace/ | grep -E '^Benchmark|generated'

for src in syncs_lean cupy-gtls_rtx3060_nsys2023.1; do
  f="$TMP/nsyssync-bench-$src-${GB}GB.sqlite"
  [ -f "$f" ] || continue
  echo "== $f ($(du -h "$f" | cut -f1))"
  if command -v /usr/bin/time >/dev/null; then
    /usr/bin/time -f "nsyssync analyze: %e s wall, %M KB peak RSS" bin/nsyssync analyze --format json "$f" >/dev/null
  fi
  if command -v sqlite3 >/dev/null; then
    ids=$(sqlite3 "$f" "SELECT group_concat(id) FROM StringIds WHERE value GLOB 'cu*Synchronize*' OR value GLOB 'cu*Memcpy*' OR value GLOB 'cu*Memset*' OR value GLOB 'cu*Free*'")
    start=$(date +%s.%N)
    sqlite3 "$f" "SELECT count(*), sum(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN ($ids)" >/dev/null
    for t in CUPTI_ACTIVITY_KIND_KERNEL CUPTI_ACTIVITY_KIND_MEMCPY CUPTI_ACTIVITY_KIND_SYNCHRONIZATION; do
      sqlite3 "$f" "SELECT count(*), max(start), max(\"end\"), max(deviceId*4294967296+streamId), max(correlationId), max(globalPid) FROM $t" >/dev/null 2>&1 || true
    done
    end=$(date +%s.%N)
    echo "sqlite3 floor (same tables, one core): $(echo "$end - $start" | bc) s"
  fi
done
