package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// refDuration, refWhat and refWaited are the fmt forms the appenders
// replace.
func refDuration(ns int64) string {
	switch {
	case ns < 0:
		return "-"
	case ns < 1_000:
		return fmt.Sprintf("%dns", ns)
	case ns < 1_000_000:
		return fmt.Sprintf("%.1fµs", float64(ns)/1e3)
	case ns < 1_000_000_000:
		return fmt.Sprintf("%.2fms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.2fs", float64(ns)/1e9)
}

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
		return "1 op, " + refDuration(s.Waited.BusyNs)
	}
	return fmt.Sprintf("%d ops, %s", s.Waited.Ops, refDuration(s.Waited.BusyNs))
}

func TestDurationMatchesFmt(t *testing.T) {
	values := []int64{-5, 0, 1, 999, 1000, 1049, 1050, 1051, 99_949, 99_950, 999_949, 999_950, 999_999, 1_000_000,
		1_004_999, 1_005_000, 999_994_999, 999_995_000, 999_999_999, 1_000_000_000, 5_555_555_555, math.MaxInt64}
	for v := int64(1); v < 1e15; v = v*3 + 7 {
		values = append(values, v, v+1, v-1)
	}
	for _, v := range values {
		if got, want := Duration(v), refDuration(v); got != want {
			t.Errorf("Duration(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestWhatMatchesFmt(t *testing.T) {
	for _, fx := range []string{"syncs_backtrace.sqlite", "syncs_autograd.sqlite", "multiproc_lean.sqlite"} {
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
	l := load(t, "syncs_backtrace.sqlite", "")
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

// TestPathTail: the last n elements, as strings.Split gives them.
func TestPathTail(t *testing.T) {
	for _, p := range []string{"", "a", "/", "a/b", "/a/b", "a//b", "/w/fixtures/programs/syncs.py", "x/", "//", "a/b/c/d/"} {
		for n := 1; n <= 3; n++ {
			parts := strings.Split(p, "/")
			want := parts[max(0, len(parts)-n):]
			if got := PathTail(p, n); !slices.Equal(got, want) {
				t.Errorf("PathTail(%q, %d) = %q, want %q", p, n, got, want)
			}
		}
	}
}
