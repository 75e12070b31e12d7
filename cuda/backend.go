package cuda

import "time"

// gpuDevice is an opened GPU: the cgo build's driver-backed device, or a
// fake in tests. Its methods run on any goroutine.
type gpuDevice interface {
	identity() Identity
	// limits are the per-SM resources that size the spin's launches.
	limits() smLimits
	newSession(spec sessionSpec) (session, error)
	close() error
}

// sessionSpec sizes what a session allocates.
type sessionSpec struct {
	streams int
	events  int
	// timing: events can be timed (calibration); the replay's cannot,
	// which makes recording them cheaper.
	timing bool
	// copyBytes sizes the device and page-locked host buffers that
	// replayed copies and memsets use (0: none).
	copyBytes int64
	// stamps is the number of start/end stamp pairs in page-locked host
	// memory that stamped spins write (0: none).
	stamps int
}

// copyDir is a replayed copy's direction.
type copyDir uint8

// Copy directions.
const (
	dirDtoH copyDir = iota + 1
	dirHtoD
)

func (d copyDir) String() string {
	if d == dirHtoD {
		return "HtoD"
	}
	return "DtoH"
}

// session holds the streams, events and buffers of one replay or
// calibration. Every method but release must be called from an OS thread
// that bind made ready (runtime.LockOSThread first).
type session interface {
	// bind makes the device's context current on the calling OS thread.
	bind() error
	// spin launches the spin kernel for ns nanoseconds on a stream, shaped
	// as l (oneWarp: one block of one warp); stamp >= 0 makes it write its
	// start and end times to that stamp slot.
	spin(stream int, ns int64, l spinLaunch, stamp int) error
	// copy copies bytes between the device buffer and the page-locked
	// host buffer on a stream.
	copy(stream int, dir copyDir, bytes int64) error
	// memset sets bytes of the device buffer on a stream.
	memset(stream int, bytes int64) error
	record(event, stream int) error
	wait(stream, event int) error
	syncStream(stream int) error
	syncEvent(event int) error
	syncContext() error
	// elapsed is the GPU time between two timed events.
	elapsed(from, to int) (time.Duration, error)
	// stamp reads a stamp slot: the GPU's %globaltimer at a stamped
	// spin's start and end, 0 until written.
	stamp(slot int) (start, end uint64)
	clearStamps()
	// timerStep runs timer_step on a stream and returns the smallest step
	// of %globaltimer it saw (uses stamp slot 0).
	timerStep(stream int) (uint64, error)
	// memInfo returns the device memory free and in total.
	memInfo() (free, total int64, err error)
	// release frees everything the session holds, from any goroutine; it
	// may be called more than once.
	release() error
}
