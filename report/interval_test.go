package report

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/estimate"
)

// TestDurationRange: an interval prints compactly, its unit once when both
// ends share it.
func TestDurationRange(t *testing.T) {
	tests := []struct {
		lo, hi int64
		want   string
	}{
		{1_873_204, 1_960_801, "1.87–1.96ms"},
		{87_481, 97_027, "87.5–97.0µs"},
		{950_000, 1_040_000, "950.0µs–1.04ms"},
		{-2_000, 3_000, "−2.0–3.0µs"},
		{400, 900, "400–900ns"},
	}
	for _, tc := range tests {
		if got := durationRange(tc.lo, tc.hi); got != tc.want {
			t.Errorf("durationRange(%d, %d) = %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestSavingsIntervalShown: on a real training loop, estimated by the
// simulator, the sites that repeat carry their interval in the JSON
// (estimated_savings_low_ns ≤ estimated_savings_ns ≤ …_high_ns) and in
// the text, Markdown and HTML reports; the site of one sync has none.
func TestSavingsIntervalShown(t *testing.T) {
	ctx := context.Background()
	l := load(t, "gt_mlp_train.sqlite", "measured")
	a := l.analysis
	res, err := estimate.Run(ctx, l.export, a.Trace, a.Sites, estimate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a.Estimates = FromEstimate(res)
	var md, txt, page bytes.Buffer
	if err := a.WriteMarkdown(&md, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteText(&txt, TextOptions{Width: 200}); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteHTML(ctx, &page, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	withInterval := 0
	for _, s := range jsonSites(t, a) {
		id, _ := s["id"].(string)
		e := a.Estimates.Sites[id]
		lo, hasLo := s["estimated_savings_low_ns"].(float64)
		hi, hasHi := s["estimated_savings_high_ns"].(float64)
		if hasLo != (e.Interval != nil) || hasHi != hasLo {
			t.Errorf("%s: low %v high %v in the JSON, estimate's interval %v", id, s["estimated_savings_low_ns"], s["estimated_savings_high_ns"], e.Interval)
			continue
		}
		count, _ := s["count"].(float64)
		if count == 1 && hasLo {
			t.Errorf("%s: one sync but an interval", id)
		}
		if !hasLo {
			continue
		}
		withInterval++
		if saved := s["estimated_savings_ns"].(float64); lo > saved || hi < saved || hi <= lo {
			t.Errorf("%s: interval [%v, %v] around %v", id, lo, hi, saved)
		}
		shown := durationRange(int64(lo), int64(hi))
		for name, out := range map[string]string{"markdown": md.String(), "text": txt.String(), "html": page.String()} {
			if !strings.Contains(out, shown) {
				t.Errorf("%s: the %s report lacks the interval %s", id, name, shown)
			}
		}
	}
	if withInterval < 3 {
		t.Errorf("%d sites with an interval, want the loop's 3", withInterval)
	}
}
