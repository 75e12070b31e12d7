package cuda

import (
	"sync/atomic"

	"github.com/nsyssync/nsyssync/trace"
)

// Occupancy: a replayed kernel holds the share of the GPU the recorded
// kernel held, so that spins of concurrent streams overlap as the
// recorded kernels could. The spin is launched with the recorded block
// size, as many blocks as the recorded kernel had resident at once (one
// wave; a later wave of a real kernel only took over the SMs of the
// first), and enough dynamic shared memory that as many of its blocks
// fit on an SM as of the recorded kernel's, whatever limited those
// (threads, registers or shared memory). Every block spins until a
// deadline fixed by the first block to start, so the op lasts its
// recorded duration from its first block on, however late its other
// blocks find room.

// Shape is a recorded kernel's footprint: what its blocks needed.
type Shape struct {
	Blocks    int64 // in the grid
	Threads   int32 // per block
	Registers int32 // per thread
	Shared    int32 // bytes per block, static and dynamic
}

// shapeOf is the footprint of a recorded op; false when it has none
// (not a kernel, or an export without the launch columns).
func shapeOf(op *trace.Op) (Shape, bool) {
	l := op.Launch
	b, th := l.Blocks(), l.Threads()
	if op.Kind != trace.OpKernel || b <= 0 || th <= 0 || th > maxSpinThreads {
		return Shape{}, false
	}
	return Shape{Blocks: b, Threads: int32(th), Registers: l.Registers, Shared: int32(min(l.SharedBytes(), 1<<30))}, true
}

// maxSpinThreads is the largest block CUDA launches.
const maxSpinThreads = 1024

// smLimits are the replay GPU's per-SM resources, and what a block of
// the spin kernel needs of its own.
type smLimits struct {
	SMs            int
	ThreadsPerSM   int
	RegsPerSM      int
	BlocksPerSM    int
	SharedPerSM    int // bytes
	SharedPerBlock int // the most one block may have, opted in
	ReservedShared int // the driver's, per block
	SpinRegs       int // registers per thread of the spin kernel
	SpinShared     int // the spin kernel's static shared memory
}

// valid reports whether the limits can size a launch.
func (l smLimits) valid() bool {
	return l.SMs > 0 && l.ThreadsPerSM > 0 && l.RegsPerSM > 0 && l.BlocksPerSM > 0 && l.SharedPerSM > 0 && l.SharedPerBlock > 0
}

// spinLaunch is how the spin kernel is launched for an op.
type spinLaunch struct {
	grid, block int
	shared      int // dynamic shared memory, bytes per block
	perSM       int // blocks of it one SM holds
}

// oneWarp is the launch of a spin without a recorded footprint: one block
// of one warp, which holds one SM slot and no more.
var oneWarp = spinLaunch{grid: 1, block: spinBlock, perSM: 1}

// spinBlock is the block size of a spin without a footprint.
const spinBlock = 32

// Register allocation: per warp, in units of regUnit registers.
const (
	warpSize = 32
	regUnit  = 256
)

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// blocksPerSM is how many blocks of threads threads, regs registers per
// thread and shared bytes of shared memory fit on one SM at once (CUDA's
// occupancy rule, at warp granularity).
func (l smLimits) blocksPerSM(threads, regs, shared int) int {
	warps := ceilDiv(max(threads, 1), warpSize)
	k := min(l.BlocksPerSM, l.ThreadsPerSM/(warps*warpSize))
	if regs > 0 {
		warpRegs := ceilDiv(regs*warpSize, regUnit) * regUnit
		k = min(k, l.RegsPerSM/warpRegs/warps)
	}
	return min(k, l.SharedPerSM/(shared+l.ReservedShared))
}

// launch sizes the spin for a recorded footprint: the recorded block
// size; shared memory such that as many spin blocks fit on an SM as
// recorded blocks did; at most one wave of blocks.
func (l smLimits) launch(s Shape) spinLaunch {
	if !l.valid() || s.Blocks <= 0 || s.Threads <= 0 {
		return oneWarp
	}
	threads := int(s.Threads)
	k := max(l.blocksPerSM(threads, int(s.Registers), int(s.Shared)), 1)
	shared := l.SharedPerSM/k - l.ReservedShared - l.SpinShared
	shared = min(max(shared, 0), l.SharedPerBlock-l.SpinShared)
	per := max(l.blocksPerSM(threads, l.SpinRegs, shared+l.SpinShared), 1)
	grid := int(min(s.Blocks, int64(per*l.SMs)))
	return spinLaunch{grid: grid, block: threads, shared: shared, perSM: per}
}

