package classify

import (
	"testing"

	"github.com/nsyssync/nsyssync/program"
	"github.com/nsyssync/nsyssync/trace"
)

// TestProgramName: the program a site's identity takes, from the process
// name, its main thread, the captured command line and the framework.
func TestProgramName(t *testing.T) {
	const gpid, gtid = trace.GlobalPid(7) << 24, trace.GlobalTid(7)<<24 | 7
	for _, tc := range []struct {
		name    string
		process string
		thread  string
		command []string
		want    string
	}{
		{"executable", "cuda-cloverleaf", "", []string{"cuda-cloverleaf", "--in", "x.in"}, "cuda-cloverleaf"},
		{"script of the interpreter", "python3", "", []string{"python3", "../src/train.py", "--lr", "1"}, "train.py"},
		{"script behind a launcher", "python", "", []string{"mpirun", "-n", "1", "python", "./dslash.py"}, "dslash.py"},
		{"module", "python3.12", "", []string{"python3.12", "-m", "pkg.train"}, "pkg.train"},
		{"interpreter, no script recorded", "python", "", nil, "python [" + string(program.PyTorch) + "]"},
		{"no process table: main thread", "", "testqo", nil, "testqo"},
		{"no name at all: the command", "", "", []string{`.\build\run.exe`}, "run.exe"},
		{"nothing", "", "", nil, " [" + string(program.PyTorch) + "]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace.Trace{Processes: map[trace.GlobalPid]trace.Process{}, Threads: map[trace.GlobalTid]trace.Thread{}}
			if tc.process != "" {
				tr.Processes[gpid] = trace.Process{GlobalPid: gpid, Pid: 7, Name: tc.process}
			}
			if tc.thread != "" {
				tr.Threads[gtid] = trace.Thread{GlobalTid: gtid, Pid: 7, Tid: 7, Name: tc.thread}
			}
			tr.Hints.Command = tc.command
			s := &trace.Sync{GlobalPid: gpid, GlobalTid: gtid}
			if got := newProgramIDs(tr, program.PyTorch).of(s); got != tc.want {
				t.Errorf("program %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFingerprintFallsBackToLegacy: a site made without an identity (by
// hand, or by an older classifier) is named by its legacy fingerprint.
func TestFingerprintFallsBackToLegacy(t *testing.T) {
	s := &Site{Key: "cudaStreamSynchronize|stream 7", APIs: []string{"cudaStreamSynchronize"}}
	legacy := LegacyFingerprint(s)
	if len(legacy) != 12 || Fingerprint(s) != legacy {
		t.Errorf("Fingerprint = %q, legacy %q", Fingerprint(s), legacy)
	}
	s.Fingerprint = "0123456789ab"
	if Fingerprint(s) != s.Fingerprint {
		t.Errorf("Fingerprint = %q, want the site's own", Fingerprint(s))
	}
}
