package trace

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// sourcesExplicit holds the explicit sync counts that the corpus's
// SOURCES.md reports for each file (its own query, run by whoever gathered
// the corpus); the re-exported files list theirs in its notes.
var sourcesExplicit = map[string]int{
	"pytorch-nvfuser-xentropy-bench_h200_nsys2025.1.sqlite":         3,
	"pytorch-llm-inference-sim_rtx4060ti_nsys2024.6.sqlite":         512,
	"pytorch-cnn-dlprof_rtx2070s_nsys2022.1.sqlite":                 28,
	"tensorrt-memfusion_4xrtx3090_nsys2023.1.sqlite":                1,
	"cupy-gtls_rtx3060_nsys2023.1.sqlite":                           30,
	"rapids-cudf_quadro-rtx8000_nsys2020.3.sqlite":                  240,
	"openacc-nvhpc_rtx3080_nsys2020.5.sqlite":                       1942,
	"openmp-offload-heat_t4_nsys2023.3.sqlite":                      50,
	"mpi-cuda-saxpy_perlmutter-a100_nsys2022.2.sqlite":              0,
	"cuda-cloverleaf_perlmutter-a100_nsys2024.5.sqlite":             1312,
	"cuda-gemm-event-bench_rtx5070ti_nsys2025.5.sqlite":             2005,
	"cuda-hungarian-devsync_2xrtx3090_nsys2025.5.sqlite":            5448,
	"cuda-jetson-orin-video-histogram_nsys2024.5.sqlite":            651,
	"cuda-rodinia-gaussian-threadsync_rtx3090_nsys2022.4.sqlite":    8190,
	"wsl2-cupy-quda-lqcd-nokernels_rtx4060laptop_nsys2023.3.sqlite": 4861,
	"cuda-gpudb-hashjoin-mordred_quadro-rtx6000_nsys2021.2.sqlite":  18,
	"pytorch-aiprofiler-train-baseline_reexport2025.3.sqlite":       159,
	"openacc-jacobi_4xv100_reexport2025.3.sqlite":                   1005,
}

// independentCounts counts, with the test's own SQL, the explicit sync calls
// and the calls that block by CUDA's rules (pageable or synchronous copies,
// frees, synchronous memsets into pinned or managed memory), each call once
// (backtrace twins excluded).
func independentCounts(t *testing.T, path string) (explicit, implicit int) {
	db := rawDB(t, path)
	class := "1=1"
	if hasColumn(t, db, "CUPTI_ACTIVITY_KIND_RUNTIME", "eventClass") {
		class = "r.eventClass IN (0,1)"
	}
	calls := `SELECT DISTINCT r.globalTid, r.correlationId, s.value AS name, r.globalTid & ~0xFFFFFF AS gpid
		FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE ` + class
	explicit = queryInt(t, db, `SELECT count(*) FROM (`+calls+`) WHERE
		name GLOB 'cudaStreamSynchronize*' OR name GLOB 'cudaEventSynchronize*' OR name GLOB 'cudaDeviceSynchronize*'
		OR name GLOB 'cudaThreadSynchronize*' OR name = 'cuStreamSynchronize' OR name = 'cuEventSynchronize' OR name = 'cuCtxSynchronize'`)
	implicit = queryInt(t, db, `SELECT count(*) FROM (`+calls+`) WHERE
		name GLOB 'cudaFree_v*' OR name = 'cudaFree' OR name GLOB 'cudaFreeHost*' OR name GLOB 'cudaFreeArray*'
		OR name GLOB 'cuMemFree_v*' OR name = 'cuMemFree' OR name GLOB 'cuMemFreeHost*'`)
	if hasTable(t, db, "CUPTI_ACTIVITY_KIND_MEMCPY") {
		implicit += queryInt(t, db, `SELECT count(*) FROM (`+calls+`) c JOIN CUPTI_ACTIVITY_KIND_MEMCPY m
			ON m.correlationId = c.correlationId AND m.globalPid = c.gpid
			WHERE (c.name GLOB 'cudaMemcpy*' OR c.name GLOB 'cuMemcpy*') AND (
			  (m.copyKind IN (2,4) AND (c.name NOT GLOB '*Async*' OR m.dstKind = 0)) OR
			  (m.copyKind IN (1,3) AND (c.name NOT GLOB '*Async*' OR m.srcKind = 0)) OR
			  (m.copyKind = 9 AND c.name NOT GLOB '*Async*'))`)
	} else {
		// Without copy activity the direction is unknown: a synchronous copy
		// that is not device-to-device blocks.
		implicit += queryInt(t, db, `SELECT count(*) FROM (`+calls+`) WHERE (name GLOB 'cudaMemcpy*' OR name GLOB 'cuMemcpy*')
			AND name NOT GLOB '*Async*' AND name NOT GLOB '*Peer*' AND name NOT GLOB '*DtoD*' AND name NOT GLOB '*AtoA*'`)
	}
	if hasTable(t, db, "CUPTI_ACTIVITY_KIND_MEMSET") && hasColumn(t, db, "CUPTI_ACTIVITY_KIND_MEMSET", "memKind") {
		implicit += queryInt(t, db, `SELECT count(*) FROM (`+calls+`) c JOIN CUPTI_ACTIVITY_KIND_MEMSET m
			ON m.correlationId = c.correlationId AND m.globalPid = c.gpid
			WHERE (c.name GLOB 'cudaMemset*' OR c.name GLOB 'cuMemset*') AND c.name NOT GLOB '*Async*' AND m.memKind IN (1,4)`)
	}
	return explicit, implicit
}

