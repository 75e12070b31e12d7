package trace

import (
	"context"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
)

// TestTimeline reads the measured region of a real fixture and checks it
// against the test's own SQL counts and the program's known structure.
func TestTimeline(t *testing.T) {
	ctx := context.Background()
	x, err := Open(ctx, leanFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	tr, err := x.Load(ctx, LoadOptions{NVTX: "measured"})
	if err != nil {
		t.Fatal(err)
	}
	w := Interval{tr.Region.Start, tr.Region.End}
	tl, err := x.Timeline(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, leanFixture)
	wantCalls := queryInt(t, db, sqlf(`SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass IN (0,1) AND start < %d AND "end" > %d`, w.End, w.Start))
	wantKernels := queryInt(t, db, sqlf(`SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start < %d AND "end" > %d`, w.End, w.Start))
	if len(tl.Calls) != wantCalls {
		t.Errorf("calls: got %d, SQL %d", len(tl.Calls), wantCalls)
	}
	kinds := map[OpKind]int{}
	for i, op := range tl.Ops {
		kinds[op.Kind]++
		if op.Name == "" || op.End < op.Start {
			t.Errorf("op %d: %+v", i, op)
		}
		if i > 0 && op.Start < tl.Ops[i-1].Start {
			t.Fatalf("ops not sorted")
		}
	}
	if kinds[OpKernel] != wantKernels || kinds[OpMemcpy] == 0 || kinds[OpGraph] != 3 {
		t.Errorf("op kinds %v, want %d kernels, memcpys, and the 3 graph replays", kinds, wantKernels)
	}
	// The program makes one side-stream wait per iteration (3 in measured):
	// each links the side stream to a record on the legacy stream 7.
	if len(tl.Waits) != 3 {
		t.Fatalf("stream waits: got %d, want 3: %+v", len(tl.Waits), tl.Waits)
	}
	for _, wt := range tl.Waits {
		if wt.Stream == wt.RecordStream || wt.RecordCorrelationID >= wt.CorrelationID {
			t.Errorf("wait %+v: want a record on another stream made before the wait", wt)
		}
	}
}

// TestTimelineKernelLaunch reads the kernels' launch configurations of a
// real fixture (two streams of bf16 4096³ GEMMs that each fill the H100,
// and elementwise kernels), and of a copy without the launch columns, as
// older exports lack some: those read as not recorded.
func TestTimelineKernelLaunch(t *testing.T) {
	const fixture = "../fixtures/gt_twostream_gemm.sqlite.gz"
	gemm := KernelLaunch{Grid: [3]int32{2, 66, 1}, Block: [3]int32{384, 1, 1}, DynamicShared: 213188, Registers: 168}
	for _, tc := range []struct {
		name  string
		stmts []string
		want  KernelLaunch
	}{
		{"recorded", nil, gemm},
		{"no launch columns", []string{
			`ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN gridY`,
			`ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN dynamicSharedMemory`,
			`ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN registersPerThread`,
		}, KernelLaunch{Grid: [3]int32{2, 0, 1}, Block: [3]int32{384, 1, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := fixture
			if tc.stmts != nil {
				path = copyFixture(t, fixturegz.Plain(t, "../fixtures", "gt_twostream_gemm"), tc.stmts...)
			}
			x, tr := openLoaded(t, path, LoadOptions{NVTX: "measured"})
			tl, err := x.Timeline(t0(), Interval{tr.Region.Start, tr.Region.End})
			if err != nil {
				t.Fatal(err)
			}
			gemms := 0
			for _, op := range tl.Ops {
				switch {
				case op.Kind != OpKernel:
					if op.Launch != (KernelLaunch{}) {
						t.Errorf("%s op with a launch configuration: %+v", op.Kind, op.Launch)
					}
				case strings.HasPrefix(op.Name, "nvjet"):
					gemms++
					if op.Launch != tc.want {
						t.Fatalf("GEMM launch %+v, want %+v", op.Launch, tc.want)
					}
				case op.Launch.Threads() != 128:
					t.Errorf("%s: %d threads a block, want 128", op.Name, op.Launch.Threads())
				}
			}
			// 4 GEMMs a step, 30 steps in the measured region.
			if gemms < 100 {
				t.Errorf("%d GEMMs in the region: want about 120", gemms)
			}
			if b, th, sh := gemm.Blocks(), gemm.Threads(), gemm.SharedBytes(); b != 132 || th != 384 || sh != 213188 {
				t.Errorf("GEMM: %d blocks of %d threads, %d bytes shared; want 132 of 384, 213188", b, th, sh)
			}
		})
	}
}
