package report

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/trace"
)

// loadReprofile loads one export of the re-profiled pair
// (fixtures/reprofile: the same train.py as written and with NVTX ranges
// added, which move its lines and split its frame-less sites).
func loadReprofile(t *testing.T, name string) *Analysis {
	t.Helper()
	path := fixturegz.Gunzip(t, filepath.Join(fixtureDir, "reprofile", name+".sqlite.gz"), t.TempDir())
	x, err := trace.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	tr, err := x.Load(context.Background(), trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return New(tr)
}

// TestFingerprintsSurviveReprofile: profiled again with NVTX ranges added
// to the program (its lines move; without frames, its sites split by
// range), every site of the first run keeps its fingerprint in the second
// — with backtraces the two runs have the same fingerprints — while the
// legacy fingerprint (file and line, NVTX path and stream) loses them.
func TestFingerprintsSurviveReprofile(t *testing.T) {
	for _, tc := range []struct {
		mode       string
		same       bool // the two runs have the same sites
		lostLegacy int  // at least this many legacy fingerprints change
	}{
		{"backtrace", true, 4},
		{"lean", false, 2},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			plain, nvtx := loadReprofile(t, "plain."+tc.mode), loadReprofile(t, "nvtx."+tc.mode)
			after, afterLegacy := map[string]bool{}, map[string]bool{}
			for i := range nvtx.Sites {
				after[classify.Fingerprint(&nvtx.Sites[i])] = true
				afterLegacy[classify.LegacyFingerprint(&nvtx.Sites[i])] = true
			}
			lost := 0
			for i := range plain.Sites {
				s := &plain.Sites[i]
				if !after[classify.Fingerprint(s)] {
					t.Errorf("site %s (%s, %s:%d) lost its fingerprint %s", s.ID, strings.Join(s.APIs, "+"),
						filepath.Base(s.Location.File), s.Location.Line, classify.Fingerprint(s))
				}
				if !afterLegacy[classify.LegacyFingerprint(s)] {
					lost++
				}
			}
			if tc.same && len(plain.Sites) != len(nvtx.Sites) {
				t.Errorf("%d sites, then %d", len(plain.Sites), len(nvtx.Sites))
			}
			if lost < tc.lostLegacy {
				t.Errorf("the legacy fingerprint kept all but %d sites: the pair does not test what it should", lost)
			}
			t.Logf("%s: %d sites, then %d; %d legacy fingerprints changed, none of the new", tc.mode, len(plain.Sites), len(nvtx.Sites), lost)
		})
	}
}

// TestCorpusProgramsShareNoFingerprint: the shared corpus's exports are
// unrelated programs; no fingerprint appears in two of them, and none
// twice in one (the findings database keys a trace's sites by it).
func TestCorpusProgramsShareNoFingerprint(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	if len(files) == 0 {
		t.Skip("no shared corpus")
	}
	owner := map[string]string{}
	analysed := 0
	for _, p := range files {
		x, err := trace.Open(context.Background(), p)
		if err != nil {
			continue
		}
		tr, err := x.Load(context.Background(), trace.LoadOptions{})
		x.Close()
		if err != nil {
			continue // the export without a CUDA trace
		}
		analysed++
		a := New(tr)
		name := filepath.Base(p)
		for i := range a.Sites {
			f := classify.Fingerprint(&a.Sites[i])
			if other, ok := owner[f]; ok {
				t.Errorf("fingerprint %s in %s and %s", f, other, name)
			}
			owner[f] = name
		}
	}
	if analysed < 20 {
		t.Errorf("%d corpus exports analysed, want at least 20", analysed)
	}
	var n []string
	for f := range owner {
		n = append(n, f)
	}
	sort.Strings(n)
	t.Logf("%d fingerprints over %d exports, all distinct", len(n), analysed)
}
