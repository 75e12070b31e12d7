package cuda

import (
	"sync"
	"sync/atomic"
)

// probe watches a diagnostic replay (the GPU tests): it gives each
// action's first GPU op a stamp slot of the session, so that the op
// writes its start and end on the GPU's clock, and notes when each action
// ran on the host. A nil probe does nothing; a replay has none.
type probe struct {
	slots  int          // stamp slots the session has
	issued atomic.Int32 // slots handed out
	mu     sync.Mutex
	rows   []probeRow
}

// probeRow is one action of a diagnostic replay, on the runner's clock.
type probeRow struct {
	Name  string    `json:"name"`
	Corr  int64     `json:"corr"`
	Block BlockKind `json:"block"`
	// Kind of the first op, and how many the action launched.
	Kind WorkKind `json:"kind"`
	Ops  int      `json:"ops"`
	// Start: the action began (its host gap done); Ret: its last driver
	// call returned; End: it ended (padded to its recorded host time).
	Start int64 `json:"start"`
	Ret   int64 `json:"ret"`
	End   int64 `json:"end"`
	// Stamp is the slot its first op stamped (-1: none).
	Stamp int `json:"stamp"`
}

func newProbe(slots int) *probe { return &probe{slots: slots} }

// slot hands out the next stamp slot, -1 when there is no probe or no
// slot left.
func (p *probe) slot() int {
	if p == nil {
		return -1
	}
	n := int(p.issued.Add(1)) - 1
	if n >= p.slots {
		return -1
	}
	return n
}

// note records an action that ran.
func (p *probe) note(a *Action, work []Work, stamp int, start, ret, end int64) {
	if p == nil {
		return
	}
	row := probeRow{Name: a.Name, Corr: a.Corr, Block: a.Block, Ops: len(work), Start: start, Ret: ret, End: end, Stamp: stamp}
	if len(work) > 0 {
		row.Kind = work[0].Kind
	}
	p.mu.Lock()
	p.rows = append(p.rows, row)
	p.mu.Unlock()
}

// taken returns the rows noted so far and the stamp slots handed out, and
// starts over.
func (p *probe) taken() ([]probeRow, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rows, n := p.rows, min(int(p.issued.Load()), p.slots)
	p.rows = nil
	p.issued.Store(0)
	return rows, n
}
