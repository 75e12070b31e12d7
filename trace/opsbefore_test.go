package trace

import (
	"strings"
	"testing"
)

// TestOpsBefore checks Sync.OpsBefore on the real fixtures: filled only for
// the export with aten ranges, each range inside the gap since the
// thread's previous sync and outermost, and the ops torch's tensor printer
// runs before its masked_select there.
func TestOpsBefore(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		want    bool
	}{
		{"../fixtures/patterns_autograd.sqlite.gz", true},
		{"../fixtures/syncs_autograd.sqlite.gz", true},
		{"../fixtures/patterns_lean.sqlite.gz", false},
		{"../fixtures/patterns_backtrace.sqlite.gz", false},
	} {
		tr := loadFile(t, tc.fixture, LoadOptions{})
		filled := 0
		prevEnd := map[GlobalTid]int64{}
		for i := range tr.Syncs {
			s := &tr.Syncs[i]
			ops := s.OpsBefore()
			if len(ops) > 0 {
				filled++
			}
			if len(ops) > MaxOpsBefore {
				t.Errorf("%s e%d: %d ops before, max %d", tc.fixture, i+1, len(ops), MaxOpsBefore)
			}
			for j, r := range ops {
				if r.End > s.Start || (prevEnd[s.GlobalTid] != 0 && r.Start < prevEnd[s.GlobalTid]) {
					t.Errorf("%s e%d: range %q [%d, %d] is outside the gap before the sync", tc.fixture, i+1, r.Name, r.Start, r.End)
				}
				if j > 0 && r.Start < ops[j-1].End {
					t.Errorf("%s e%d: range %q is nested in %q: only outermost ranges are kept", tc.fixture, i+1, r.Name, ops[j-1].Name)
				}
			}
			prevEnd[s.GlobalTid] = s.End
		}
		if (filled > 0) != tc.want {
			t.Errorf("%s: %d syncs with ops before, want some: %v", tc.fixture, filled, tc.want)
		}
	}

	// patterns.py's print(loss): torch/_tensor_str.py runs isfinite, ne and
	// __and__ before its masked_select, the first sync of each print.
	tr := loadFile(t, "../fixtures/patterns_autograd.sqlite.gz", LoadOptions{})
	found := 0
	for i := range tr.Syncs {
		s := &tr.Syncs[i]
		if len(s.NVTX()) < 3 || !strings.HasPrefix(s.NVTX()[2].Name, "aten::masked_select, op_id") { // no "seq": under no_grad
			continue
		}
		var names []string
		for _, r := range s.OpsBefore() {
			names = append(names, r.Name)
		}
		joined := strings.Join(names, " | ")
		for _, want := range []string{"aten::isfinite", "aten::ne", "aten::__and__"} {
			if !strings.Contains(joined, want) {
				t.Errorf("e%d: ops before the print's masked_select lack %s: %s", i+1, want, joined)
			}
		}
		found++
	}
	if found != 3 {
		t.Errorf("found %d print masked_select syncs, want 3 (one per step)", found)
	}
}
