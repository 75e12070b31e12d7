package report

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/contract"
	"github.com/nsyssync/nsyssync/estimate"
)

// estimated loads an export (a corpus file when corpus is set) and runs
// the estimator on it.
func estimated(t *testing.T, name string, corpus bool) *Analysis {
	t.Helper()
	path := name
	if corpus {
		path = filepath.Join(corpusDir, name) // load reads it from ../fixtures
		if _, err := os.Stat(filepath.Join(fixtureDir, path)); err != nil {
			t.Skipf("no shared corpus: %v", err)
		}
	}
	l := load(t, path, "")
	res, err := estimate.Run(context.Background(), l.export, l.analysis.Trace, l.analysis.Sites, estimate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.analysis.Estimates = FromEstimate(res)
	return l.analysis
}

// TestSavingsExplanation: each kind of site says what its saving is made
// of, in every format.
func TestSavingsExplanation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		corpus bool
		site   func(a *Analysis) int // the site to look at, by index in a.Sites
		want   []string
	}{
		{"pytorch-llm-inference-sim_rtx4060ti_nsys2024.6.sqlite", true, bySyncs(512),
			// 8.74 ms blocked, 16.79 ms saved: the host code goes too.
			[]string{"saves 16.79ms: the wait 8.74ms + the host code that issues it", "more than the blocked time, because the host code around the sync goes with it"}},
		{"openmp-offload-heat_t4_nsys2023.3.sqlite", true, byNeeded,
			[]string{"needed data: the host uses the 512.0 MB it copies", "deleting the wait would save"}},
		{"syncs_lean.sqlite.gz", false, byLargestCost,
			// the stream sync whose wait_stream rewrite costs more than it.
			[]string{"costs 18.4µs: the wait 14.9µs"}},
		{"syncs_autograd.sqlite.gz", false, byPhase,
			[]string{"not counted in any total or the gate: profiler", "context creation", "deleting its waits would save"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := estimated(t, tc.name, tc.corpus)
			i := tc.site(a)
			if i < 0 {
				t.Fatalf("no such site among %d", len(a.Sites))
			}
			line := a.SavingsExplanation(&a.Sites[i])
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("%s: %q lacks %q", a.Sites[i].ID, line, w)
				}
			}
			var b strings.Builder
			if err := a.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			var doc contract.Document
			if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
				t.Fatal(err)
			}
			for _, s := range doc.Sites {
				if s.ID == a.Sites[i].ID && (s.SavingsExplained != line || s.SavingsParts == nil || s.SavingsParts.WaitNs != a.Sites[i].BlockedNs) {
					t.Errorf("JSON site %s: explained %q, parts %+v", s.ID, s.SavingsExplained, s.SavingsParts)
				}
			}
			var text strings.Builder
			if err := a.WriteText(&text, TextOptions{Top: len(a.Sites), Details: len(a.Sites), Width: 10000}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), line) {
				t.Errorf("the terminal report lacks %q", line)
			}
		})
	}
}

func bySyncs(n int) func(a *Analysis) int {
	return func(a *Analysis) int {
		for i, s := range a.Sites {
			if len(s.Syncs) == n {
				return i
			}
		}
		return -1
	}
}

func byNeeded(a *Analysis) int {
	for i, s := range a.Sites {
		if s.NeededCopyBytes > 0 {
			return i
		}
	}
	return -1
}

// byLargestCost picks the site whose rewrite costs the most.
func byLargestCost(a *Analysis) int {
	best := -1
	for i := range a.Sites {
		if ns := a.SavingsNs(&a.Sites[i]); ns < 0 && (best < 0 || ns < a.SavingsNs(&a.Sites[best])) {
			best = i
		}
	}
	return best
}

func byPhase(a *Analysis) int {
	for i, s := range a.Sites {
		if !s.Phase.Counted() && s.BlockedNs > 100_000_000 {
			return i
		}
	}
	return -1
}
