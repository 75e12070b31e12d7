package trace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// truthFile is the shape of fixtures/*.truth.json (see fixtures/README.md).
type truthFile struct {
	Fixture               string       `json:"fixture"`
	Processes             int          `json:"processes"`
	Pids                  []int64      `json:"pids"`
	LegacyStream          int64        `json:"legacy_default_stream_id"`
	Events                []truthEvent `json:"events"`
	TotalEvents           int          `json:"total_events"`
	TotalEventsInMeasured int          `json:"total_events_in_measured"`
}

type truthEvent struct {
	Pattern        string         `json:"pattern"`
	Python         string         `json:"python"`
	APIs           []string       `json:"apis"`
	Kind           string         `json:"kind"`
	Count          int            `json:"count"`
	InNVTX         string         `json:"in_nvtx"`
	CorrelationIDs []int64        `json:"correlation_ids"`
	PerPid         map[string]int `json:"per_pid"`
	PythonFrames   []struct {
		Function string `json:"function"`
		File     string `json:"file"`
		Line     int64  `json:"line"`
	} `json:"python_frames"`
}

func readTruth(t *testing.T, path string) truthFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tf truthFile
	if err := json.Unmarshal(b, &tf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tf
}

// eventKey identifies an event across the truth and the inventory: the
// correlation id of its first call (unique per process; the processes of a
// fixture are checked apart), its API sequence and its kind.
func eventKey(corr int64, apis []string, kind string) string {
	return fmt.Sprintf("corr%d/%s/%s", corr, strings.Join(apis, "+"), kind)
}

// TestFixtures checks the inventory of each real fixture against its truth
// file event by event: same calls, same kinds, same processes, the NVTX
// region, and (with backtraces) the Python line of the program.
func TestFixtures(t *testing.T) {
	truths, _ := filepath.Glob("../fixtures/*.truth.json")
	inventories := 0
	for _, tp := range truths {
		tf := readTruth(t, tp)
		if tf.Events == nil {
			continue // an estimator ground truth, without an event list
		}
		inventories++
		t.Run(tf.Fixture, func(t *testing.T) {
			path := filepath.Join("../fixtures", tf.Fixture)
			tr := loadFile(t, path, LoadOptions{})
			if len(tr.Syncs) != tf.TotalEvents {
				t.Errorf("events: got %d, truth %d", len(tr.Syncs), tf.TotalEvents)
			}
			want, wantPerPid := map[string]int{}, map[string]int{}
			for _, e := range tf.Events {
				if len(e.CorrelationIDs) != e.Count {
					t.Fatalf("truth event %q: %d correlation ids for count %d", e.Pattern, len(e.CorrelationIDs), e.Count)
				}
				for _, corr := range e.CorrelationIDs {
					want[eventKey(corr, e.APIs, e.Kind)]++
				}
				for pid, n := range e.PerPid {
					wantPerPid[pid] += n
				}
				if len(e.PerPid) == 0 {
					wantPerPid[fmt.Sprint(tf.Pids[0])] += e.Count
				}
			}
			got, gotPerPid := map[string]int{}, map[string]int{}
			for _, s := range tr.Syncs {
				got[eventKey(s.Calls()[0].CorrelationID, s.APIs(), s.Kind.String())]++
				gotPerPid[fmt.Sprint(s.GlobalTid.Pid())]++
			}
			if len(gotPerPid) != tf.Processes {
				t.Errorf("processes: got %d, truth %d", len(gotPerPid), tf.Processes)
			}
			diffCounts(t, want, got)
			diffCounts(t, wantPerPid, gotPerPid)

			if tf.TotalEventsInMeasured > 0 {
				region := loadFile(t, path, LoadOptions{NVTX: "measured"})
				if len(region.Syncs) != tf.TotalEventsInMeasured {
					t.Errorf("--nvtx measured: got %d events, truth %d", len(region.Syncs), tf.TotalEventsInMeasured)
				}
				if region.Region.Duration <= 0 || region.Region.Duration > tr.Region.Duration {
					t.Errorf("region duration %d outside (0, %d]", region.Region.Duration, tr.Region.Duration)
				}
			}
			checkPythonLines(t, tf, tr)
		})
	}
	if inventories < 4 {
		t.Fatalf("want at least 4 fixtures with an event list in their truth file, found %d", inventories)
	}
}

// multiproc truth lists correlation ids per process in pid order; the
// pairing above assumes it. diffCounts reports every mismatch.
func diffCounts(t *testing.T, want, got map[string]int) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if want[k] != got[k] {
			t.Errorf("event %s: got %d, truth %d", k, got[k], want[k])
		}
	}
}

// checkPythonLines compares, for the backtrace fixture, the innermost frame
// in the program with the truth's file:line.
func checkPythonLines(t *testing.T, tf truthFile, tr *Trace) {
	t.Helper()
	lines := map[int64]string{}
	for _, e := range tf.Events {
		if len(e.PythonFrames) == 0 {
			continue
		}
		for _, corr := range e.CorrelationIDs {
			lines[corr] = e.Python
		}
	}
	if len(lines) == 0 {
		return
	}
	if !tr.Evidence.PythonFrames || !tr.Evidence.Backtraces {
		t.Fatalf("backtrace fixture: evidence %+v lacks Python frames or native backtraces", tr.Evidence)
	}
	checked := 0
	for _, s := range tr.Syncs {
		want, ok := lines[s.Calls()[0].CorrelationID]
		if !ok {
			continue
		}
		file, line := want[:strings.LastIndex(want, ":")], want[strings.LastIndex(want, ":")+1:]
		found := ""
		for _, f := range s.Python() {
			if filepath.Base(f.File) == file {
				found = fmt.Sprintf("%s:%d", file, f.Line)
				break
			}
		}
		if found != file+":"+line {
			t.Errorf("sync at corr %d: program frame %q, truth %q", s.Calls()[0].CorrelationID, found, want)
		}
		if len(s.Native()) == 0 {
			t.Errorf("sync at corr %d has no native frames", s.Calls()[0].CorrelationID)
		}
		checked++
	}
	if checked == 0 {
		t.Errorf("no sync matched a truth event with Python frames")
	}
}
