package report

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/internal/testexport"
	"github.com/nsyssync/nsyssync/trace"
)

// loadReprofile loads one export of the re-profiled pair
// (fixtures/reprofile: the same train.py as written and with NVTX ranges
// added, which move its lines and split its frame-less sites).
func loadReprofile(t *testing.T, name string) *Analysis {
	t.Helper()
	return loadGz(t, filepath.Join(fixtureDir, "reprofile", name+".sqlite.gz"))
}

// loadGz analyses a gzipped export, unpacked into the test's temporary
// directory.
func loadGz(t *testing.T, gz string) *Analysis {
	t.Helper()
	_, tr := testexport.Load(t, fixturegz.Gunzip(t, gz, t.TempDir()), "")
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

// TestFingerprintStable: an export's fingerprints are unique, 12 hex
// digits, and the same on every load.
func TestFingerprintStable(t *testing.T) {
	lean := load(t, "syncs_lean.sqlite.gz", "measured").analysis
	again := load(t, "syncs_lean.sqlite.gz", "measured").analysis
	seen := map[string]bool{}
	for i := range lean.Sites {
		f := classify.Fingerprint(&lean.Sites[i])
		if len(f) != 12 || seen[f] {
			t.Errorf("site %s: fingerprint %q not 12 hex digits or not unique", lean.Sites[i].ID, f)
		}
		seen[f] = true
		if g := classify.Fingerprint(&again.Sites[i]); g != f {
			t.Errorf("site %s: fingerprint %s, then %s", lean.Sites[i].ID, f, g)
		}
	}
}

// TestFingerprintIgnoresCheckout: for the legacy fingerprint (still
// accepted by allow-lists), the same program line in another checkout
// directory keeps it; another line does not.
func TestFingerprintIgnoresCheckout(t *testing.T) {
	a := load(t, "syncs_backtrace.sqlite.gz", "").analysis
	s := a.Sites[siteWith(t, a, "log_loss")]
	moved := s
	moved.Location.File = strings.Replace(s.Location.File, "/work/main/", "/home/runner/work/nsyssync/", 1)
	moved.Key = strings.Replace(s.Key, "/work/main/", "/home/runner/work/nsyssync/", 1)
	if moved.Location.File == s.Location.File {
		t.Fatalf("fixture path %q not under /work/main", s.Location.File)
	}
	if classify.LegacyFingerprint(&moved) != classify.LegacyFingerprint(&s) {
		t.Errorf("fingerprint changed with the checkout directory")
	}
	other := s
	other.Location.Line++
	if classify.LegacyFingerprint(&other) == classify.LegacyFingerprint(&s) {
		t.Errorf("another line, same fingerprint")
	}
}

// TestFingerprintKeepsLibrarySitesApart: one program line that calls into a
// library may hold several sites — one per library function that made
// the syncs (transformers' generate(), Lightning's fit()); each keeps a
// fingerprint of its own, and a site no library made keeps the
// fingerprint of its file, line and calls alone.
func TestFingerprintKeepsLibrarySitesApart(t *testing.T) {
	for _, name := range []string{"lib_hf_generate.backtrace", "lib_lightning_pbar.backtrace", "ho2_lib_lightning_csvlogger.backtrace"} {
		t.Run(name, func(t *testing.T) {
			a := loadGz(t, filepath.Join(fixtureDir, "labelled", name+".sqlite.gz"))
			seen := map[string]string{}
			libs := 0
			for i := range a.Sites {
				s := &a.Sites[i]
				if s.Location.Library != "" {
					libs++
				}
				f := classify.Fingerprint(s)
				if other, dup := seen[f]; dup {
					t.Errorf("sites %s and %s share fingerprint %s (%s:%d, library %q)", other, s.ID, f,
						filepath.Base(s.Location.File), s.Location.Line, s.Location.Library)
				}
				seen[f] = s.ID
			}
			if libs < 2 {
				t.Errorf("%d sites made inside a library, want at least 2", libs)
			}
		})
	}
}
