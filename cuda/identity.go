package cuda

import (
	"fmt"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// Identity says which GPU replays, and in what state.
type Identity struct {
	Name     string `json:"name"`
	BusID    string `json:"bus_id,omitempty"`
	Ordinal  int    `json:"ordinal"`
	Driver   string `json:"driver,omitempty"`       // NVML's driver version, e.g. 580.159.04
	CUDA     int    `json:"cuda_driver_api"`        // cuDriverGetVersion, e.g. 13000
	SMClock  int    `json:"sm_clock_mhz,omitempty"` // current SM clock
	MaxClock int    `json:"max_sm_clock_mhz,omitempty"`
	// Throttle lists the active clock throttle reasons that slow the GPU
	// down (idle and application-clock settings left out).
	Throttle []string `json:"throttle,omitempty"`
	// NVML says why NVML gave nothing, when it did not.
	NVML string `json:"nvml,omitempty"`
}

func (id Identity) String() string {
	s := id.Name
	if id.Driver != "" {
		s += ", driver " + id.Driver
	}
	if id.SMClock > 0 {
		s += fmt.Sprintf(", SM %d/%d MHz", id.SMClock, id.MaxClock)
	}
	return s
}

// NVML clock throttle reason bits (nvmlClocksThrottleReason*).
var throttleReasons = []struct {
	bit  uint64
	name string
	slow bool // slows the GPU down (idle and settings do not count)
}{
	{0x1, "gpu-idle", false},
	{0x2, "applications-clocks-setting", false},
	{0x4, "sw-power-cap", true},
	{0x8, "hw-slowdown", true},
	{0x10, "sync-boost", true},
	{0x20, "sw-thermal-slowdown", true},
	{0x40, "hw-thermal-slowdown", true},
	{0x80, "hw-power-brake-slowdown", true},
	{0x100, "display-clock-setting", false},
}

// throttleNames lists the slowing reasons set in an NVML reason mask.
func throttleNames(mask uint64) []string {
	var out []string
	for _, r := range throttleReasons {
		if r.slow && mask&r.bit != 0 {
			out = append(out, r.name)
		}
	}
	return out
}

// Warnings compares the replay GPU with the trace's and reports a
// throttled GPU: a replay measures this GPU, not the recorded one.
func (id Identity) Warnings(t *trace.Trace) []string {
	var out []string
	var names []string
	same := false
	for _, g := range t.UsedGPUs() {
		names = append(names, g.Name)
		if normalizeGPUName(g.Name) == normalizeGPUName(id.Name) {
			same = true
		}
	}
	if len(names) > 0 && !same {
		out = append(out, fmt.Sprintf("the replay GPU (%s) is not the trace's (%s): durations were recorded on another GPU, the syncs' costs are this one's", id.Name, strings.Join(names, ", ")))
	}
	if len(id.Throttle) > 0 {
		out = append(out, fmt.Sprintf("the replay GPU is throttled (%s): measurements may be slow and noisy", strings.Join(id.Throttle, ", ")))
	}
	return out
}

func normalizeGPUName(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}
