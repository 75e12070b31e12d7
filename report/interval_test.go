package report

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/estimate"
)

// TestSavingsIntervalShown: on a real training loop, estimated by the
// simulator, the sites that repeat carry their interval in the JSON
// (estimated_savings_low_ns ≤ estimated_savings_ns ≤ …_high_ns) and in
// the text, Markdown and HTML reports, which say what it is; the site of
// one sync has none.
func TestSavingsIntervalShown(t *testing.T) {
	ctx := context.Background()
	l := load(t, "gt_mlp_train.sqlite.gz", "measured")
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
	for name, out := range map[string]string{"markdown": md.String(), "text": txt.String(), "html": page.String()} {
		if !strings.Contains(out, "the 10th to 90th percentile of that saving") {
			t.Errorf("the %s report does not say what the interval is", name)
		}
	}
	if withInterval < 3 {
		t.Errorf("%d sites with an interval, want the loop's 3", withInterval)
	}
}

// TestSavingsLegendOnlyWithIntervals: a report says what an interval is
// only when a saving it shows has one: a site's, the false-dependency
// set's or the ceiling's.
func TestSavingsLegendOnlyWithIntervals(t *testing.T) {
	iv := &estimate.Interval{LowNs: 900, HighNs: 990, Windows: 3}
	tests := []struct {
		name string
		set  func(res *estimate.Result)
		want bool
	}{
		{"none", func(*estimate.Result) {}, false},
		{"a site's", func(res *estimate.Result) { res.Sites[0].Interval = iv }, true},
		{"the ceiling's", func(res *estimate.Result) { res.AllSyncs.Interval = iv }, true},
		{"the false set's", func(res *estimate.Result) { res.FalseDependency.Interval = iv }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := load(t, "syncs_lean.sqlite.gz", "").analysis
			res := &estimate.Result{AllSyncs: estimate.Scenario{SavingsNs: 1000}, FalseDependency: estimate.Scenario{SavingsNs: 1000}}
			for _, s := range a.Sites {
				res.Sites = append(res.Sites, estimate.SiteEstimate{ID: s.ID, SavingsNs: 1000})
			}
			tc.set(res)
			a.Estimates = FromEstimate(res)
			var md bytes.Buffer
			if err := a.WriteMarkdown(&md, MarkdownOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(md.String(), "10th to 90th percentile"); got != tc.want {
				t.Errorf("legend shown %v, want %v", got, tc.want)
			}
			if got := strings.Contains(md.String(), "(900–990ns, "); got != tc.want {
				t.Errorf("interval shown %v, want %v", got, tc.want)
			}
		})
	}
}
