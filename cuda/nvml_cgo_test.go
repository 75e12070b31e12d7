//go:build cgo

package cuda

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// fakeNVML is what a mocked NVML answers: the results of its calls and
// the symbols it lacks.
type fakeNVML struct {
	init, bus, index, name, driver, clock, maxClock, throttle nvml.Return
	lacks                                                     []string
}

// lookup says whether the library has a symbol.
func (f fakeNVML) lookup(sym string) error {
	if slices.Contains(f.lacks, sym) {
		return errors.New("undefined symbol: " + sym)
	}
	return nil
}

// lib builds the mock; shutdowns counts nvmlShutdown calls.
func (f fakeNVML) lib(shutdowns *int) *mock.Interface {
	dev := &mock.Device{
		GetNameFunc: func() (string, nvml.Return) { return "NVIDIA H100 80GB HBM3", f.name },
		GetClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			if c != nvml.CLOCK_SM {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			return 1980, f.clock
		},
		GetMaxClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			if c != nvml.CLOCK_SM {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			return 1980, f.maxClock
		},
		GetCurrentClocksEventReasonsFunc:    func() (uint64, nvml.Return) { return 0x1 | 0x8, f.throttle },
		GetCurrentClocksThrottleReasonsFunc: func() (uint64, nvml.Return) { return 0x1 | 0x40, f.throttle },
	}
	return &mock.Interface{
		InitFunc:     func() nvml.Return { return f.init },
		ShutdownFunc: func() nvml.Return { *shutdowns++; return nvml.SUCCESS },
		DeviceGetHandleByPciBusIdFunc: func(bus string) (nvml.Device, nvml.Return) {
			if bus != "0000:1b:00.0" {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return dev, f.bus
		},
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if i != 2 {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return dev, f.index
		},
		SystemGetDriverVersionFunc: func() (string, nvml.Return) { return "580.159.04", f.driver },
	}
}

// TestIdentifyWith: what the identity says for each way NVML can answer,
// and that a library that was initialised is shut down.
func TestIdentifyWith(t *testing.T) {
	fromCUDA := Identity{Name: "cuda name", BusID: "0000:1b:00.0", Ordinal: 2, CUDA: 13000}
	full := fromCUDA
	full.Name, full.Driver, full.SMClock, full.MaxClock, full.Throttle = "NVIDIA H100 80GB HBM3", "580.159.04", 1980, 1980, []string{"hw-slowdown"}
	with := func(f func(*Identity)) Identity {
		id := fromCUDA
		f(&id)
		return id
	}
	for _, tc := range []struct {
		name     string
		nvml     fakeNVML
		want     Identity
		shutdown int
	}{
		{"all there", fakeNVML{}, full, 1},
		{"no library", fakeNVML{init: nvml.ERROR_LIBRARY_NOT_FOUND},
			with(func(id *Identity) { id.NVML = "libnvidia-ml.so.1 not found" }), 0},
		{"driver not loaded", fakeNVML{init: nvml.ERROR_DRIVER_NOT_LOADED},
			with(func(id *Identity) { id.NVML = "nvmlInit: ERROR_DRIVER_NOT_LOADED" }), 0},
		{"too old", fakeNVML{lacks: []string{"nvmlDeviceGetHandleByPciBusId_v2"}},
			with(func(id *Identity) {
				id.NVML = "libnvidia-ml.so.1 lacks nvmlDeviceGetHandleByPciBusId_v2 (driver too old?)"
			}), 0},
		{"not NVML", fakeNVML{lacks: []string{"nvmlInit_v2"}},
			with(func(id *Identity) { id.NVML = "libnvidia-ml.so.1 lacks nvmlInit_v2 (driver too old?)" }), 0},
		{"throttle reasons before 535", fakeNVML{lacks: []string{nvmlEventReasons}},
			with(func(id *Identity) { *id = full; id.Throttle = []string{"hw-thermal-slowdown"} }), 1},
		{"no clock reasons", fakeNVML{lacks: []string{nvmlEventReasons, nvmlThrottleReasons}},
			with(func(id *Identity) { *id = full; id.Throttle = nil }), 1},
		{"found by index", fakeNVML{bus: nvml.ERROR_NOT_FOUND}, full, 1},
		{"no such device", fakeNVML{bus: nvml.ERROR_NOT_FOUND, index: nvml.ERROR_NOT_FOUND},
			with(func(id *Identity) { id.NVML = "nvmlDeviceGetHandleByIndex: ERROR_NOT_FOUND" }), 1},
		{"clocks not supported", fakeNVML{clock: nvml.ERROR_NOT_SUPPORTED, maxClock: nvml.ERROR_NOT_SUPPORTED, throttle: nvml.ERROR_NOT_SUPPORTED},
			with(func(id *Identity) { id.Name, id.Driver = full.Name, full.Driver }), 1},
		{"no name, no driver version", fakeNVML{name: nvml.ERROR_UNKNOWN, driver: nvml.ERROR_UNKNOWN},
			with(func(id *Identity) {
				id.SMClock, id.MaxClock, id.Throttle = full.SMClock, full.MaxClock, full.Throttle
			}), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shutdowns := 0
			id := fromCUDA
			identifyWith(tc.nvml.lib(&shutdowns), tc.nvml.lookup, &id)
			if !reflect.DeepEqual(id, tc.want) {
				t.Errorf("identity %+v, want %+v", id, tc.want)
			}
			if shutdowns != tc.shutdown {
				t.Errorf("nvmlShutdown called %d times, want %d", shutdowns, tc.shutdown)
			}
		})
	}
}
