package trace

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
)

// TestPythonSamples checks the Python periodic samples given to syncs
// against a brute-force reading of the same exports: a sync gets the
// frames of the first sample of the "Python Periodic Sampling" domain
// taken on its thread inside [Start, End] (read here with plain SQL and
// the JSON payload), and no other sync gets any. Lean captures of the
// same programs have no samples and no frames.
func TestPythonSamples(t *testing.T) {
	gzs, _ := filepath.Glob("../fixtures/labelled/ps_*.sqlite.gz")
	if len(gzs) < 12 {
		t.Fatalf("%d fixtures/labelled/ps_* exports, want 12 (6 programs, lean and pysample)", len(gzs))
	}
	dir := t.TempDir()
	for _, gz := range gzs {
		path := fixturegz.Gunzip(t, gz, dir)
		name := strings.TrimSuffix(filepath.Base(path), ".sqlite")
		sampling := strings.HasSuffix(name, ".pysample")
		for _, sqlOnly := range []bool{false, true} {
			testPythonSamples(t, path, name, sampling, sqlOnly)
		}
	}
}

// testPythonSamples loads one export through the file reader or SQL alone
// and checks its syncs against bruteSampleFrames.
func testPythonSamples(t *testing.T, path, name string, sampling, sqlOnly bool) {
	if sqlOnly {
		name += "/sql"
	}
	t.Run(name, func(t *testing.T) {
		x, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		x.src.sqlOnly = sqlOnly
		tr, err := x.Load(context.Background(), LoadOptions{})
		x.Close()
		if err != nil {
			t.Fatal(err)
		}
		if tr.Evidence.PythonSamples != sampling {
			t.Fatalf("Evidence.PythonSamples = %v, want %v", tr.Evidence.PythonSamples, sampling)
		}
		want := bruteSampleFrames(t, path, tr.Syncs)
		sampled, inMeasured := 0, 0
		for i := range tr.Syncs {
			s := &tr.Syncs[i]
			got := s.Python()
			if s.PythonSampled() != (want[i] != nil) {
				t.Fatalf("sync %d (%s at %d): PythonSampled %v, a sample inside: %v", i, strings.Join(s.APIs(), "+"), s.Start, s.PythonSampled(), want[i] != nil)
			}
			if want[i] == nil {
				if len(got) > 0 {
					t.Fatalf("sync %d: %d Python frames without a backtrace or a sample", i, len(got))
				}
				continue
			}
			sampled++
			if len(got) != len(want[i]) {
				t.Fatalf("sync %d: %d frames, the sample has %d", i, len(got), len(want[i]))
			}
			for j := range got {
				if got[j].Function != want[i][j].Function || got[j].Line != want[i][j].Line || got[j].File != want[i][j].File {
					t.Fatalf("sync %d frame %d: %+v, the sample's %+v", i, j, got[j], want[i][j])
				}
			}
			for _, r := range s.NVTX() {
				if r.Name == "measured" {
					inMeasured++
					if got[0].Function != "step" || !strings.HasPrefix(filepath.Base(got[0].File), "ps_") {
						t.Errorf("sync %d in measured: innermost frame %+v, want the program's step", i, got[0])
					}
				}
			}
		}
		if tr.Evidence.PythonSampledSyncs != sampled {
			t.Errorf("Evidence.PythonSampledSyncs = %d, counted %d", tr.Evidence.PythonSampledSyncs, sampled)
		}
		// Every pattern sync of round 8 waits milliseconds: each holds samples.
		if sampling && inMeasured < 3 {
			t.Errorf("%d syncs inside measured hold a sample, want at least 3", inMeasured)
		}
		t.Logf("%d syncs, %d with a sample inside (%d in measured)", len(tr.Syncs), sampled, inMeasured)
	})
}

// bruteSampleFrames returns, per sync, the frames of the first sample of
// the Python sampling domain on its thread inside [Start, End], nil for
// none: plain SQL over NVTX_EVENTS and StringIds, the JSON payload.
func bruteSampleFrames(t *testing.T, path string, syncs []Sync) [][]PyFrame {
	t.Helper()
	db := rawDB(t, path)
	out := make([][]PyFrame, len(syncs))
	rows, err := db.Query(`SELECT m.globalTid, m.start, m.jsonText FROM NVTX_EVENTS m JOIN NVTX_EVENTS d
		ON d.eventType = 75 AND d.text = 'Python Periodic Sampling' AND d.domainId = m.domainId
		AND d.globalTid / 16777216 = m.globalTid / 16777216
		WHERE m.eventType = 34 ORDER BY m.start`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	strs := map[int64]string{}
	str := func(id int64) string {
		if s, ok := strs[id]; ok {
			return s
		}
		var s string
		if err := db.QueryRow(`SELECT value FROM StringIds WHERE id = ?`, id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		strs[id] = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
		return strs[id]
	}
	type sample struct {
		tid, at int64
		text    string
	}
	var samples []sample
	for rows.Next() {
		var s sample
		if err := rows.Scan(&s.tid, &s.at, &s.text); err != nil {
			t.Fatal(err)
		}
		samples = append(samples, s)
	}
	for i := range syncs {
		sy := &syncs[i]
		if sy.PythonSampled() == false && len(sy.Python()) > 0 {
			continue // a backtrace of its own
		}
		for _, s := range samples {
			if s.tid != int64(sy.GlobalTid) || s.at < sy.Start || s.at > sy.End {
				continue
			}
			var doc map[string]struct {
				Frames []struct{ Function, File, Line int64 }
			}
			if err := json.Unmarshal([]byte(s.text), &doc); err != nil {
				t.Fatal(err)
			}
			for _, v := range doc {
				for _, f := range v.Frames {
					out[i] = append(out[i], PyFrame{Function: str(f.Function), File: str(f.File), Line: f.Line})
				}
			}
			break
		}
	}
	return out
}
