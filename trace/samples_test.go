package trace

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSamplesInSyncs checks, on the corpus exports with CPU samples, that
// the samples Load places inside syncs are exactly those the test's own
// SQL finds inside the loaded syncs' spans (same thread, start within
// [Start, End]), that each sync keeps at most MaxSamplesPerSync stacks,
// and that the stacks reach the program's own functions.
func TestSamplesInSyncs(t *testing.T) {
	cases := []struct {
		file string
		min  int64  // samples inside syncs, at least
		user string // a program function some sampled stack holds
	}{
		{"cuda-cloverleaf_perlmutter-a100_nsys2024.5.sqlite", 1000, "advec_mom_kernel"},
		{"cuda-rodinia-gaussian-threadsync_rtx3090_nsys2022.4.sqlite", 1500, "ForwardSub"},
		{"mpi-cuda-saxpy_perlmutter-a100_nsys2022.2.sqlite", 600, "main"},
		{"cuda-hungarian-devsync_2xrtx3090_nsys2025.5.sqlite", 40, "solve_from_kl"},
		{"pytorch-aiprofiler-train-firstopt-nvtx_reexport2025.3.sqlite", 40, "_to_copy"},
		{"pytorch-llm-inference-sim_rtx4060ti_nsys2024.6.sqlite", 10, "THCPModule_cudaSynchronize"},
	}
	corpusFiles(t) // skips without the corpus
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(corpusDir, c.file)
			tr := loadFile(t, path, LoadOptions{})
			t.Logf("%d sample rows, %d inside %d syncs", tr.Stats.Samples, tr.Evidence.SamplesInSyncs, len(tr.Syncs))
			if !tr.Evidence.Samples || tr.Evidence.SamplesInSyncs < c.min {
				t.Fatalf("samples %v, %d inside syncs, want at least %d", tr.Evidence.Samples, tr.Evidence.SamplesInSyncs, c.min)
			}
			if want := int64(bruteSamplesInSyncs(t, path, tr)); tr.Evidence.SamplesInSyncs != want {
				t.Errorf("%d samples inside syncs, the SQL join finds %d", tr.Evidence.SamplesInSyncs, want)
			}
			found := false
			withStacks := 0
			for i := range tr.Syncs {
				st := tr.Syncs[i].Samples()
				if len(st) > MaxSamplesPerSync {
					t.Fatalf("sync %d keeps %d stacks, more than %d", i, len(st), MaxSamplesPerSync)
				}
				if len(st) > 0 {
					withStacks++
				}
				for _, frames := range st {
					if len(frames) == 0 {
						t.Fatalf("sync %d: an empty stack", i)
					}
					for _, f := range frames {
						if isSpecialEntry(f.Symbol) || f.Module == "[kernel.kallsyms]" {
							t.Fatalf("sync %d: nsys's own or a kernel frame %q in %q", i, f.Symbol, f.Module)
						}
						found = found || strings.Contains(f.Symbol, c.user)
					}
				}
			}
			if withStacks == 0 || !found {
				t.Errorf("%d syncs with sampled stacks; %q in one: %v", withStacks, c.user, found)
			}
		})
	}
}

// bruteSamplesInSyncs counts with SQL the samples of a sync's thread
// whose start lies inside the sync, for the syncs of tr.
func bruteSamplesInSyncs(t *testing.T, path string, tr *Trace) int {
	db := rawDB(t, path)
	conn, err := db.Conn(t0())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t0(), `CREATE TEMP TABLE spans (tid INTEGER, s INTEGER, e INTEGER)`); err != nil {
		t.Fatal(err)
	}
	for i := range tr.Syncs {
		sy := &tr.Syncs[i]
		if _, err := conn.ExecContext(t0(), `INSERT INTO temp.spans VALUES (?, ?, ?)`, sy.GlobalTid, sy.Start, sy.End); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.ExecContext(t0(), `CREATE INDEX temp.spans_at ON spans (tid, s)`); err != nil {
		t.Fatal(err)
	}
	var n int
	q := `SELECT count(*) FROM COMPOSITE_EVENTS c WHERE EXISTS (SELECT 1 FROM temp.spans p WHERE p.tid = c.globalTid AND c.start BETWEEN p.s AND p.e)`
	if err := conn.QueryRowContext(t0(), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
