package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/estimate"
)

// TestSampledEstimateShown: an estimate extrapolated from a sample — of the
// region's windows or of one site's occurrences — says so in the totals of
// the JSON contract and in the summary line; a whole-region one does not.
func TestSampledEstimateShown(t *testing.T) {
	tests := []struct {
		name        string
		regionWide  bool
		siteSampled bool
		want        bool
	}{
		{"whole region", false, false, false},
		{"region sampled in windows", true, false, true},
		{"one site sampled", false, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := load(t, "syncs_lean.sqlite.gz", "")
			a := l.analysis
			res := &estimate.Result{Sampled: tc.regionWide}
			for i, s := range a.Sites {
				res.Sites = append(res.Sites, estimate.SiteEstimate{ID: s.ID, SavingsNs: 1000, Sampled: tc.siteSampled && i == 0})
			}
			a.Estimates = FromEstimate(res)
			if got := strings.HasSuffix(a.totalSavingsText(), "; sampled"); got != tc.want {
				t.Errorf("summary %q: sampled shown = %v, want %v", a.totalSavingsText(), got, tc.want)
			}
			var buf bytes.Buffer
			if err := a.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Totals map[string]any `json:"totals"`
			}
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if got := doc.Totals["estimate_sampled"] == true; got != tc.want {
				t.Errorf("totals.estimate_sampled = %v, want %v", doc.Totals["estimate_sampled"], tc.want)
			}
		})
	}
}
