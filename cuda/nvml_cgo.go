//go:build cgo

package cuda

import (
	"fmt"
	"strings"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/dl"
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlLibrary is the library go-nvml loads (its default).
const nvmlLibrary = "libnvidia-ml.so.1"

// nvmlMu makes NVML sessions take turns: go-nvml keeps process-wide
// state (the loaded library's error strings) that concurrent loads and
// unloads would race on.
var nvmlMu sync.Mutex

// readNVML adds to id what NVML says of the GPU, through go-nvml, which
// opens libnvidia-ml.so.1 at run time: a build needs no NVIDIA library
// and a binary runs without one (id.NVML then says why NVML gave
// nothing, and the rest of id stands).
//
// go-nvml binds NVML's functions lazily, when first called, so a library
// that lacks one (an old driver, a stray file of that name) would end
// the process at the call, nvmlInit included. The library is therefore
// opened first with go-nvml's dl package, and identifyWith looks up each
// function before go-nvml calls it.
func readNVML(id *Identity) {
	nvmlMu.Lock()
	defer nvmlMu.Unlock()
	probe := dl.New(nvmlLibrary, dl.RTLD_LAZY|dl.RTLD_LOCAL)
	if err := probe.Open(); err != nil {
		id.NVML = nvmlLibrary + " not found"
		if msg := err.Error(); !strings.Contains(msg, "No such file") {
			id.NVML += ": " + msg
		}
		return
	}
	defer probe.Close()
	identifyWith(nvml.New(), probe.Lookup, id)
}

// nvmlCalls are the NVML functions identifyWith needs.
var nvmlCalls = []string{
	"nvmlInit_v2",
	"nvmlShutdown",
	"nvmlErrorString",
	"nvmlDeviceGetHandleByPciBusId_v2",
	"nvmlDeviceGetHandleByIndex_v2",
	"nvmlDeviceGetName",
	"nvmlSystemGetDriverVersion",
	"nvmlDeviceGetClockInfo",
	"nvmlDeviceGetMaxClockInfo",
}

// The two names of the call that reads why the clocks are held down: the
// clock event reasons since driver 535, the throttle reasons before
// (deprecated in 13.0); the bits are the same.
const (
	nvmlEventReasons    = "nvmlDeviceGetCurrentClocksEventReasons"
	nvmlThrottleReasons = "nvmlDeviceGetCurrentClocksThrottleReasons"
)

// identifyWith adds to id what lib says of the GPU: its name and the
// driver's version, the SM clock now and at most, and the slowing clock
// reasons. lookup says whether the library has a function (nil error),
// and is asked before each is called. The device is found by PCI bus id
// (the CUDA ordinal and NVML's index can differ), else by the ordinal. A
// value NVML cannot give is left as it was.
func identifyWith(lib nvml.Interface, lookup func(string) error, id *Identity) {
	for _, sym := range nvmlCalls {
		if lookup(sym) != nil {
			id.NVML = nvmlLibrary + " lacks " + sym + " (driver too old?)"
			return
		}
	}
	switch r := lib.Init(); r {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		id.NVML = nvmlLibrary + " not found"
		return
	default:
		id.NVML = nvmlFailure("nvmlInit", r)
		return
	}
	defer lib.Shutdown()
	dev, r := lib.DeviceGetHandleByPciBusId(id.BusID)
	if r != nvml.SUCCESS {
		if dev, r = lib.DeviceGetHandleByIndex(id.Ordinal); r != nvml.SUCCESS {
			id.NVML = nvmlFailure("nvmlDeviceGetHandleByIndex", r)
			return
		}
	}
	if name, r := dev.GetName(); r == nvml.SUCCESS && name != "" {
		id.Name = name
	}
	if v, r := lib.SystemGetDriverVersion(); r == nvml.SUCCESS {
		id.Driver = v
	}
	if mhz, r := dev.GetClockInfo(nvml.CLOCK_SM); r == nvml.SUCCESS {
		id.SMClock = int(mhz)
	}
	if mhz, r := dev.GetMaxClockInfo(nvml.CLOCK_SM); r == nvml.SUCCESS {
		id.MaxClock = int(mhz)
	}
	var mask uint64
	r = nvml.ERROR_FUNCTION_NOT_FOUND
	switch {
	case lookup(nvmlEventReasons) == nil:
		mask, r = dev.GetCurrentClocksEventReasons()
	case lookup(nvmlThrottleReasons) == nil:
		mask, r = dev.GetCurrentClocksThrottleReasons()
	}
	if r == nvml.SUCCESS {
		id.Throttle = throttleNames(mask)
	}
}

// nvmlFailure names a failed NVML call and its result.
func nvmlFailure(call string, r nvml.Return) string {
	return fmt.Sprintf("%s: %s", call, r.Error())
}
