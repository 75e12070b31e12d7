package classify

import (
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// TestLibraryOf: the library between the program and torch, its entry
// (what the program called) and where it read; none when only torch's own
// frames are there (a venv under /opt/torch/ is not torch).
func TestLibraryOf(t *testing.T) {
	venv := "/opt/torch/.venv/lib/python3.12/site-packages/"
	for _, tc := range []struct {
		name           string
		frames         []trace.PyFrame
		lib, entry, in string
	}{
		{"torch only", []trace.PyFrame{{File: venv + "torch/_tensor.py", Function: "item"}}, "", "", ""},
		{"transformers through a torch decorator", []trace.PyFrame{
			{File: venv + "transformers/generation/utils.py", Line: 2192, Function: "_tensor_or_none"},
			{File: venv + "transformers/generation/utils.py", Line: 2658, Function: "generate"},
			{File: venv + "torch/utils/_contextlib.py", Line: 124, Function: "decorate_context"},
		}, "transformers", "generate", "_tensor_or_none"},
		{"one frame", []trace.PyFrame{{File: venv + "tqdm/std.py", Line: 1, Function: "set_postfix"}}, "tqdm", "set_postfix", "set_postfix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lc, ok := libraryOf(newNames(), tc.frames)
			if ok != (tc.lib != "") || lc.library != tc.lib || lc.entry.Function != tc.entry || lc.inner.Function != tc.in {
				t.Errorf("libraryOf = %+v, %v; want %s %s %s", lc, ok, tc.lib, tc.entry, tc.in)
			}
		})
	}
}

// TestSyncsInsideLibraries: on real captures of transformers' generate()
// and of Lightning, every site whose syncs the library made names the
// library's function and phrases the fix at the program's call; none
// quotes the program's line as the one that reads.
func TestSyncsInsideLibraries(t *testing.T) {
	for _, tc := range []struct{ fixture, library, entry string }{
		{"lib_hf_generate.backtrace", "transformers", "generate"},
		{"lib_lightning_pbar.backtrace", "lightning", ""},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			tr := loadLabelled(t, labelledDir(), tc.fixture)
			found := 0
			for _, v := range (Options{}).Verdicts(tr) {
				if len(v.Evidence) == 0 || !strings.HasPrefix(v.Evidence[0], "inside "+tc.library+": ") {
					continue
				}
				if !strings.HasPrefix(v.Fix, "This sync is made inside `") || !strings.Contains(v.Fix, "()` of "+tc.library) {
					t.Fatalf("fix not phrased at the program's call: %q", v.Fix)
				}
				if tc.entry == "" || strings.Contains(v.Evidence[0], "`"+tc.entry+"` (") {
					found++
				}
			}
			if found == 0 {
				t.Fatalf("no sync names %s %s", tc.library, tc.entry)
			}
		})
	}
}