// TestCorpus analyses every real export of the shared corpus and checks the
// inventory against counts made independently: the corpus's own SOURCES.md
// and the test's SQL.
func TestCorpus(t *testing.T) {
	for _, path := range corpusFiles(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			before := fileDigest(t, path)
			defer func() {
				if fileDigest(t, path) != before {
					t.Errorf("%s changed on disk", name)
				}
			}()
			if strings.Contains(name, "no-cuda-trace") {
				_, err := loadErr(path)
				if !errors.Is(err, ErrNoCUDATrace) {
					t.Fatalf("want the no-CUDA-trace error, got %v", err)
				}
				return
			}
			tr := loadFile(t, path, LoadOptions{})
			var explicit, implicit, ordered int
			for i, s := range tr.Syncs {
				if s.End < s.Start || int(s.Index) != i {
					t.Errorf("sync %d: bad window or index: %+v", i, s)
				}
				if i > 0 && s.Start >= tr.Syncs[i-1].Start {
					ordered++
				}
				for _, c := range s.Calls() {
					switch c.Kind {
					case CallStreamSync, CallEventSync, CallContextSync:
						explicit++
					default:
						if c.Blocking {
							implicit++
						}
					}
				}
			}
			if len(tr.Syncs) > 1 && ordered != len(tr.Syncs)-1 {
				t.Errorf("syncs are not in time order")
			}
			wantExplicit, wantImplicit := independentCounts(t, path)
			if explicit != wantExplicit {
				t.Errorf("explicit sync calls: got %d, independent SQL count %d", explicit, wantExplicit)
			}
			if implicit != wantImplicit {
				t.Errorf("blocking copies/frees/memsets: got %d, independent SQL count %d", implicit, wantImplicit)
			}
			if want, ok := sourcesExplicit[name]; ok && explicit != want {
				t.Errorf("explicit sync calls: got %d, SOURCES.md says %d", explicit, want)
			}
			if tr.Region.Duration <= 0 {
				t.Errorf("region duration %d", tr.Region.Duration)
			}
			t.Logf("%s: %d syncs (%d explicit calls, %d blocking implicit calls), %d GPU ops", name, len(tr.Syncs), explicit, implicit, tr.Stats.GPUOps)
		})
	}
}

func loadErr(path string) (*Trace, error) {
	ctx := t0()
	x, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	return x.Load(ctx, LoadOptions{})
}
