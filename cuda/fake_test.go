package cuda

import (
	"fmt"
	"sync"
	"time"
)

// fakeGPU is a GPU without a GPU: its sessions check every index a plan
// hands them, count what they are asked to do, and keep a virtual clock
// per stream (each spin takes its duration plus 1 µs) so that events can
// be timed. Ops complete at once on the host.
type fakeGPU struct {
	mu         sync.Mutex
	sessions   []*fakeSession
	failSpinAt int // fail the n-th spin over all sessions (0: never)
	spins      int
	closed     int
}

func (g *fakeGPU) identity() Identity {
	return Identity{Name: "Fake GPU", BusID: "0000:00:00.0", CUDA: 13000}
}

// limits are an H100's, with a spin of 16 registers and no static shared
// memory.
func (g *fakeGPU) limits() smLimits { return h100Limits }

var h100Limits = smLimits{SMs: 132, ThreadsPerSM: 2048, RegsPerSM: 65536, BlocksPerSM: 32, SharedPerSM: 233472,
	SharedPerBlock: 232448, ReservedShared: 1024, SpinRegs: 16}

func (g *fakeGPU) newSession(spec sessionSpec) (session, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := &fakeSession{g: g, spec: spec, counts: map[string]int{}, virt: make([]int64, spec.streams),
		marks: make([]int64, spec.events), stamps: make([][2]uint64, spec.stamps)}
	g.sessions = append(g.sessions, s)
	return s, nil
}

func (g *fakeGPU) close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed++
	return nil
}

// counts sums the counts of every session.
func (g *fakeGPU) counts() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]int{}
	for _, s := range g.sessions {
		s.mu.Lock()
		for k, v := range s.counts {
			out[k] += v
		}
		s.mu.Unlock()
	}
	return out
}

type fakeSession struct {
	g      *fakeGPU
	spec   sessionSpec
	mu     sync.Mutex
	counts map[string]int
	virt   []int64 // per stream: virtual GPU time
	marks  []int64 // per event: virtual time recorded
	stamps [][2]uint64
}

func (s *fakeSession) note(what string) {
	s.mu.Lock()
	s.counts[what]++
	s.mu.Unlock()
}

func (s *fakeSession) checkStream(i int) error {
	if i < 0 || i >= s.spec.streams {
		return fmt.Errorf("fake: stream %d out of range (%d streams)", i, s.spec.streams)
	}
	return nil
}

func (s *fakeSession) checkEvent(i int) error {
	if i < 0 || i >= s.spec.events {
		return fmt.Errorf("fake: event %d out of range (%d events)", i, s.spec.events)
	}
	return nil
}

func (s *fakeSession) bind() error { s.note("bind"); return nil }

func (s *fakeSession) spin(stream int, ns int64, l spinLaunch, stamp int) error {
	if err := s.checkStream(stream); err != nil {
		return err
	}
	s.g.mu.Lock()
	s.g.spins++
	fail := s.g.failSpinAt > 0 && s.g.spins == s.g.failSpinAt
	s.g.mu.Unlock()
	if fail {
		return &DriverError{Call: "cuLaunchKernel", Code: 719, Name: "CUDA_ERROR_LAUNCH_FAILED", Text: "unspecified launch failure"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts["spin"]++
	if l != oneWarp {
		s.counts[fmt.Sprintf("spin %d×%d", l.grid, l.block)]++
	}
	if stamp >= 0 && stamp < len(s.stamps) {
		start := uint64(s.virt[stream]) + 1
		s.stamps[stamp] = [2]uint64{start, start + uint64(ns)}
	}
	s.virt[stream] += ns + 1_000
	return nil
}

func (s *fakeSession) copy(stream int, dir copyDir, bytes int64) error {
	if err := s.checkStream(stream); err != nil {
		return err
	}
	if bytes > s.spec.copyBytes {
		return fmt.Errorf("fake: copy of %d bytes, buffers of %d", bytes, s.spec.copyBytes)
	}
	s.note("copy " + dir.String())
	return nil
}

func (s *fakeSession) memset(stream int, bytes int64) error {
	if err := s.checkStream(stream); err != nil {
		return err
	}
	if bytes > s.spec.copyBytes {
		return fmt.Errorf("fake: memset of %d bytes, buffers of %d", bytes, s.spec.copyBytes)
	}
	s.note("memset")
	return nil
}

func (s *fakeSession) record(event, stream int) error {
	if err := s.checkStream(stream); err != nil {
		return err
	}
	if err := s.checkEvent(event); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts["record"]++
	s.marks[event] = s.virt[stream]
	return nil
}

func (s *fakeSession) wait(stream, event int) error {
	if err := s.checkStream(stream); err != nil {
		return err
	}
	if err := s.checkEvent(event); err != nil {
		return err
	}
	s.note("wait")
	return nil
}

func (s *fakeSession) syncStream(stream int) error {
	if err := s.checkStream(stream); err != nil {
		return err
	}
	s.note("sync stream")
	return nil
}

func (s *fakeSession) syncEvent(event int) error {
	if err := s.checkEvent(event); err != nil {
		return err
	}
	s.note("sync event")
	return nil
}

func (s *fakeSession) syncContext() error { s.note("sync context"); return nil }

func (s *fakeSession) elapsed(from, to int) (time.Duration, error) {
	if err := s.checkEvent(from); err != nil {
		return 0, err
	}
	if err := s.checkEvent(to); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Duration(s.marks[to] - s.marks[from]), nil
}

func (s *fakeSession) stamp(slot int) (uint64, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slot < 0 || slot >= len(s.stamps) {
		return 0, 0
	}
	return s.stamps[slot][0], s.stamps[slot][1]
}

func (s *fakeSession) clearStamps() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.stamps)
}

func (s *fakeSession) timerStep(stream int) (uint64, error) {
	if err := s.checkStream(stream); err != nil {
		return 0, err
	}
	return 32, nil
}

func (s *fakeSession) memInfo() (int64, int64, error) { return 80 << 30, 80 << 30, nil }

func (s *fakeSession) release() error { s.note("release"); return nil }
