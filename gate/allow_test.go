package gate

import (
	"context"
	"path/filepath"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/report"
	"github.com/nsyssync/nsyssync/trace"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
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
	l := load(t, "syncs_backtrace.sqlite", "")
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

// TestFingerprintStable: an export's fingerprints are unique, 12 hex
// digits, and the same on every load.
func TestFingerprintStable(t *testing.T) {
	lean := load(t, "syncs_lean.sqlite", "measured").analysis
	again := load(t, "syncs_lean.sqlite", "measured").analysis
	seen := map[string]bool{}
	for i := range lean.Sites {
		f := classify.Fingerprint(&lean.Sites[i])
		if len(f) != 12 || seen[f] {
			t.Errorf("site %s: fingerprint %q not 12 hex digits or not unique", lean.Sites[i].ID, f)
		}
		seen[f] = true
		if g := classify.Fingerprint(&again.Sites[i]); g != f {
			t.Errorf("site %s: fingerprint %s, then %s", lean.Sites[i].ID, f, g)
		}
	}
}

// TestFingerprintIgnoresCheckout: for the legacy fingerprint (still
// accepted by allow-lists), the same program line in another checkout
// directory keeps it; another line does not.
func TestFingerprintIgnoresCheckout(t *testing.T) {
	a := load(t, "syncs_backtrace.sqlite", "").analysis
	s := a.Sites[siteWith(t, a, "log_loss")]
	moved := s
	moved.Location.File = strings.Replace(s.Location.File, "/work/main/", "/home/runner/work/nsyssync/", 1)
	moved.Key = strings.Replace(s.Key, "/work/main/", "/home/runner/work/nsyssync/", 1)
	if moved.Location.File == s.Location.File {
		t.Fatalf("fixture path %q not under /work/main", s.Location.File)
	}
	if classify.LegacyFingerprint(&moved) != classify.LegacyFingerprint(&s) {
		t.Errorf("fingerprint changed with the checkout directory")
	}
	other := s
	other.Location.Line++
	if classify.LegacyFingerprint(&other) == classify.LegacyFingerprint(&s) {
		t.Errorf("another line, same fingerprint")
	}
}

// TestFingerprintKeepsLibrarySitesApart: one program line that calls into a
// library may hold several sites — one per library function that made
// the syncs (transformers' generate(), Lightning's fit()); each keeps a
// fingerprint of its own, and a site no library made keeps the
// fingerprint of its file, line and calls alone.
func TestFingerprintKeepsLibrarySitesApart(t *testing.T) {
	for _, name := range []string{"lib_hf_generate.backtrace", "lib_lightning_pbar.backtrace", "ho2_lib_lightning_csvlogger.backtrace"} {
		t.Run(name, func(t *testing.T) {
			path := fixturegz.Gunzip(t, filepath.Join(fixtureDir, "labelled", name+".sqlite.gz"), t.TempDir())
			x, err := trace.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			tr, err := x.Load(context.Background(), trace.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			a := report.New(tr)
			seen := map[string]string{}
			libs := 0
			for i := range a.Sites {
				s := &a.Sites[i]
				if s.Location.Library != "" {
					libs++
				}
				f := classify.Fingerprint(s)
				if other, dup := seen[f]; dup {
					t.Errorf("sites %s and %s share fingerprint %s (%s:%d, library %q)", other, s.ID, f,
						filepath.Base(s.Location.File), s.Location.Line, s.Location.Library)
				}
				seen[f] = s.ID
			}
			if libs < 2 {
				t.Errorf("%d sites made inside a library, want at least 2", libs)
			}
		})
	}
}

// TestAllowListAcceptsLegacyFingerprints: an allow-list written with the
// fingerprints of earlier reports still matches the same sites.
func TestAllowListAcceptsLegacyFingerprints(t *testing.T) {
	a := load(t, "syncs_lean.sqlite", "measured").analysis
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
