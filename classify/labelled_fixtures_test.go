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
func labelledDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "fixtures", "labelled")
}

// labelledModes are the four ways every program was captured
// (fixtures/labelled/README.md has the nsys commands).
var labelledModes = []string{"lean", "default", "autograd", "backtrace"}

// notCommitted lists the captures kept out of the repository, and why. Any
// other program × mode without its fixture fails the test. (The three
// library captures of nsys's default mode came in once trim.sh --keep-osrt
// dropped the CPU samples and OS-runtime callchains nsyssync does not read.)
var notCommitted = map[string]string{}

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

// heldOutPrefix names the held-out programs: written after the rules that
// the labelled set led to, to check them on patterns they had not seen,
// and captured in two modes only (heldOutModes).
const heldOutPrefix = "ho_"

// heldOutModes are the held-out programs' capture modes.
var heldOutModes = []string{"lean", "default"}

// labelledPrograms lists the programs of fixtures/labelled/programs, sorted:
// the held-out ones (heldOut) or the others.
func labelledPrograms(t *testing.T, heldOut bool) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(labelledDir(), "programs", "*.py"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		b := filepath.Base(p)
		if !strings.HasPrefix(b, "_") && strings.HasPrefix(b, heldOutPrefix) == heldOut {
			out = append(out, strings.TrimSuffix(b, ".py"))
		}
	}
	sort.Strings(out)
	if want := map[bool]int{false: 32, true: 10}[heldOut]; len(out) < want {
		t.Fatalf("%d labelled programs (held out: %v), want at least %d", len(out), heldOut, want)
	}
	return out
}

// readLabelledTruth reads NAME.MODE.truth.json and refuses one whose count
// check failed.
func readLabelledTruth(t *testing.T, name string) *labelledTruth {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(labelledDir(), name+".truth.json"))
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
func loadLabelled(t *testing.T, name string) *trace.Trace {
	t.Helper()
	return load(t, fixturegz.Gunzip(t, filepath.Join(labelledDir(), name+".sqlite.gz"), t.TempDir()))
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

// pidOf is the process id inside a globalTid/globalPid.
func pidOf(global int64) int64 { return (global >> 24) & 0xFFFFFF }
