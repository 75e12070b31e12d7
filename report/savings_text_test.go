package report

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/estimate"
)

// TestSavingsFormats: a saving prints with its share of the region, no
// saving as "none", and a negative one as what the rewrite costs — never
// as a dash with a negative share ("- (-0.0%)"); an interval prints
// compactly, its unit once when both ends share it.
func TestSavingsFormats(t *testing.T) {
	tests := []struct{ call, got, want string }{
		{"savingsAmount(1.46ms)", savingsAmount(1_460_000, 11_774_000), "1.46ms (12.4%)"},
		{"savingsAmount(300ns)", savingsAmount(300, 11_774_000_000), "300ns (0.0%)"},
		{"savingsAmount(0)", savingsAmount(0, 11_774_000), "none"},
		{"savingsAmount(-12µs)", savingsAmount(-12_000, 11_774_000), "−12.0µs (the rewrite costs more)"},
		{"savingsAmount(-40ns)", savingsAmount(-40, 11_774_000), "−40ns (the rewrite costs more)"},
		{"durationRange(ms)", durationRange(1_873_204, 1_960_801), "1.87–1.96ms"},
		{"durationRange(µs)", durationRange(87_481, 97_027), "87.5–97.0µs"},
		{"durationRange(µs, ms)", durationRange(950_000, 1_040_000), "950.0µs–1.04ms"},
		{"durationRange(negative)", durationRange(-2_000, 3_000), "−2.0–3.0µs"},
		{"durationRange(ns)", durationRange(400, 900), "400–900ns"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.call, tc.got, tc.want)
		}
		if strings.Contains(tc.got, "- (") || strings.Contains(tc.got, "-0.0%") {
			t.Errorf("%s = %q prints a negative share", tc.call, tc.got)
		}
	}
}

// TestTotalsSayTogether: the summary names the all-syncs figure as a
// removal of every sync together, not as a total of the sites.
func TestTotalsSayTogether(t *testing.T) {
	l := load(t, "syncs_lean.sqlite.gz", "")
	a := l.analysis
	a.Estimates = FromEstimate(&estimate.Result{
		FalseDependency: estimate.Scenario{SavingsNs: -5_000},
		AllSyncs:        estimate.Scenario{SavingsNs: 2_000_000},
	})
	got := a.totalSavingsText()
	for _, want := range []string{"−5.0µs (the rewrite costs more) removable", "with all syncs removed together"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "overall") {
		t.Errorf("summary %q says overall", got)
	}
}

// TestRepresentativeSyncIsCostliest: the HTML detail shows, of each site
// of a real region, the sync of the longest wait plus GPU idle after it.
func TestRepresentativeSyncIsCostliest(t *testing.T) {
	for _, fx := range []struct{ name, nvtx string }{{"syncs_backtrace.sqlite.gz", "measured"}, {"gt_mlp_train.sqlite.gz", ""}} {
		l := load(t, fx.name, fx.nvtx)
		a := l.analysis
		for _, site := range a.Ordered() {
			idx := representativeSync(a.Trace, site)
			if idx < 0 {
				t.Fatalf("%s %s: no sync picked of %d", fx.name, site.ID, len(site.Syncs))
			}
			best := syncCost(&a.Trace.Syncs[idx])
			for _, i := range site.Syncs {
				if c := syncCost(&a.Trace.Syncs[i]); c > best || c == best && i < idx {
					t.Errorf("%s %s: picked e%d (cost %d), e%d costs %d", fx.name, site.ID, idx+1, best, i+1, c)
				}
			}
		}
	}
}

// TestHTMLSimulatedNote: an HTML report with estimated savings never says
// the simulated view is "not available yet"; one without says why none is
// drawn.
func TestHTMLSimulatedNote(t *testing.T) {
	tests := []struct {
		name      string
		estimated bool
		want      string
	}{
		{"estimated", true, ""},
		{"not estimated", false, "No simulated timeline: the savings were not estimated."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := load(t, "syncs_lean.sqlite.gz", "")
			a := l.analysis
			if tc.estimated {
				res := &estimate.Result{}
				for _, s := range a.Sites {
					res.Sites = append(res.Sites, estimate.SiteEstimate{ID: s.ID, SavingsNs: 1000})
				}
				a.Estimates = FromEstimate(res)
			}
			var buf bytes.Buffer
			if err := a.WriteHTML(context.Background(), &buf, HTMLOptions{Timelines: l.timelines, Details: 2}); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			if strings.Contains(page, "not available yet") {
				t.Error("the page says the simulated view is not available yet")
			}
			if tc.want != "" && !strings.Contains(page, tc.want) {
				t.Errorf("the page lacks %q", tc.want)
			}
			if tc.estimated && strings.Contains(page, "No simulated timeline") {
				t.Error("an estimated page says the savings were not estimated")
			}
		})
	}
}
