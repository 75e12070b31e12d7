#!/usr/bin/env bash
# Speed and memory of nsyssync on large exports made by replicating real
# ones (cmd/nsysgen), next to the floor: the sqlite3 shell scanning the
# same tables. Prints one Markdown table row per export, ready for
# docs/performance.md.
#
# Usage: scripts/bench.sh [GB ...]   (default: 1; exports are cached in $TMPDIR)
#
# Three shapes, because the cost depends on what an export holds:
#   kernel-heavy  CuPy (corpus cupy-gtls: 30 syncs in 23k kernels)
#   training      PyTorch training loop (corpus pytorch-aiprofiler-train-baseline:
#                 159 syncs in 9.3k kernels)
#   sync-heavy    fixtures/syncs_lean (43 syncs in 67 kernels): the worst case
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1)
TMP=${TMPDIR:-/tmp}
CORPUS=../shared/corpus
go build -o bin/nsyssync ./cmd/nsyssync
go build -o bin/nsysgen ./cmd/nsysgen
command -v /usr/bin/time >/dev/null || { echo "bench: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "bench: needs sqlite3 (apt-get install sqlite3)" >&2; exit 1; }

shapes=(
  "kernel-heavy:$CORPUS/cupy-gtls_rtx3060_nsys2023.1.sqlite"
  "training:$CORPUS/pytorch-aiprofiler-train-baseline_reexport2025.3.sqlite"
  "sync-heavy:fixtures/syncs_lean.sqlite.gz"
)

# The machine is shared and one run varies by a third: each command runs
# RUNS times in a row, and the table gives the median time (with the
# range) and the largest peak RSS.
RUNS=${BENCHRUNS:-3}

# timed OUT CMD...: runs the command RUNS times with its output in OUT,
# prints "MEDIAN_SECONDS RANGE PEAK_MIB".
timed() {
  local out=$1 i
  shift
  : >"$out.times"
  for ((i = 0; i < RUNS; i++)); do
    /usr/bin/time -o "$out.time" -f "%e %M" "$@" >"$out" 2>/dev/null
    cat "$out.time" >>"$out.times"
  done
  sort -n "$out.times" | awk '{t[NR]=$1; if ($2>m) m=$2} END {
    med = (NR%2) ? t[(NR+1)/2] : (t[NR/2]+t[NR/2+1])/2
    printf "%.1f %.1f–%.1f %.0f", med, t[1], t[NR], m/1024}'
}

# floor FILE: seconds for sqlite3 to run the scans the inventory runs.
floor() {
  local f=$1 ids start end
  ids=$(sqlite3 "$f" "SELECT group_concat(id) FROM StringIds WHERE value GLOB 'cu*Synchronize*' OR value GLOB 'cu*Memcpy*' OR value GLOB 'cu*Memset*' OR value GLOB 'cu*Free*'")
  start=$(date +%s.%N)
  sqlite3 "$f" "SELECT count(*), max(start), max(\"end\"), max(globalTid), max(correlationId) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN ($ids)" >/dev/null
  for t in CUPTI_ACTIVITY_KIND_KERNEL CUPTI_ACTIVITY_KIND_MEMCPY CUPTI_ACTIVITY_KIND_SYNCHRONIZATION; do
    sqlite3 "$f" "SELECT count(*), max(start), max(\"end\"), max(deviceId*4294967296+streamId), max(correlationId), max(globalPid) FROM $t" >/dev/null 2>&1 || true
  done
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}'
}

rows() {
  local n=0 t c
  for t in CUPTI_ACTIVITY_KIND_RUNTIME CUPTI_ACTIVITY_KIND_KERNEL CUPTI_ACTIVITY_KIND_MEMCPY CUPTI_ACTIVITY_KIND_MEMSET CUPTI_ACTIVITY_KIND_SYNCHRONIZATION NVTX_EVENTS; do
    c=$(sqlite3 "$1" "SELECT count(*) FROM $t" 2>/dev/null || echo 0)
    n=$((n + c))
  done
  echo "$n"
}

echo "commit $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'), $(nproc) CPUs, $(go version | cut -d' ' -f3)"
echo
echo "$RUNS runs each: median (range)"
echo
echo "| export | size | rows read | syncs | inventory (\`--no-estimate\`) | rows/s | peak RSS | full \`analyze\` | peak RSS | \`sqlite3\` floor | inventory / floor |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for gb in "${SIZES[@]}"; do
  for shape in "${shapes[@]}"; do
    name=${shape%%:*} src=${shape#*:}
    [ -f "$src" ] || { echo "bench: $src absent, $name skipped" >&2; continue; }
    base=$(basename "${src%.gz}" .sqlite)
    f="$TMP/nsyssync-bench-$base-${gb}GB.sqlite"
    if [ ! -s "$f" ]; then
      plain=$src
      if [ "${src%.gz}" != "$src" ]; then # nsysgen reads a plain SQLite file
        plain="$TMP/nsyssync-bench-$base.sqlite"
        gzip -dc "$src" >"$plain"
      fi
      bin/nsysgen -q -src "$plain" -out "$f" -size "${gb}GiB"
      [ "$plain" = "$src" ] || rm -f "$plain"
    fi
    n=$(rows "$f")
    out="$TMP/nsyssync-bench-out.json"
    read -r inv_s inv_r inv_m <<<"$(timed "$out" bin/nsyssync analyze --no-estimate --format json "$f")"
    syncs=$(grep -m1 -o '"syncs": *[0-9]*' "$out" | grep -o '[0-9]*$')
    read -r full_s full_r full_m <<<"$(timed "$out" bin/nsyssync analyze --format json "$f")"
    rm -f "$out" "$out.time" "$out.times"
    fl=$(floor "$f")
    printf "| %s | %s GiB | %s M | %s | %s s (%s) | %s M/s | %s MiB | %s s (%s) | %s MiB | %s s | %s× |\n" \
      "$name" "$gb" "$(awk -v n="$n" 'BEGIN{printf "%.1f", n/1e6}')" "$syncs" "$inv_s" "$inv_r" \
      "$(awk -v n="$n" -v s="$inv_s" 'BEGIN{printf "%.1f", n/1e6/s}')" "$inv_m" "$full_s" "$full_r" "$full_m" "$fl" \
      "$(awk -v a="$inv_s" -v b="$fl" 'BEGIN{printf "%.2f", a/b}')"
  done
done
