package whatif

import "github.com/nsyssync/nsyssync/trace"

// The rewrite the report recommends for a pageable host-to-device copy is
// the source allocated in pinned memory and copied with non_blocking=True:
// the host's staging copy goes (the call costs what a launch costs,
// AsyncCopyCallNs) and the copy itself runs at pinned speed. Pageable
// copies of a few MiB and more are recorded several times slower than
// pinned ones of the same size (the driver stages them through a small
// pinned buffer, chunk by chunk: Staged); smaller ones are recorded at
// about pinned speed already (measured on an H100, docs/estimator.md,
// "Rewrite models"), so the rule below changes only the staged ones.

// PinnedCopyLatencyNs is the fixed part of a pinned copy's GPU time, on
// top of its bytes at the link's speed (H100: a 256 KiB pinned copy takes
// 7.6 µs, 4.8 µs of it for its bytes at 55 GB/s).
const PinnedCopyLatencyNs = 2_000

// MinPinnedSampleBytes is the smallest pinned copy whose speed is read off
// a trace: below it the fixed latency dominates.
const MinPinnedSampleBytes = 256 << 10

// StagedCopyMinBytes is the size from which the driver stages a pageable
// copy through its pinned buffer chunk by chunk, recorded several times
// slower than a pinned copy of its bytes; below it a pageable copy's
// recorded GPU time is about a pinned one's (H100, fixtures/copyspeed: 1
// MiB to the device in 21.5 µs pageable, 24.6 µs pinned; 4 MiB in 257 µs
// against 192 µs, 16 MiB in 1.23 ms against 309 µs).
const StagedCopyMinBytes = 2 << 20

// Staged reports whether a pageable copy of the given bytes is staged
// (StagedCopyMinBytes).
func Staged(bytes int64) bool { return bytes >= StagedCopyMinBytes }

// PinnedCopyNs is the GPU time of a pageable host-to-device copy of the
// given bytes recorded as taking recordedNs, made from pinned memory: for
// a staged one, the fixed latency plus the bytes at nsPerMiB, never more
// than recorded; a smaller one keeps its recorded time, as does any copy
// where nsPerMiB <= 0 (unknown).
func PinnedCopyNs(bytes, recordedNs, nsPerMiB int64) int64 {
	if nsPerMiB <= 0 || !Staged(bytes) {
		return recordedNs
	}
	ns := PinnedCopyLatencyNs + int64(float64(bytes)*float64(nsPerMiB)/float64(1<<20))
	return min(recordedNs, ns)
}

// PinnedSpeedSample is one pinned host-to-device copy's time per MiB, less
// the fixed latency, for the copies a trace can tell the pinned speed
// from (ok false for any other op).
func PinnedSpeedSample(op *trace.Op) (nsPerMiB int64, ok bool) {
	if op.Kind != trace.OpMemcpy || op.Name != "memcpy HtoD" || op.HostMem != trace.MemPinned || op.Bytes < MinPinnedSampleBytes {
		return 0, false
	}
	d := op.End - op.Start - PinnedCopyLatencyNs
	if d <= 0 {
		return 0, false
	}
	return int64(float64(d) * float64(1<<20) / float64(op.Bytes)), true
}

// RewritesToPinned reports whether removing sync s turns its copy into a
// pinned asynchronous one: a host-to-device copy from pageable memory.
func RewritesToPinned(s *trace.Sync) bool {
	return CopiesToDevice(s) && s.Copy.SrcKind == trace.MemPageable
}
