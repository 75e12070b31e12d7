package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/format"
	"github.com/nsyssync/nsyssync/trace"
)

// refWhat and refWaited are the fmt forms the appenders
// replace.

func refWhat(s *trace.Sync) string {
	parts := []string{strings.Join(s.APIs(), "+")}
	switch {
	case s.Scope == trace.ScopeContext:
		parts = append(parts, "all streams")
	case s.Legacy:
		parts = append(parts, fmt.Sprintf("legacy stream %d", s.Stream))
	case s.Stream >= 0:
		parts = append(parts, fmt.Sprintf("stream %d", s.Stream))
	}
	if c := s.Copy; c != nil && c.FromActivity {
		parts = append(parts, fmt.Sprintf("%s %s→%s %dB", DirectionName(c), MemName(c.SrcKind), MemName(c.DstKind), c.Bytes))
	}
	return strings.Join(parts, ", ")
}

func refWaited(s *trace.Sync) string {
	if s.Waited.Ops == 0 {
		return "nothing"
	}
	if s.Waited.Ops == 1 {
		return "1 op, " + format.Duration(s.Waited.BusyNs)
	}
	return fmt.Sprintf("%d ops, %s", s.Waited.Ops, format.Duration(s.Waited.BusyNs))
}

func TestWhatMatchesFmt(t *testing.T) {
	for _, fx := range []string{"syncs_backtrace.sqlite.gz", "syncs_autograd.sqlite.gz", "multiproc_lean.sqlite.gz"} {
		tr := load(t, fx, "").analysis.Trace
		for i := range tr.Syncs {
			s := tr.Syncs[i]
			for v := 0; v < 6; v++ {
				switch v {
				case 1:
					s.Scope = trace.ScopeContext
				case 2:
					s.Scope, s.Legacy, s.Stream = trace.ScopeStream, true, 7
				case 3:
					s.Legacy, s.Stream = false, -1
				case 4:
					s.Copy = &trace.Copy{FromActivity: true, Direction: trace.CopyKind(i % 20), SrcKind: trace.MemKind(i % 7), DstKind: 2, Bytes: int64(i)}
					s.Waited = trace.Waited{Ops: i, BusyNs: int64(i) * 12345}
				case 5:
					s.SetCalls(nil)
				}
				if got, want := What(&s), refWhat(&s); got != want {
					t.Errorf("%s sync %d variant %d: What %q, want %q", fx, i, v, got, want)
				}
				if got, want := waited(&s), refWaited(&s); got != want {
					t.Errorf("%s sync %d variant %d: waited %q, want %q", fx, i, v, got, want)
				}
			}
		}
	}
}

// TestSyncWritersDoNotAllocate: once their buffers have grown, the JSON
// and Perfetto writers allocate nothing per sync.
func TestSyncWritersDoNotAllocate(t *testing.T) {
	l := load(t, "syncs_backtrace.sqlite.gz", "")
	a := l.analysis
	tr := a.Trace
	s := &tr.Syncs[0]
	s.Copy = &trace.Copy{FromActivity: true, Direction: trace.CopyDtoH, SrcKind: trace.MemDevice, DstKind: trace.MemPageable, Bytes: 8}
	s.Gap = trace.Gap{IdleAfterNs: 5000}
	s.Device = 0
	var buf []byte
	if n := testing.AllocsPerRun(100, func() { buf = appendSyncJSON(buf[:0], s, "s1", "main") }); n != 0 {
		t.Errorf("appendSyncJSON: %v allocations per sync", n)
	}
	p, err := a.perfettoSite(&a.Sites[0])
	if err != nil {
		t.Fatal(err)
	}
	enc := &eventWriter{w: bufio.NewWriter(io.Discard)}
	if n := testing.AllocsPerRun(100, func() { enc.syncEvent(s, 0, &p) }); n != 0 {
		t.Errorf("syncEvent: %v allocations per sync", n)
	}
}
