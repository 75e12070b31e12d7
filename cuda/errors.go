package cuda

import (
	"errors"
	"fmt"
)

// ErrNoDriver is returned when the CUDA driver library cannot be loaded:
// a machine without an NVIDIA driver, or a binary built without cgo.
var ErrNoDriver = errors.New("no NVIDIA driver (libcuda.so.1 not found)")

// ErrNoGPU is returned when the driver loads but sees no usable GPU.
var ErrNoGPU = errors.New("no NVIDIA GPU found")

// Unavailable reports whether err means that this machine cannot replay
// at all (no driver, no GPU), so the simulator's estimate stands.
func Unavailable(err error) bool {
	return errors.Is(err, ErrNoDriver) || errors.Is(err, ErrNoGPU)
}

// CUresult codes the package gives a meaning to.
const (
	cuErrorInsufficientDriver = 35
	cuErrorNoDevice           = 100
	cuErrorNoBinaryForGPU     = 209
	cuErrorInvalidPTX         = 218
	cuErrorUnsupportedPTX     = 222
)

// DriverError is a CUDA driver call that failed.
type DriverError struct {
	Call string // the driver function
	Code int    // CUresult
	Name string // e.g. CUDA_ERROR_LAUNCH_FAILED
	Text string // cuGetErrorString
}

func (e *DriverError) Error() string {
	name := e.Name
	if name == "" {
		name = fmt.Sprintf("CUresult %d", e.Code)
	}
	if e.Text == "" {
		return fmt.Sprintf("%s: %s", e.Call, name)
	}
	return fmt.Sprintf("%s: %s (%s)", e.Call, name, e.Text)
}

// Is makes errors.Is(err, ErrNoGPU) true for "no device" and "driver
// too old for this runtime" results.
func (e *DriverError) Is(target error) bool {
	return target == ErrNoGPU && (e.Code == cuErrorNoDevice || e.Code == cuErrorInsufficientDriver)
}

// moduleHint explains a failure to load the bundled PTX.
func moduleHint(err error) error {
	var de *DriverError
	if errors.As(err, &de) {
		switch de.Code {
		case cuErrorUnsupportedPTX:
			return fmt.Errorf("%w: the driver is older than the PTX ISA of the bundled kernel (cuda/spin.ptx); update the driver, or regenerate the PTX with an older nvcc (make ptx)", err)
		case cuErrorInvalidPTX, cuErrorNoBinaryForGPU:
			return fmt.Errorf("%w: the bundled kernel (cuda/spin.ptx) cannot be compiled for this GPU; regenerate it with make ptx", err)
		}
	}
	return err
}
