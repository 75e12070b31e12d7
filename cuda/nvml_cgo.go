//go:build cgo

package cuda

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "nsd_nvml.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// readNVML adds to id what NVML says of the GPU: its name and the
// driver's version, the SM clock now and at most, and the throttle
// reasons. NVML is optional: on failure id.NVML says why and the rest of
// id stands. The device is found by PCI bus id (the CUDA ordinal and
// NVML's index can differ), else by the ordinal.
func readNVML(id *Identity) {
	n := (*C.nsd_nvml)(C.calloc(1, C.size_t(unsafe.Sizeof(C.nsd_nvml{}))))
	defer C.free(unsafe.Pointer(n))
	var msg [256]C.char
	switch C.nsd_nvml_open(n, &msg[0], C.size_t(len(msg))) {
	case 0:
	case 1:
		id.NVML = "libnvidia-ml.so.1 not found"
		return
	default:
		id.NVML = "libnvidia-ml.so.1 lacks " + C.GoString(&msg[0])
		return
	}
	defer C.nsd_nvml_close(n)
	fail := func(call string, r C.nvmlReturn_t) string {
		return fmt.Sprintf("%s: %s", call, C.GoString(C.nsd_nvml_error(n, r)))
	}
	if r := C.nsd_nvml_init(n); r != 0 {
		id.NVML = fail("nvmlInit_v2", r)
		return
	}
	defer C.nsd_nvml_shutdown(n)
	var dev C.nvmlDevice_t
	bus := C.CString(id.BusID)
	r := C.nsd_nvml_by_bus(n, bus, &dev)
	C.free(unsafe.Pointer(bus))
	if r != 0 {
		if r = C.nsd_nvml_by_index(n, C.uint(id.Ordinal), &dev); r != 0 {
			id.NVML = fail("nvmlDeviceGetHandleByIndex_v2", r)
			return
		}
	}
	var buf [96]C.char
	if C.nsd_nvml_name(n, dev, &buf[0], C.uint(len(buf))) == 0 {
		id.Name = C.GoString(&buf[0])
	}
	if C.nsd_nvml_driver(n, &buf[0], C.uint(len(buf))) == 0 {
		id.Driver = C.GoString(&buf[0])
	}
	var mhz C.uint
	if C.nsd_nvml_sm_clock(n, dev, &mhz) == 0 {
		id.SMClock = int(mhz)
	}
	if C.nsd_nvml_sm_max_clock(n, dev, &mhz) == 0 {
		id.MaxClock = int(mhz)
	}
	var mask C.ulonglong
	if C.nsd_nvml_throttle(n, dev, &mask) == 0 {
		id.Throttle = throttleNames(uint64(mask))
	}
}
