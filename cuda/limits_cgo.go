//go:build cgo

package cuda

/*
#include "nsd_cuda.h"
*/
import "C"

// CUDA device and function attributes the replay reads or sets
// (CUdevice_attribute, CUfunction_attribute).
const (
	cuDevAttrSMCount           = 16
	cuDevAttrThreadsPerSM      = 39
	cuDevAttrSharedPerSM       = 81
	cuDevAttrRegsPerSM         = 82
	cuDevAttrSharedOptin       = 97
	cuDevAttrBlocksPerSM       = 106
	cuDevAttrReservedShared    = 111
	cuFuncAttrSharedBytes      = 1
	cuFuncAttrNumRegs          = 4
	cuFuncAttrMaxDynamicShared = 8
	cuFuncAttrCarveout         = 9
	carveoutMaxShared          = 100
)

// readLimits reads the per-SM resources that size the spin's launches,
// and lets the spin kernel take as much shared memory as a block may, in
// an SM configured for the most shared memory: then how many spin blocks
// share an SM depends on the shares the launches ask for alone. The
// context must be current.
func (g *cudaGPU) readLimits() error {
	d := g.drv
	attr := func(a int, dst *int, call string) error {
		var v C.int
		if err := d.check(C.nsd_device_attr(d.c, &v, C.int(a), g.dev), call); err != nil {
			return err
		}
		*dst = int(v)
		return nil
	}
	var l smLimits
	for _, a := range []struct {
		attr int
		dst  *int
		name string
	}{
		{cuDevAttrSMCount, &l.SMs, "MULTIPROCESSOR_COUNT"},
		{cuDevAttrThreadsPerSM, &l.ThreadsPerSM, "MAX_THREADS_PER_MULTIPROCESSOR"},
		{cuDevAttrSharedPerSM, &l.SharedPerSM, "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"},
		{cuDevAttrRegsPerSM, &l.RegsPerSM, "MAX_REGISTERS_PER_MULTIPROCESSOR"},
		{cuDevAttrSharedOptin, &l.SharedPerBlock, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"},
	} {
		if err := attr(a.attr, a.dst, "cuDeviceGetAttribute("+a.name+")"); err != nil {
			return err
		}
	}
	// Added in CUDA 11: a driver without them keeps the older limits.
	if attr(cuDevAttrBlocksPerSM, &l.BlocksPerSM, "") != nil || l.BlocksPerSM <= 0 {
		l.BlocksPerSM = 16
	}
	if attr(cuDevAttrReservedShared, &l.ReservedShared, "") != nil {
		l.ReservedShared = 0
	}
	var regs, static C.int
	if err := d.check(C.nsd_func_attr(d.c, &regs, cuFuncAttrNumRegs, g.spinFn), "cuFuncGetAttribute(NUM_REGS)"); err != nil {
		return err
	}
	if err := d.check(C.nsd_func_attr(d.c, &static, cuFuncAttrSharedBytes, g.spinFn), "cuFuncGetAttribute(SHARED_SIZE_BYTES)"); err != nil {
		return err
	}
	l.SpinRegs, l.SpinShared = int(regs), int(static)
	if err := d.check(C.nsd_func_set_attr(d.c, g.spinFn, cuFuncAttrMaxDynamicShared, C.int(l.SharedPerBlock-l.SpinShared)),
		"cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)"); err != nil {
		return err
	}
	if err := d.check(C.nsd_func_set_attr(d.c, g.spinFn, cuFuncAttrCarveout, carveoutMaxShared),
		"cuFuncSetAttribute(PREFERRED_SHARED_MEMORY_CARVEOUT)"); err != nil {
		return err
	}
	g.lim = l
	return nil
}
