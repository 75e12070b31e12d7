package cuda

import (
	"testing"
	"time"
)

// TestGPUSpinOccupancy checks the spins' footprints on the GPU. A spin
// alone lasts what it is asked, however many blocks it has (those that
// start late stop at the first block's deadline), three times running
// (its stream's slot is reset). Two streams' spins released together run
// one after the other where one fills the SMs (a GEMM's footprint, a full
// wave of elementwise blocks), side by side where they leave room (one
// warp, a partial wave). It also times chains of back-to-back spins of
// each footprint: the per-op overhead the replay charges is one warp's.
func TestGPUSpinOccupancy(t *testing.T) {
	d := openTestGPU(t)
	const ns = 200_000
	type row struct {
		Name        string `json:"name"`
		Grid, Block int
		SharedBytes int   `json:"shared_bytes"`
		AloneNs     int64 `json:"alone_ns"` // the slowest of three
		PairNs      int64 `json:"pair_ns"`
		ChainPerOp  int64 `json:"chain_per_op_ns"` // 50 back to back, 20 µs asked each
	}
	var rows []row
	err := d.withSession(sessionSpec{streams: 2, events: 3, timing: true}, func(s session) error {
		timed := func(f func() error, ends ...int) (int64, error) {
			if err := s.spin(0, 50_000, oneWarp, -1); err != nil { // a gate: what follows is queued before it starts
				return 0, err
			}
			if err := s.record(0, 0); err != nil {
				return 0, err
			}
			if err := f(); err != nil {
				return 0, err
			}
			var worst time.Duration
			for _, e := range ends {
				if err := s.syncEvent(e); err != nil {
					return 0, err
				}
				el, err := s.elapsed(0, e)
				if err != nil {
					return 0, err
				}
				worst = max(worst, el)
			}
			return int64(worst), nil
		}
		for _, tc := range []struct {
			name   string
			shape  Shape
			serial bool
		}{
			{"one warp", Shape{}, false},
			{"elementwise, 1024 blocks", smallElem, false},
			{"elementwise, a full wave", bigElem, true},
			{"GEMM", gemmShape, true},
		} {
			l := d.lim.launch(tc.shape)
			r := row{Name: tc.name, Grid: l.grid, Block: l.block, SharedBytes: l.shared}
			for range 3 {
				el, err := timed(func() error {
					if err := s.spin(0, ns, l, -1); err != nil {
						return err
					}
					return s.record(1, 0)
				}, 1)
				if err != nil {
					return err
				}
				r.AloneNs = max(r.AloneNs, el)
			}
			var err error
			r.PairNs, err = timed(func() error {
				if err := s.wait(1, 0); err != nil {
					return err
				}
				for st := range 2 {
					if err := s.spin(st, ns, l, -1); err != nil {
						return err
					}
					if err := s.record(1+st, st); err != nil {
						return err
					}
				}
				return nil
			}, 1, 2)
			if err != nil {
				return err
			}
			if r.ChainPerOp, err = chainOverhead(s, l, 50, 20_000); err != nil {
				return err
			}
			r.ChainPerOp += 20_000
			rows = append(rows, r)
			if r.AloneNs < ns || r.AloneNs > ns+20_000 {
				t.Errorf("%s (%d×%d, %d B shared): alone %d ns, want %d ns and at most 20 µs more", tc.name, l.grid, l.block, l.shared, r.AloneNs, ns)
			}
			if serial := r.PairNs > 3*ns/2; serial != tc.serial {
				t.Errorf("%s: two streams took %d ns for two spins of %d: serialized %v, want %v", tc.name, r.PairNs, ns, serial, tc.serial)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		t.Logf("%-26s %5d×%-4d %6d B shared: alone %7d ns, two streams %7d ns; back to back %6d ns per op (20 µs asked)",
			r.Name, r.Grid, r.Block, r.SharedBytes, r.AloneNs, r.PairNs, r.ChainPerOp)
	}
	writeOut(t, "spin_occupancy.json", map[string]any{"limits": d.lim, "rows": rows})
}
