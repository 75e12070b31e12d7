//go:build !cgo

package cuda

import "fmt"

// openGPU fails in a build without cgo: the driver is loaded through cgo.
func openGPU(int, []byte) (gpuDevice, error) {
	return nil, fmt.Errorf("%w: this nsyssync was built without cgo (CGO_ENABLED=0)", ErrNoDriver)
}

// readNVML says why NVML gave nothing.
func readNVML(id *Identity) { id.NVML = "built without cgo" }
