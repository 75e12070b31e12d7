package classify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"runtime"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/trace"
)

// labelledDir holds the labelled set of issue 15: programs/NAME.py and,
// per capture mode, NAME.MODE.sqlite.gz with NAME.MODE.truth.json.
// It is absolute (from this file's path) so that a test may change its
// working directory, as TestLabelledScore does.
func labelledDir() string { return fixturesSet("labelled") }

// fixturesSet is the folder fixtures/NAME, absolute: a set of captures
// with their truth files (fixtures/labelled/truth.py) beside programs/.
func fixturesSet(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "fixtures", name)
}

// labelledModes are the four ways every program was captured
// (fixtures/labelled/README.md has the nsys commands).
var labelledModes = []string{"lean", "default", "autograd", "backtrace"}

// notCommitted lists the captures kept out of the repository, and why. Any
// other program × mode without its fixture fails the test. (The three
// library captures of nsys's default mode came in once trim.sh --keep-osrt
// dropped the CPU samples and OS-runtime callchains nsyssync does not read.)
var notCommitted = map[string]string{
	"ho7_percent_ckpt_tag.autograd": "its nsys profile failed in round 7's one capture call (\"Connection reset by peer\", no report); not retried for want of device time",
}

// labelledTruth is what the scoring reads of NAME.MODE.truth.json.
type labelledTruth struct {
	Program string `json:"program"`
	Label   struct {
		Dependency   string `json:"dependency"`
		Category     string `json:"category"`
		SyncsPerStep int    `json:"syncs_per_step"`
	} `json:"label"`
	Expected   int    `json:"expected_events_in_measured"`
	Total      int    `json:"total_events_in_measured"`
	CountCheck string `json:"count_check"`
	Events     []struct {
		CorrelationID int64  `json:"correlation_id"`
		Pid           int64  `json:"pid"`
		Dependency    string `json:"dependency"`
		Category      string `json:"category"`
	} `json:"events"`
}

// heldOutRound is one set of held-out programs: written after the rules
// that the labelled set (and the rounds before) led to, to check them on
// patterns they had not seen, labelled and committed before any capture.
type heldOutRound struct {
	prefix string   // the programs' file names begin with it
	modes  []string // the capture modes it was captured in
}

// heldOutRounds: round 1 (ho_, after the kernel and printed-site rules)
// was captured lean and with nsys's defaults; round 2 (ho2_, after the
// GradScaler-kernel, library-display and copy-only-kept rules and the
// attribute and closure analysis) in all four modes; round 3 (ho3_, after
// stop 14's rules, before the after-the-loop analysis) in all four, and
// committed without the nsys-defaults captures (3 MB: the fixtures' size
// budget; their scores, measured once, are in docs/classifier.md); round 4
// (ho4_, after the after-the-loop analysis) lean and with backtraces;
// round 5 (ho5_, written before the program matcher of reads without
// frames, by a helper who did not read the classifier) lean and with
// autograd NVTX (its nsys-defaults captures, 3.5 MB, scored once: see
// docs/classifier.md); round 6 (ho6_, written against the description of
// the program matcher, five of them traps for it) lean and with autograd
// NVTX (its default captures likewise scored once); round 7 (ho7_,
// ordinary code with '%' formatting and key functions in new roles) the
// same; round 8 (ps_, long GPU steps, written with the reading of Python
// periodic samples) lean and lean with --python-sampling=true; round 9
// (ps9_, the same, written by a helper after the sampled-line reading
// landed, without reading the classifier) likewise, and round 10 (ps10_,
// another helper's, after round 9's fixes) too, and round 11 (ps11_, one
// bool read a step, after the 1-byte reads joined the matcher) and round
// 12 (ps12_, values read into records, after dict entries were followed
// by key); round 13 (ps13_, values handed to the program's own functions
// and methods) and round 14 (ps14_, values through the program's small
// functions) and round 15 (ps15_, values unpacked and passed through
// functions of the same file) and round 16 (ps16_, values classified,
// formatted or computed with by functions of the same file): captured in
// four modes, lean and pysample committed (docs/classifier.md has the
// other two modes' scores); round 17 (ps17_, values kept in attributes of
// the program's classes, in the script or a helper module) captured lean,
// with backtraces and with nsys's defaults, lean committed; round 18
// (ps18_, values kept in attributes and gone on into others, written
// after the attribute rules) likewise, and round 19 (ps19_, values handed
// out of objects by properties and methods); round 20 (ps20_, values
// handed to methods of the program's classes) and round 21 (ps21_,
// best-so-far values, flags and streaks kept by them) and round 22
// (ps22_, monitoring and bookkeeping objects) and round 23 (ps23_,
// metrics records written to files) and round 24 (ps24_, monitoring
// objects whose methods classify, count and flag a value) and round 25
// (ps25_, a project's utilities modules of several classes, each script
// using one or two) and round 26 (ps26_, the value read inside a method
// of the program's class), captured the same three ways, lean committed;
// round 27 (ps27_, ordinary scripts with a small tracker class) captured
// so and scored, its exports not committed, as rounds 28's (ps28_, scripts in
// the style of well-known public training code) and 29's (ps29_, the
// logging utilities of well-known reference code). Round 1's nsys-defaults exports left in
// stop 28 (the fixtures' size budget).
var heldOutRounds = []heldOutRound{
	{"ho_", []string{"lean"}},
	{"ho2_", labelledModes},
	{"ho3_", []string{"lean", "autograd", "backtrace"}},
	{"ho4_", []string{"lean", "backtrace"}},
	{"ho5_", []string{"lean", "autograd"}},
	{"ho6_", []string{"lean", "autograd"}},
	{"ho7_", []string{"lean", "autograd"}},
	{"ps_", []string{"lean", "pysample"}},
	{"ps9_", []string{"lean", "pysample"}},
	{"ps10_", []string{"lean", "pysample"}},
	{"ps11_", []string{"lean", "pysample"}},
	{"ps12_", []string{"lean", "pysample"}},
	{"ps13_", []string{"lean", "pysample"}},
	{"ps14_", []string{"lean", "pysample"}},
	{"ps15_", []string{"lean", "pysample"}},
	{"ps16_", []string{"lean", "pysample"}},
	{"ps17_", []string{"lean"}},
	{"ps18_", []string{"lean"}},
	{"ps19_", []string{"lean"}},
	{"ps20_", []string{"lean"}},
	{"ps21_", []string{"lean"}},
	{"ps22_", []string{"lean"}},
	{"ps23_", []string{"lean"}},
	{"ps24_", []string{"lean"}},
	{"ps25_", []string{"lean"}},
	{"ps26_", []string{"lean"}},
	{"ps27_", []string{}}, // scored from exports not committed: the fixtures' size budget
	{"ps28_", []string{}}, // likewise
	{"ps29_", []string{}}, // likewise
	{"ps30_", []string{}}, // likewise
	{"ps31_", []string{}}, // likewise
	{"ps32_", []string{}}, // likewise
	{"ps33_", []string{}}, // likewise
	{"ps34_", []string{}}, // likewise
	{"ps35_", []string{}}, // likewise (stop 31)
	{"ps36_", []string{}}, // likewise (stop 31)
	{"ps37_", []string{}}, // likewise (stop 31)
	{"ps38_", []string{}}, // likewise (stop 31)
	{"ps39_", []string{}}, // likewise (stop 32)
	{"ps40_", []string{}}, // likewise (stop 32)
	{"ps41_", []string{}}, // likewise (stop 32)
	{"ps42_", []string{}}, // likewise (stop 33)
	{"ps43_", []string{}}, // likewise (stop 33)
}

