package cuda

import (
	"testing"
)

// Footprints of kernels seen in the ground-truth fixtures (H100): the
// cuBLAS bf16 GEMM of gt_twostream_gemm (one 384-thread block per SM,
// held there by its 168 registers a thread and 208 KiB of shared
// memory), PyTorch's elementwise kernels over 4M and 1M floats, and a
// reduction of one block.
var (
	gemmShape  = Shape{Blocks: 132, Threads: 384, Registers: 168, Shared: 213188}
	bigElem    = Shape{Blocks: 16384, Threads: 128, Registers: 32}
	smallElem  = Shape{Blocks: 1024, Threads: 128, Registers: 32}
	oneBlock   = Shape{Blocks: 1, Threads: 512, Registers: 32, Shared: 4096}
	wideBlocks = Shape{Blocks: 100, Threads: 1024}
	warpBlocks = Shape{Blocks: 1000, Threads: 32, Registers: 16}
)

func TestSpinLaunch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lim   smLimits
		shape Shape
		want  spinLaunch
	}{
		// One block an SM: the spin takes all of an SM's shared memory.
		{"GEMM", h100Limits, gemmShape, spinLaunch{grid: 132, block: 384, shared: 232448, perSM: 1}},
		// 16 blocks an SM (registers and threads): one wave of 132×16.
		{"elementwise, many waves", h100Limits, bigElem, spinLaunch{grid: 2112, block: 128, shared: 233472/16 - 1024, perSM: 16}},
		{"elementwise, under a wave", h100Limits, smallElem, spinLaunch{grid: 1024, block: 128, shared: 233472/16 - 1024, perSM: 16}},
		{"one block", h100Limits, oneBlock, spinLaunch{grid: 1, block: 512, shared: 233472/4 - 1024, perSM: 4}},
		// Two blocks an SM by threads alone.
		{"1024 threads", h100Limits, wideBlocks, spinLaunch{grid: 100, block: 1024, shared: 233472/2 - 1024, perSM: 2}},
		// The block limit: 32 an SM.
		{"one warp a block", h100Limits, warpBlocks, spinLaunch{grid: 1000, block: 32, shared: 233472/32 - 1024, perSM: 32}},
		{"static shared memory of the spin", withSpinShared(h100Limits, 8), gemmShape, spinLaunch{grid: 132, block: 384, shared: 232440, perSM: 1}},
		{"no footprint", h100Limits, Shape{}, oneWarp},
		{"no limits", smLimits{}, gemmShape, oneWarp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.lim.launch(tc.shape); got != tc.want {
				t.Errorf("launch(%+v) = %+v, want %+v", tc.shape, got, tc.want)
			}
		})
	}
}

func withSpinShared(l smLimits, n int) smLimits {
	l.SpinShared = n
	return l
}

func TestSpinBlocks(t *testing.T) {
	l := h100Limits
	gemm, big, small, one := l.launch(gemmShape), l.launch(bigElem), l.launch(smallElem), l.launch(oneBlock)
	for _, tc := range []struct {
		name string
		y, x spinLaunch
		want bool
	}{
		{"GEMM while a GEMM runs", gemm, gemm, true},
		{"elementwise while a GEMM runs", gemm, big, true},
		{"GEMM while a wave of elementwise runs", big, gemm, true},
		// 1024 blocks leave 7 a SM: half its shared memory, too little for
		// a GEMM block, room for more elementwise blocks.
		{"GEMM while a partial wave runs", small, gemm, true},
		{"elementwise while a partial wave runs", small, small, false},
		{"elementwise while a full wave runs", big, big, true},
		{"anything while one block runs", one, gemm, false},
		{"no limits", gemm, gemm, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := l
			if tc.name == "no limits" {
				lim = smLimits{}
			}
			if got := lim.blocks(tc.y, tc.x); got != tc.want {
				t.Errorf("blocks(%+v, %+v) = %v, want %v", tc.y, tc.x, got, tc.want)
			}
		})
	}
}

