package trace

import "math"

// gpuSpan is one goroutine's count of the ops and their time span,
// padded to a cache line of its own: every op updates it, and spans of
// two cores side by side would make each update a cache miss.
type gpuSpan struct {
	ops        int64
	start, end int64
	// first: each process's first kernel (or graph launch) per device,
	// a short list searched in order (few processes and devices a trace).
	first []firstKernel
	_     [16]byte
}

// firstKernel is the start of a process's first kernel on a device.
type firstKernel struct {
	key   ProcessDevice
	start int64
}

func newGPUSpan() gpuSpan { return gpuSpan{start: math.MaxInt64, end: math.MinInt64} }

func (a *gpuSpan) merge(b gpuSpan) {
	a.ops += b.ops
	a.start, a.end = min(a.start, b.start), max(a.end, b.end)
	for _, f := range b.first {
		a.noteKernel(f.key, f.start)
	}
}

// noteKernel keeps the earliest kernel start of the process on the device.
func (a *gpuSpan) noteKernel(key ProcessDevice, start int64) {
	for i := range a.first {
		if a.first[i].key == key {
			a.first[i].start = min(a.first[i].start, start)
			return
		}
	}
	a.first = append(a.first, firstKernel{key, start})
}

// firstKernels returns the span's first kernels as a map.
func (a *gpuSpan) firstKernels() map[ProcessDevice]int64 {
	out := make(map[ProcessDevice]int64, len(a.first))
	for _, f := range a.first {
		out[f.key] = f.start
	}
	return out
}
