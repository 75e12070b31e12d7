package gate

import (
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/report"
)

func TestParseAllowList(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		entries int
		err     string
	}{
		{"empty file", "", 0, ""},
		{"all three kinds", `
allow:
  - fingerprint: 0123456789ab
    reason: warm-up
  - python: train.py:42
    reason: logged on purpose
  - native: THPVariable_item
    reason: accepted
`, 3, ""},
		{"python without line", "allow:\n  - python: train.py\n    reason: all of it\n", 1, ""},
		{"no reason", "allow:\n  - python: train.py:3\n", 0, "needs a reason"},
		{"blank reason", "allow:\n  - python: train.py:3\n    reason: '  '\n", 0, "needs a reason"},
		{"two kinds", "allow:\n  - python: a.py:1\n    native: f\n    reason: r\n", 0, "exactly one"},
		{"no kind", "allow:\n  - reason: r\n", 0, "exactly one"},
		{"bad line", "allow:\n  - python: a.py:x1\n    reason: r\n", 0, "not a number"},
		{"unknown key", "allow:\n  - pyton: a.py:1\n    reason: r\n", 0, "not a valid allow-list"},
		{"not YAML", "allow: [", 0, "not a valid allow-list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseAllowList(strings.NewReader(tc.yaml), ".nsyssync.yaml")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), ".nsyssync.yaml") {
					t.Fatalf("error %v, want one naming the file and %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Entries) != tc.entries {
				t.Errorf("%d entries, want %d", len(l.Entries), tc.entries)
			}
		})
	}
}

// TestAllowListMatch matches entries of each kind against the sites of a
// real export with Python and native backtraces.
func TestAllowListMatch(t *testing.T) {
	l := load(t, "syncs_backtrace.sqlite.gz", "")
	a := l.analysis
	nonzero := &a.Sites[siteWith(t, a, "control_flow")]
	logLoss := &a.Sites[siteWith(t, a, "log_loss")]
	tests := []struct {
		name  string
		entry AllowEntry
		want  []*classify.Site
	}{
		{"fingerprint", AllowEntry{Fingerprint: classify.Fingerprint(logLoss)}, []*classify.Site{logLoss}},
		{"fingerprint, upper case", AllowEntry{Fingerprint: strings.ToUpper(classify.Fingerprint(logLoss))}, []*classify.Site{logLoss}},
		{"python file:line", AllowEntry{Python: "programs/syncs.py:34"}, []*classify.Site{nonzero}},
		{"python base name", AllowEntry{Python: "syncs.py:18"}, []*classify.Site{logLoss}},
		{"python wrong line", AllowEntry{Python: "syncs.py:17"}, nil},
		{"python partial name is no match", AllowEntry{Python: "yncs.py:18"}, nil},
		{"native frame", AllowEntry{Native: "THPVariable_is_nonzero"}, []*classify.Site{nonzero}},
		{"native frame absent", AllowEntry{Native: "no_such_symbol"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.entry.Reason = "because"
			got := (&AllowList{Entries: []AllowEntry{tc.entry}}).Match(a)
			if len(got) != len(tc.want) {
				t.Fatalf("matched %v, want %d sites", got, len(tc.want))
			}
			for _, s := range tc.want {
				if got[s.ID] != "because" {
					t.Errorf("site %s (%s) not matched: %v", s.ID, report.Where(s), got)
				}
			}
		})
	}
	// A whole-file entry takes every site of the file.
	all := (&AllowList{Entries: []AllowEntry{{Python: "syncs.py", Reason: "r"}}}).Match(a)
	if len(all) != len(a.Sites) {
		t.Errorf("syncs.py matched %d of %d sites", len(all), len(a.Sites))
	}
	if got := (*AllowList)(nil).Match(a); len(got) != 0 {
		t.Errorf("nil list matched %v", got)
	}
}

// TestAllowListAcceptsLegacyFingerprints: an allow-list written with the
// fingerprints of earlier reports still matches the same sites.
func TestAllowListAcceptsLegacyFingerprints(t *testing.T) {
	a := load(t, "syncs_lean.sqlite.gz", "measured").analysis
	s := &a.Sites[0]
	if classify.Fingerprint(s) == classify.LegacyFingerprint(s) {
		t.Fatalf("site %s: new and legacy fingerprints agree (%s): nothing to test", s.ID, classify.Fingerprint(s))
	}
	for _, fp := range []string{classify.Fingerprint(s), classify.LegacyFingerprint(s), strings.ToUpper(classify.LegacyFingerprint(s))} {
		l := &AllowList{Entries: []AllowEntry{{Fingerprint: fp, Reason: "known"}}}
		if got := l.Match(a); got[s.ID] != "known" {
			t.Errorf("entry %s did not match site %s (%v)", fp, s.ID, got)
		}
	}
}
