//go:build cgo

package cuda

/*
#include "nsd_cuda.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// cudaGPU is a GPU opened through the driver: its primary context and the
// loaded spin module.
type cudaGPU struct {
	drv    *driver
	dev    C.CUdevice
	ctx    C.CUcontext
	mod    C.CUmodule
	spinFn C.CUfunction
	probe  C.CUfunction
	id     Identity
	lim    smLimits
	once   sync.Once
}

// openGPU loads the driver, retains the primary context of the device
// with the given ordinal and loads the PTX.
func openGPU(ordinal int, ptx []byte) (gpuDevice, error) {
	drv, err := openDriver()
	if err != nil {
		return nil, err
	}
	g := &cudaGPU{drv: drv}
	if err := g.open(ordinal, ptx); err != nil {
		g.close()
		return nil, err
	}
	return g, nil
}

func (g *cudaGPU) open(ordinal int, ptx []byte) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := g.drv
	if err := d.check(C.nsd_init(d.c), "cuInit"); err != nil {
		return err
	}
	var n C.int
	if err := d.check(C.nsd_device_count(d.c, &n), "cuDeviceGetCount"); err != nil {
		return err
	}
	if n == 0 {
		return ErrNoGPU
	}
	if ordinal < 0 || ordinal >= int(n) {
		return fmt.Errorf("%w: device %d asked for, %d present", ErrNoGPU, ordinal, int(n))
	}
	var dev C.CUdevice
	if err := d.check(C.nsd_device_get(d.c, &dev, C.int(ordinal)), "cuDeviceGet"); err != nil {
		return err
	}
	g.dev = dev
	var ver C.int
	if err := d.check(C.nsd_driver_version(d.c, &ver), "cuDriverGetVersion"); err != nil {
		return err
	}
	var name, bus [128]C.char
	if err := d.check(C.nsd_device_name(d.c, &name[0], C.int(len(name)), g.dev), "cuDeviceGetName"); err != nil {
		return err
	}
	if err := d.check(C.nsd_device_bus_id(d.c, &bus[0], C.int(len(bus)), g.dev), "cuDeviceGetPCIBusId"); err != nil {
		return err
	}
	g.id = Identity{Name: C.GoString(&name[0]), BusID: C.GoString(&bus[0]), Ordinal: ordinal, CUDA: int(ver)}
	var ctx C.CUcontext
	if err := d.check(C.nsd_ctx_retain(d.c, &ctx, g.dev), "cuDevicePrimaryCtxRetain"); err != nil {
		return err
	}
	g.ctx = ctx
	if err := d.check(C.nsd_ctx_set(d.c, g.ctx), "cuCtxSetCurrent"); err != nil {
		return err
	}
	image := C.CBytes(append(append([]byte(nil), ptx...), 0))
	defer C.free(image)
	var mod C.CUmodule
	if err := d.check(C.nsd_module_load(d.c, &mod, image), "cuModuleLoadData"); err != nil {
		return moduleHint(err)
	}
	g.mod = mod
	for _, fn := range []struct {
		name string
		dst  *C.CUfunction
	}{{"spin", &g.spinFn}, {"timer_step", &g.probe}} {
		// The driver writes to a local: cgo forbids handing C a pointer
		// into a Go struct that holds Go pointers.
		var f C.CUfunction
		cname := C.CString(fn.name)
		err := d.check(C.nsd_module_function(d.c, &f, g.mod, cname), "cuModuleGetFunction("+fn.name+")")
		C.free(unsafe.Pointer(cname))
		if err != nil {
			return err
		}
		*fn.dst = f
	}
	return g.readLimits()
}

func (g *cudaGPU) identity() Identity { return g.id }

func (g *cudaGPU) limits() smLimits { return g.lim }

// close unloads the module and releases the primary context; it may be
// called more than once.
func (g *cudaGPU) close() error {
	var err error
	g.once.Do(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		d := g.drv
		if g.ctx != nil {
			err = d.check(C.nsd_ctx_set(d.c, g.ctx), "cuCtxSetCurrent")
		}
		if g.mod != nil {
			err = errors.Join(err, d.check(C.nsd_module_unload(d.c, g.mod), "cuModuleUnload"))
		}
		if g.ctx != nil {
			err = errors.Join(err, d.check(C.nsd_ctx_release(d.c, g.dev), "cuDevicePrimaryCtxRelease"))
		}
		d.close()
	})
	return err
}

// cudaSession is a session on a cudaGPU.
type cudaSession struct {
	g        *cudaGPU
	streams  []C.CUstream
	events   []C.CUevent
	devBuf   C.CUdeviceptr
	slots    C.CUdeviceptr  // per stream, the two words of a spin of several blocks
	pinned   unsafe.Pointer // page-locked copy buffer
	stamps   unsafe.Pointer // page-locked stamp pairs
	nStamps  int
	bytes    int64
	released bool
}

func (g *cudaGPU) newSession(spec sessionSpec) (session, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s := &cudaSession{g: g}
	if err := s.allocate(spec); err != nil {
		return nil, errors.Join(err, s.release())
	}
	return s, nil
}

func (s *cudaSession) allocate(spec sessionSpec) error {
	d := s.g.drv
	if err := s.bind(); err != nil {
		return err
	}
	for range spec.streams {
		var st C.CUstream
		if err := d.check(C.nsd_stream_create(d.c, &st), "cuStreamCreate"); err != nil {
			return err
		}
		s.streams = append(s.streams, st)
	}
	if spec.streams > 0 {
		n := C.size_t(16 * spec.streams)
		var slots C.CUdeviceptr
		if err := d.check(C.nsd_mem_alloc(d.c, &slots, n), "cuMemAlloc"); err != nil {
			return err
		}
		s.slots = slots
		if err := d.check(C.nsd_mem_zero(d.c, s.slots, n), "cuMemsetD8"); err != nil {
			return err
		}
	}
	timing := C.int(0)
	if spec.timing {
		timing = 1
	}
	for range spec.events {
		var ev C.CUevent
		if err := d.check(C.nsd_event_create(d.c, &ev, timing), "cuEventCreate"); err != nil {
			return err
		}
		s.events = append(s.events, ev)
	}
	if spec.copyBytes > 0 {
		n := C.size_t(spec.copyBytes)
		var dev C.CUdeviceptr
		if err := d.check(C.nsd_mem_alloc(d.c, &dev, n), "cuMemAlloc"); err != nil {
			return err
		}
		s.devBuf = dev
		var host unsafe.Pointer
		if err := d.check(C.nsd_host_alloc(d.c, &host, n), "cuMemAllocHost"); err != nil {
			return err
		}
		s.pinned = host
		C.nsd_host_zero(s.pinned, n)
		s.bytes = spec.copyBytes
	}
	if spec.stamps > 0 {
		n := C.size_t(16 * spec.stamps)
		var host unsafe.Pointer
		if err := d.check(C.nsd_host_alloc(d.c, &host, n), "cuMemAllocHost"); err != nil {
			return err
		}
		s.stamps = host
		s.nStamps = spec.stamps
		s.clearStamps()
	}
	return nil
}

func (s *cudaSession) bind() error {
	d := s.g.drv
	return d.check(C.nsd_ctx_set(d.c, s.g.ctx), "cuCtxSetCurrent")
}

func (s *cudaSession) spin(stream int, ns int64, l spinLaunch, stamp int) error {
	var stamps, slot C.ulonglong
	if stamp >= 0 && stamp < s.nStamps {
		stamps = C.ulonglong(uintptr(unsafe.Add(s.stamps, 16*stamp)))
	}
	if l.grid > 1 {
		slot = C.ulonglong(s.slots) + C.ulonglong(16*stream)
	}
	d := s.g.drv
	return d.check(C.nsd_launch(d.c, s.g.spinFn, C.uint(max(l.grid, 1)), C.uint(max(l.block, 1)), C.uint(l.shared),
		s.streams[stream], C.ulonglong(max(ns, 0)), stamps, slot), "cuLaunchKernel")
}

func (s *cudaSession) copy(stream int, dir copyDir, bytes int64) error {
	if bytes <= 0 {
		return nil
	}
	if bytes > s.bytes {
		return fmt.Errorf("copy of %d bytes: the session's buffers hold %d", bytes, s.bytes)
	}
	d := s.g.drv
	host := s.pinned
	n := C.size_t(bytes)
	if dir == dirHtoD {
		return d.check(C.nsd_copy_htod_async(d.c, s.devBuf, host, n, s.streams[stream]), "cuMemcpyHtoDAsync")
	}
	return d.check(C.nsd_copy_dtoh_async(d.c, host, s.devBuf, n, s.streams[stream]), "cuMemcpyDtoHAsync")
}

func (s *cudaSession) memset(stream int, bytes int64) error {
	if bytes <= 0 {
		return nil
	}
	if bytes > s.bytes {
		return fmt.Errorf("memset of %d bytes: the session's buffers hold %d", bytes, s.bytes)
	}
	d := s.g.drv
	return d.check(C.nsd_memset_async(d.c, s.devBuf, C.size_t(bytes), s.streams[stream]), "cuMemsetD8Async")
}

func (s *cudaSession) record(event, stream int) error {
	d := s.g.drv
	return d.check(C.nsd_event_record(d.c, s.events[event], s.streams[stream]), "cuEventRecord")
}

func (s *cudaSession) wait(stream, event int) error {
	d := s.g.drv
	return d.check(C.nsd_stream_wait(d.c, s.streams[stream], s.events[event]), "cuStreamWaitEvent")
}

func (s *cudaSession) syncStream(stream int) error {
	d := s.g.drv
	return d.check(C.nsd_stream_sync(d.c, s.streams[stream]), "cuStreamSynchronize")
}

func (s *cudaSession) syncEvent(event int) error {
	d := s.g.drv
	return d.check(C.nsd_event_sync(d.c, s.events[event]), "cuEventSynchronize")
}

func (s *cudaSession) syncContext() error {
	d := s.g.drv
	return d.check(C.nsd_ctx_sync(d.c), "cuCtxSynchronize")
}

func (s *cudaSession) elapsed(from, to int) (time.Duration, error) {
	d := s.g.drv
	var ms C.float
	if err := d.check(C.nsd_event_elapsed(d.c, &ms, s.events[from], s.events[to]), "cuEventElapsedTime"); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * 1e6), nil
}

func (s *cudaSession) stamp(slot int) (start, end uint64) {
	if slot < 0 || slot >= s.nStamps {
		return 0, 0
	}
	return uint64(C.nsd_host_word(s.stamps, C.int(2*slot))), uint64(C.nsd_host_word(s.stamps, C.int(2*slot+1)))
}

func (s *cudaSession) clearStamps() {
	if s.stamps != nil {
		C.nsd_host_zero(s.stamps, C.size_t(16*s.nStamps))
	}
}

func (s *cudaSession) timerStep(stream int) (uint64, error) {
	if s.nStamps == 0 {
		return 0, errors.New("timer probe: the session has no stamp memory")
	}
	d := s.g.drv
	const reads = 20000
	if err := d.check(C.nsd_launch_probe(d.c, s.g.probe, s.streams[stream], C.ulonglong(uintptr(s.stamps)), reads), "cuLaunchKernel(timer_step)"); err != nil {
		return 0, err
	}
	if err := s.syncStream(stream); err != nil {
		return 0, err
	}
	step, _ := s.stamp(0)
	return step, nil
}

func (s *cudaSession) memInfo() (int64, int64, error) {
	d := s.g.drv
	var free, total C.size_t
	if err := d.check(C.nsd_mem_info(d.c, &free, &total), "cuMemGetInfo"); err != nil {
		return 0, 0, err
	}
	return int64(free), int64(total), nil
}

// release destroys the session's streams and events and frees its
// memory, after waiting for the work still queued; every step runs even
// when an earlier one fails.
func (s *cudaSession) release() error {
	if s.released {
		return nil
	}
	s.released = true
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := s.g.drv
	err := s.bind()
	if err == nil {
		err = s.syncContext()
	}
	for _, st := range s.streams {
		err = errors.Join(err, d.check(C.nsd_stream_destroy(d.c, st), "cuStreamDestroy"))
	}
	for _, ev := range s.events {
		err = errors.Join(err, d.check(C.nsd_event_destroy(d.c, ev), "cuEventDestroy"))
	}
	for _, p := range []C.CUdeviceptr{s.devBuf, s.slots} {
		if p != 0 {
			err = errors.Join(err, d.check(C.nsd_mem_free(d.c, p), "cuMemFree"))
		}
	}
	if s.pinned != nil {
		err = errors.Join(err, d.check(C.nsd_host_free(d.c, s.pinned), "cuMemFreeHost"))
	}
	if s.stamps != nil {
		err = errors.Join(err, d.check(C.nsd_host_free(d.c, s.stamps), "cuMemFreeHost"))
	}
	s.streams, s.events, s.devBuf, s.slots, s.pinned, s.stamps = nil, nil, 0, 0, nil, nil
	if err != nil {
		return fmt.Errorf("releasing the replay's GPU resources: %w", err)
	}
	return nil
}