// heldOutModes are the capture modes of a held-out program; nil for the
// labelled set's own programs.
func heldOutModes(name string) []string {
	for _, r := range heldOutRounds {
		if strings.HasPrefix(name, r.prefix) {
			return r.modes
		}
	}
	return nil
}

// labelledPrograms lists the programs of fixtures/labelled/programs, sorted:
// those of the held-out round with the prefix, or with prefix "" the
// labelled set's own (no held-out round's).
func labelledPrograms(t *testing.T, prefix string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(labelledDir(), "programs", "*.py"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		b := strings.TrimSuffix(filepath.Base(p), ".py")
		switch {
		case strings.HasPrefix(b, "_"):
		case prefix == "" && heldOutModes(b) == nil, prefix != "" && strings.HasPrefix(b, prefix):
			out = append(out, b)
		}
	}
	sort.Strings(out)
	if want := map[string]int{"": 32, "ho_": 10, "ho2_": 9, "ho3_": 8, "ho4_": 6, "ho5_": 10, "ho6_": 10, "ho7_": 10, "ps_": 6, "ps9_": 8, "ps10_": 8, "ps11_": 8, "ps12_": 8, "ps13_": 8, "ps14_": 8, "ps15_": 8, "ps16_": 8, "ps17_": 8, "ps18_": 8, "ps19_": 8, "ps20_": 8, "ps21_": 8, "ps22_": 8, "ps23_": 8, "ps24_": 8, "ps25_": 8, "ps26_": 8}[prefix]; len(out) < want {
		t.Fatalf("%d labelled programs (prefix %q), want at least %d", len(out), prefix, want)
	}
	return out
}

// readLabelledTruth reads NAME.MODE.truth.json and refuses one whose count
// check failed.
func readLabelledTruth(t *testing.T, dir, name string) *labelledTruth {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tr labelledTruth
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("%s.truth.json: %v", name, err)
	}
	if tr.CountCheck != "ok" || tr.Total != tr.Expected || len(tr.Events) != tr.Total {
		t.Fatalf("%s.truth.json: count check %q, %d events, %d expected", name, tr.CountCheck, len(tr.Events), tr.Expected)
	}
	return &tr
}

// loadLabelled decompresses and loads one labelled fixture.
func loadLabelled(t *testing.T, dir, name string) *trace.Trace {
	t.Helper()
	return load(t, fixturegz.Gunzip(t, filepath.Join(dir, name+".sqlite.gz"), t.TempDir()))
}

// inMeasured says whether a sync lies inside the NVTX range "measured".
func inMeasured(s *trace.Sync) bool {
	for _, r := range s.NVTX() {
		if r.Name == "measured" {
			return true
		}
	}
	return false
}
