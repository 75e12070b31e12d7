// Package tracegen makes large, realistic Nsight Systems SQLite exports for
// benchmarks by replicating a real, small one, as if the profiled program had
// run its captured work again and again.
//
//	res, err := tracegen.Generate(ctx, tracegen.Options{
//		Source: "small.sqlite", Output: "big.sqlite", TargetBytes: 1e9,
//	})
//
// Generate copies the source file byte for byte to the output (the source is
// only read), opens the copy read-write with journal_mode=OFF and
// synchronous=OFF, and appends copies k = 1, 2, … of the time-varying rows
// with INSERT … SELECT statements run by SQLite, one statement per table
// and copy; no row passes through Go.
//
// What is replicated: the rows of CUPTI_ACTIVITY_KIND_RUNTIME, _KERNEL,
// _MEMCPY, _MEMSET, _SYNCHRONIZATION, _CUDA_EVENT, _GRAPH_TRACE,
// CUDA_CALLCHAINS and NVTX_EVENTS that exist in the source. NVTX rows that
// define rather than record (eventType 75/76 domain create/destroy, and also
// 33/39/64/72-74/97-99 category, thread, NVTXT and CUDA-object naming) are
// kept once, so each domainId still resolves to one NvtxDomainCreate row per
// process. Every other table (StringIds, ThreadNames, PROCESSES, OSRT_API,
// TARGET_INFO_*, …) is left untouched, and no index is added. Columns are
// found with pragma table_xinfo, so exports from nsys 2020 to 2025 work
// (with or without eventClass, callchainId, eventSyncId, greenContextId,
// CUDA_EVENT.timestamp, user-added columns); a missing or empty table is
// skipped. An INTEGER PRIMARY KEY (NVTX_EVENTS.eventId in newer schemas) is
// left for SQLite to assign.
//
// What copy k changes:
//
//   - start, end, timestamp and every column whose DDL comment calls it a
//     timestamp (KERNEL.qmd*Done) move by k × Period, where Period is the
//     span of all replicated time values (min to max over every replicated
//     table, NVTX included: NVTX ranges often start before the first CUDA
//     call) plus 1 ms. Copies therefore never overlap, in any table. NULL
//     stays NULL (NVTX marks have no end) and a 0 in timestamp-like columns
//     ("not collected") stays 0.
//   - correlationId (in every replicated table), eventSyncId, NVTX rangeId,
//     RUNTIME.callchainId and CUDA_CALLCHAINS.id move by k × (max id + 1);
//     one step per kind of id over all tables, so API↔GPU, sync↔event and
//     call↔callchain joins stay within their copy, and eventClass-67
//     backtrace twins stay twins. "None" values are kept: correlationId and
//     eventSyncId 0, negative or 0xFFFFFFFF (CUPTI's invalid value), and a
//     NULL callchainId (0 is a valid callchain id and is shifted).
//
// Strategy: the rows to replicate are first copied to TEMP tables (the
// snapshot), so each copy reads the original values, the shifts are exact
// (no copy is made from a copy, so a shifted id can never be mistaken for a
// "none" value) and no INSERT reads the table it writes (which would make
// SQLite materialize the SELECT). Copies are added table by table in
// batches of 64 copies per transaction, so each table's new pages lie
// together in the file, as in a real export. With Options.Copies the count
// is exact. With Options.TargetBytes, copies are added in rounds (one copy,
// then half of the estimated rest, then 90% of the rest, …, then one by
// one) because a copy grows with k as shifted integers need longer varints
// (+12% at copy 700 of a 0.27 s trace); the output is the smallest whole
// number of copies whose file reaches the target. No VACUUM is run: nothing
// is deleted, pages are already filled by appends, and a VACUUM could take
// the file below the target.
//
// Limits: a shifted id may by chance equal 0xFFFFFFFF after about 4e9 /
// (max id + 1) copies (353 000 copies of a trace with 12 000 correlation
// ids); Generate refuses copy counts that would overflow 64-bit times or
// ids; a WITHOUT ROWID table (which nsys does not write) is refused.
//
// Measured on the 2-core development machine (go1.26, modernc.org/sqlite
// v1.61.1), source cuda-hungarian-devsync_2xrtx3090_nsys2025.5.sqlite
// (2.15 MB; 11 923 RUNTIME, 6 434 KERNEL, 5 448 SYNCHRONIZATION rows):
//
//	$ time nsysgen -src cuda-hungarian-….sqlite -out /tmp/h1g.sqlite -size 1GB
//	/tmp/h1g.sqlite: 716 copies, 17067765 rows added, 1001123840 bytes, period 271441079 ns
//	real 0m29.3s  user 0m26.6s  sys 0m2.3s
//
// (a second run under /usr/bin/time -v: 26.9 s wall, 25.0 s user, peak RSS
// 145 MB), about 600 000 rows inserted a second, CPU-bound in SQLite's VM
// (the pure-Go SQLite runs on one core); the output holds 8.5 M RUNTIME,
// 4.6 M KERNEL and 3.9 M SYNCHRONIZATION rows over 194 s of trace time.
package tracegen