// TestPlanFootprints: on gt_twostream_gemm every kernel carries its
// footprint, and each step's GEMMs on the second stream started while the
// first stream's GEMM ran (the recording's overlap: the covered ops);
// spinFor then asks for less only where the covering spin leaves no room.
// A single-stream fixture has no covers.
func TestPlanFootprints(t *testing.T) {
	f := loadFixture(t, "gt_twostream_gemm", "measured")
	p, err := BuildPlan(f.tl, f.t, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Shapes) < 3 || p.Shapes[0] != (Shape{}) {
		t.Fatalf("shapes %+v: want none first, then the GEMM's and the elementwise kernels'", p.Shapes)
	}
	r := &runner{lim: h100Limits}
	r.prepare(p)
	kernels, covered, gemmsByGemm, trimmed := 0, 0, 0, 0
	for _, iv := range p.Intervals {
		for _, th := range iv.Threads {
			for i := range th.Work {
				w := &th.Work[i]
				if w.Kind != WorkSpin {
					continue
				}
				kernels++
				if w.Shape == 0 && w.Op != "memset" { // CUPTI records no launch for a memset
					t.Errorf("spin %q without a footprint", w.Op)
				}
				if w.Cover == 0 {
					continue
				}
				covered++
				if w.CoverNs <= 0 || w.CoverNs > w.Ns {
					t.Errorf("%s: covered for %d of %d ns", w.Op, w.CoverNs, w.Ns)
				}
				if p.Shapes[w.Shape] == gemmShape && p.Shapes[w.Cover] == gemmShape {
					gemmsByGemm++
				}
				if ns, l := r.spinFor(w, p); l != r.launches[w.Shape] {
					t.Errorf("%s: launch %+v, want the footprint's %+v", w.Op, l, r.launches[w.Shape])
				} else if ns < spinNs(w.Ns, p, r.model.SpinOverheadNs) {
					trimmed++
				}
			}
		}
	}
	t.Logf("%d kernels, %d started under another stream's kernel (%d GEMMs under a GEMM), %d spins asked for less", kernels, covered, gemmsByGemm, trimmed)
	if gemmsByGemm < 25 || trimmed < gemmsByGemm {
		t.Errorf("%d GEMMs covered by a GEMM, %d spins trimmed: want one a step (30) at least, each trimmed", gemmsByGemm, trimmed)
	}
	for _, m := range []occupancyModel{occFootprint, occOneWarp} {
		r := &runner{lim: h100Limits, occupancy: m}
		r.prepare(p)
		for _, th := range p.Intervals[0].Threads {
			for i := range th.Work {
				w := &th.Work[i]
				if w.Kind != WorkSpin {
					continue
				}
				ns, l := r.spinFor(w, p)
				want := r.launches[w.Shape]
				if m == occOneWarp {
					want = oneWarp
				}
				if ns != spinNs(w.Ns, p, r.model.SpinOverheadNs) || l != want {
					t.Fatalf("%s: %s asked %d ns (recorded %d) as %+v", m, w.Op, ns, w.Ns, l)
				}
			}
		}
	}

	single := loadFixture(t, "gt_item_tiny", "measured")
	q, err := BuildPlan(single.tl, single.t, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, iv := range q.Intervals {
		for _, th := range iv.Threads {
			for _, w := range th.Work {
				if w.Cover != 0 {
					t.Fatalf("single stream: %s covered (%+v)", w.Op, w)
				}
			}
		}
	}
}

// TestSpinOverheadByFootprint: a spin is charged the per-op overhead
// measured for its own launch, one warp's where none was measured, under
// the one-warp overhead model, and for spins without a footprint.
func TestSpinOverheadByFootprint(t *testing.T) {
	p := &Plan{Shapes: []Shape{{}, bigElem, gemmShape}, DispatchGapNs: 1_500}
	big := h100Limits.launch(bigElem)
	measured := map[spinLaunch]int64{big: 3_800, oneWarp: 9_999}
	const oneWarpOver = 2_100
	for _, tc := range []struct {
		name     string
		occ      occupancyModel
		over     overheadModel
		shape    int32
		wantOver int64
	}{
		{"measured footprint", occRecorded, overFootprint, 1, 3_800},
		{"footprint not measured", occRecorded, overFootprint, 2, oneWarpOver},
		{"no footprint", occRecorded, overFootprint, 0, oneWarpOver},
		{"one-warp overhead model", occRecorded, overOneWarp, 1, oneWarpOver},
		{"one-warp occupancy", occOneWarp, overFootprint, 1, oneWarpOver},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &runner{lim: h100Limits, occupancy: tc.occ, overhead: tc.over, footprintOverNs: measured,
				model: DeviceModel{SpinOverheadNs: oneWarpOver}}
			r.prepare(p)
			w := Work{Kind: WorkSpin, Ns: 50_000, Shape: tc.shape}
			if ns, _ := r.spinFor(&w, p); ns != 50_000-(tc.wantOver-1_500) {
				t.Errorf("asked %d ns, want %d (overhead %d, recorded gap 1500)", ns, 50_000-(tc.wantOver-1_500), tc.wantOver)
			}
		})
	}
	if got := footprintLaunches(h100Limits, occRecorded, []*Plan{p, p}); len(got) != 2 || got[0] != big {
		t.Errorf("launches to measure %+v: want the two footprints once each", got)
	}
	if got := footprintLaunches(h100Limits, occOneWarp, []*Plan{p}); got != nil {
		t.Errorf("one-warp occupancy: launches to measure %+v, want none", got)
	}
}
