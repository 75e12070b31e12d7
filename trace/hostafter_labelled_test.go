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

// TestWroteAfterLabelled logs, per labelled program of the default
// captures, how many of its syncs in the range "measured" a write
// followed: the scalar reads (a device-to-host copy of at most 8 bytes)
// and the others, with the truth's dependency label. It fails if a sync
// the truth calls a true dependency is followed by one, but in the one
// held-out program known to do it (ho_cf_early_stop_print): a rule on
// WroteAfter alone would call such a sync false, which is why classify
// takes the writes as evidence only. Syncs outside "measured" are logged
// for the control-flow programs (cf_*).
func TestWroteAfterLabelled(t *testing.T) {
	type truthFile struct {
		Label struct {
			Dependency string `json:"dependency"`
			Category   string `json:"category"`
		} `json:"label"`
		Events []struct {
			CorrelationID int64  `json:"correlation_id"`
			Pid           int64  `json:"pid"`
			Dependency    string `json:"dependency"`
		} `json:"events"`
	}
	var lines []string
	for _, path := range labelledDefaults(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".default.sqlite")
		b, err := os.ReadFile(filepath.Join("../fixtures/labelled", name+".default.truth.json"))
		if err != nil {
			t.Fatal(err)
		}
		var truth truthFile
		if err := json.Unmarshal(b, &truth); err != nil {
			t.Fatal(err)
		}
		dep := map[[2]int64]string{}
		for _, e := range truth.Events {
			dep[[2]int64{e.Pid, e.CorrelationID}] = e.Dependency
		}
		tr := loadFile(t, path, LoadOptions{})
		var reads, readsWrote, others, othersWrote int
		var delays []string
		for i := range tr.Syncs {
			s := &tr.Syncs[i]
			if len(s.Calls()) == 0 {
				continue
			}
			n, delay, wrote := s.HostAfter()
			d, in := dep[[2]int64{s.GlobalPid.Pid(), s.Calls()[0].CorrelationID}]
			if !in {
				if wrote && strings.HasPrefix(name, "cf_") {
					t.Logf("%s: sync %d outside \"measured\" (%s, %s) followed by %s %.0f µs after", name, i, s.Reason, strings.Join(s.APIs(), "+"), n, float64(delay)/1e3)
				}
				continue
			}
			scalar := s.Copy != nil && !s.Copy.Memset && s.Copy.Direction == CopyDtoH && s.Copy.Bytes <= 8
			if scalar {
				reads++
			} else {
				others++
			}
			if !wrote {
				continue
			}
			if scalar {
				readsWrote++
			} else {
				othersWrote++
			}
			if len(delays) < 3 {
				delays = append(delays, fmt.Sprintf("%s +%.0f µs", n, float64(delay)/1e3))
			}
			// A true dependency followed by a write is possible (the held-out
			// ho_cf_early_stop_print branches on its read and then prints;
			// held-out traps of rounds 13 and 15 log the value, then test
			// it): why classify takes the
			// writes as evidence, never as a verdict. Only those programs
			// may show it here; a new one is worth a look.
			if d == "true" && !printsThenTests[name] {
				t.Errorf("%s: sync %d (%s), a true dependency, followed by %s %.0f µs after", name, i, s.Reason, n, float64(delay)/1e3)
			}
		}
		frac := func(a, b int) string {
			if b == 0 {
				return "–"
			}
			return fmt.Sprintf("%d/%d", a, b)
		}
		lines = append(lines, fmt.Sprintf("| %s | %s/%s | %s | %s | %s |", name, truth.Label.Dependency, truth.Label.Category,
			frac(readsWrote, reads), frac(othersWrote, others), strings.Join(delays, ", ")))
	}
	sort.Strings(lines)
	t.Logf("syncs in \"measured\" followed by a write (WroteAfter):\n| program | label | scalar reads (≤ 8 B DtoH) | other syncs | first writes |\n|---|---|---:|---:|---|\n%s", strings.Join(lines, "\n"))
}

// printsThenTests are the labelled programs whose true reads are followed
// by a write: each prints the value, then tests it.
var printsThenTests = map[string]bool{"ho_cf_early_stop_print": true, "ps13_progress_log_patience": true,
	"ps15_health_level_rollback": true, "ps20_log_step_sets_stop": true}
