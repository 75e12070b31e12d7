//go:build cgo

package cuda

/*
#cgo LDFLAGS: -ldl
#include "nsd_cuda.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// driver is libcuda.so.1 opened at run time.
type driver struct {
	c *C.nsd_cuda
}

// openDriver loads the CUDA driver library and its entry points.
func openDriver() (*driver, error) {
	d := &driver{c: (*C.nsd_cuda)(C.calloc(1, C.size_t(unsafe.Sizeof(C.nsd_cuda{}))))}
	var msg [256]C.char
	switch C.nsd_cuda_open(d.c, &msg[0], C.size_t(len(msg))) {
	case 0:
		return d, nil
	case 1:
		C.free(unsafe.Pointer(d.c))
		if why := C.GoString(&msg[0]); !strings.Contains(why, "No such file") {
			return nil, fmt.Errorf("%w: %s", ErrNoDriver, why)
		}
		return nil, ErrNoDriver
	default:
		C.free(unsafe.Pointer(d.c))
		return nil, fmt.Errorf("%w: libcuda.so.1 lacks %s (driver too old?)", ErrNoDriver, C.GoString(&msg[0]))
	}
}

func (d *driver) close() {
	if d.c != nil {
		C.nsd_cuda_close(d.c)
		C.free(unsafe.Pointer(d.c))
		d.c = nil
	}
}

// check turns a CUresult into an error naming the call.
func (d *driver) check(r C.CUresult, call string) error {
	if r == 0 {
		return nil
	}
	e := &DriverError{Call: call, Code: int(r)}
	if s := C.nsd_error_text(d.c, r, 1); s != nil {
		e.Name = C.GoString(s)
	}
	if s := C.nsd_error_text(d.c, r, 0); s != nil {
		e.Text = C.GoString(s)
	}
	return e
}