// blocks reports whether x cannot start a block while y runs: y's blocks
// are on every SM (its grid spread evenly) and leave, on each, less room
// than one block of x needs.
func (l smLimits) blocks(y, x spinLaunch) bool {
	if !l.valid() {
		return false
	}
	ky := min(y.perSM, y.grid/l.SMs)
	if ky == 0 {
		return false // some SM holds none of y
	}
	need := func(n spinLaunch) (threads, regs, shared int) {
		warps := ceilDiv(n.block, warpSize)
		return warps * warpSize, warps * ceilDiv(max(l.SpinRegs, 1)*warpSize, regUnit) * regUnit, n.shared + l.SpinShared + l.ReservedShared
	}
	yt, yr, ys := need(y)
	xt, xr, xs := need(x)
	return ky+1 > l.BlocksPerSM || ky*yt+xt > l.ThreadsPerSM || ky*yr+xr > l.RegsPerSM || ky*ys+xs > l.SharedPerSM
}

// occupancyModel chooses how spins are shaped (measured against each
// other in TestGPUGroundTruth).
type occupancyModel uint8

const (
	// occRecorded: each kernel's recorded footprint, and the time it
	// waited for a covering kernel of another stream left out.
	occRecorded occupancyModel = iota
	// occFootprint: the recorded footprints, recorded durations as they
	// are.
	occFootprint
	// occOneWarp: every spin one warp (the replay before footprints).
	occOneWarp
)

func (m occupancyModel) String() string {
	return [...]string{"recorded footprint, cover wait left out", "recorded footprint", "one warp"}[m]
}

// overheadModel chooses the per-op overhead a spin is charged (measured
// against each other in TestGPUGroundTruth).
type overheadModel uint8

const (
	// overFootprint: what back-to-back spins of the op's own launch took
	// beyond what they were asked, measured on this device.
	overFootprint overheadModel = iota
	// overOneWarp: one warp's, for every spin (the replay before).
	overOneWarp
)

func (m overheadModel) String() string {
	return [...]string{"measured per footprint", "one warp's"}[m]
}

// prepare turns the plan's footprints into this GPU's spin launches and
// the per-op overhead each is charged.
func (r *runner) prepare(p *Plan) {
	r.launches, r.overNs, r.wakes = r.launches[:0], r.overNs[:0], r.wakes[:0]
	if len(r.streamWake) != len(p.Streams) {
		r.streamWake = make([]atomic.Int64, len(p.Streams))
	}
	if len(r.eventWake) != p.Events {
		r.eventWake = make([]atomic.Int64, p.Events)
	}
	for _, s := range p.Shapes {
		l := oneWarp
		if r.occupancy != occOneWarp {
			l = r.lim.launch(s)
		}
		over, ok := r.footprintOverNs[l]
		if !ok || r.overhead == overOneWarp || l == oneWarp {
			over = r.model.SpinOverheadNs
		}
		wake, ok := r.footprintWakeNs[l]
		if !ok || l == oneWarp {
			wake = r.model.WakeNs
		}
		r.launches = append(r.launches, l)
		r.overNs = append(r.overNs, over)
		r.wakes = append(r.wakes, wake)
	}
}

// spinFor is the spin that stands in for w: its launch, and the time it
// is asked for (spinNs of the recorded duration with its launch's
// overhead, less the wait for a covering kernel that leaves no room for
// it).
func (r *runner) spinFor(w *Work, p *Plan) (int64, spinLaunch) {
	if w.Shape <= 0 || int(w.Shape) >= len(r.launches) {
		return spinNs(w.Ns, p, r.model.SpinOverheadNs), oneWarp
	}
	l, ns := r.launches[w.Shape], w.Ns
	if r.occupancy == occRecorded && w.Cover > 0 && int(w.Cover) < len(r.launches) && r.lim.blocks(r.launches[w.Cover], l) {
		ns -= w.CoverNs
	}
	return spinNs(ns, p, r.overNs[w.Shape]), l
}

// footprintLaunches returns the spin launches other than one warp that
// the plans' footprints take under an occupancy model, once each.
func footprintLaunches(lim smLimits, occ occupancyModel, plans []*Plan) []spinLaunch {
	if occ == occOneWarp {
		return nil
	}
	seen := map[spinLaunch]bool{oneWarp: true}
	var out []spinLaunch
	for _, p := range plans {
		for _, s := range p.Shapes {
			if l := lim.launch(s); !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	return out
}
