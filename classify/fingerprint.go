package classify

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/program"
	"github.com/nsyssync/nsyssync/trace"
)

// A site's fingerprint names it across runs: the same place of the same
// program keeps it when the program is profiled again, on another
// machine, from another checkout, or with NVTX ranges added (which move
// the lines below them and split frame-less sites by range); unrelated
// programs never share one. It is a hash of:
//
//   - the program: the script a Python interpreter ran (from the capture's
//     command line), else the executable of the process that made the
//     sync — so the same `cudaFree` of two programs differs;
//   - the place, without what a re-profile changes: a Python site's file
//     name (not its directory) and function (not its line), APIs, copy
//     direction and library function; a native site's call path; a
//     frame-less site's APIs, reason, scope, copy direction and the rule
//     that explains it (not its NVTX path, not its stream); and the phase;
//   - its rank among the run's sites with all of the above in common, in
//     the order their first syncs ran (two `.item()` lines of one function
//     are #0 and #1 in every run).
//
// When added NVTX ranges split a frame-less site, the part whose first sync
// ran first keeps the fingerprint and the others are new.
// (docs/triage.md, "Fingerprints")

// identityBase is the part of a site's identity its first sync gives,
// before the rank.
func identityBase(ids *programIDs, nm *names, s *trace.Sync, rule string, phase Phase) string {
	var b []byte
	b = append(append(b, ids.of(s)...), '|')
	switch py := s.Python(); {
	case len(py) > 0:
		at := nm.programFrame(py)
		top := &py[at]
		b = appendAPIs(append(b, "py|"...), nm, s, "+")
		b = appendCopyDirection(b, s)
		if lib := libraryFrame(nm, py[:at]); lib != nil {
			b = append(append(append(append(b, "|lib "...), nm.key(baseName(nm.cleanFile(lib.File)))...), ':'), nm.key(lib.Function)...)
		}
		b = append(append(append(append(b, '|'), nm.key(baseName(nm.cleanFile(top.File)))...), ':'), nm.key(top.Function)...)
	case hasUserFrame(s.Native()):
		native := s.Native()
		b = appendAPIs(append(b, "native|"...), nm, s, "+")
		for _, f := range native[userStart(native):] {
			if !f.Unresolved {
				b = append(append(b, ';'), nm.key(f.Symbol)...)
			}
		}
	default:
		b = appendAPIs(append(b, "api|"...), nm, s, "+")
		b = append(append(b, '|'), s.Reason.String()...)
		b = append(append(b, '|'), s.Scope.String()...)
		b = appendCopyDirection(b, s)
		b = append(append(b, "|rule "...), rule...)
	}
	if phase != PhaseSteady {
		b = append(append(b, "|phase "...), phase...)
	}
	return string(b)
}

// assignFingerprints gives each site (in the order their first syncs ran)
// its fingerprint: its identity base and its rank among the sites that
// share it.
func assignFingerprints(sites []*Site, bases []string) {
	rank := map[string]int{}
	for k, s := range sites {
		n := rank[bases[k]]
		rank[bases[k]] = n + 1
		h := sha256.Sum256([]byte("v2|" + bases[k] + "#" + strconv.Itoa(n)))
		s.Fingerprint = hex.EncodeToString(h[:6])
	}
}

// interpreter matches the names of Python interpreters.
var interpreter = regexp.MustCompile(`^(python|pypy)[0-9.]*$`)

// programIDs names the program of each process, once (of).
type programIDs struct {
	t         *trace.Trace
	framework program.Framework // the detected framework, for a bare interpreter
	byPid     map[trace.GlobalPid]string
}

func newProgramIDs(t *trace.Trace, framework program.Framework) *programIDs {
	return &programIDs{t: t, framework: framework, byPid: map[trace.GlobalPid]string{}}
}

// of is the program's name for site identity: the script a Python
// interpreter ran (from the capture's command line), else the name of the
// process that made the sync (its main thread's name in exports without
// a process table), else the command nsys launched. A bare interpreter or
// no name at all is told apart by the detected framework ("python
// [TensorRT]"), so two unrelated Python programs whose scripts the export
// does not record still differ.
func (p *programIDs) of(s *trace.Sync) string {
	if id, ok := p.byPid[s.GlobalPid]; ok {
		return id
	}
	id := p.name(s)
	if id == "" || interpreter.MatchString(id) {
		id += " [" + string(p.framework) + "]"
	}
	p.byPid[s.GlobalPid] = id
	return id
}

func (p *programIDs) name(s *trace.Sync) string {
	t := p.t
	name := ""
	if pr, ok := t.Processes[s.GlobalPid]; ok {
		name = baseName(pr.Name)
	}
	if name == "" {
		name = p.mainThreadName(s)
	}
	cmd := t.Hints.Command
	if name == "" || interpreter.MatchString(name) {
		if script := scriptOf(cmd); script != "" {
			return script
		}
	}
	if name == "" && len(cmd) > 0 {
		return baseName(cmd[0])
	}
	return name
}

// mainThreadName is the name of the process's main thread (its thread
// id is the process id: Linux names it after the executable), else of the
// sync's own thread; "" when neither is known.
func (p *programIDs) mainThreadName(s *trace.Sync) string {
	pid := s.GlobalPid.Pid()
	for _, th := range p.t.Threads {
		if th.Pid == pid && th.Tid == pid && th.Name != "" {
			return baseName(th.Name)
		}
	}
	if th, ok := p.t.Threads[s.GlobalTid]; ok {
		return baseName(th.Name)
	}
	return ""
}

// baseName is the last element of a path written with / or \.
func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		p = p[i+1:]
	}
	return p
}

// scriptOf returns the Python program a command line runs: the base name
// of its first `.py` argument, or the module after `-m`; "" when none.
func scriptOf(cmd []string) string {
	for i, a := range cmd {
		if i > 0 && cmd[i-1] == "-m" && interpreter.MatchString(baseName(cmd[max(i-2, 0)])) {
			return a
		}
		if i > 0 && strings.HasSuffix(a, ".py") && !strings.HasPrefix(a, "-") {
			return baseName(a)
		}
	}
	return ""
}
