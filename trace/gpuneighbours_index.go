package trace

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// neighbourIndex finds, during the GPU scan, the ops just before and just
// after each sync on its stream. The syncs of one (process, device,
// stream) form a group; each sync is an interval [lo, hi] of correlation
// ids. An op of the group falls in the before window (prev, lo) of the
// syncs that follow it and in the after window (hi, next) of those that
// precede it: one sync each, unless syncs of several threads overlap.
//
// Each member sync has MaxGPUBefore+MaxGPUAfter slots, each a 64-bit key:
// the op's distance in correlation ids (32 bits; nearer is smaller) above
// its payload (32 bits, inlinePayload: a kernel's name id, or a copy's
// kind, direction and size, or an index into descs). A slot list is sorted, smallest first; empty slots hold
// MaxUint64 (stored inverted, so that a new list is all zeros). Scanning goroutines share the slots, each list guarded by a
// striped lock: the result is the K smallest keys whatever the order the
// ops arrive in.
type neighbourIndex struct {
	groups map[opStream]*streamGroup
	member []int32  // sync index of each member
	slots  []uint64 // nSlots per member, under locks[member%nLocks]
	locks  [nLocks]paddedMutex
	ngroup int

	descMu  sync.Mutex
	descs   []opDesc
	descIx  map[opDesc]uint32
	cursors []*neighbourCursor // under descMu
}

const (
	nSlots    = MaxGPUBefore + MaxGPUAfter
	nLocks    = 256
	noSlot    = math.MaxUint64
	descFlag  = 1 << 31
	descTable = 1 << 30
)

type paddedMutex struct {
	sync.Mutex
	_ [56]byte
}

// opDesc is what a payload that is not a plain kernel name id stands for.
type opDesc struct {
	kind  GPUOpKind
	copy  CopyKind
	name  int64 // a kernel's name id (one too large for 31 bits)
	bytes int64
}

// streamGroup is the member syncs of one stream, sorted twice: by lo with
// each one's prev (the largest hi below its lo), and by hi with each one's
// next (the smallest lo above its hi). In a simple group (the rule) both
// orders are the time order and prev and next are nil (prevOf, nextOf).
type streamGroup struct {
	id       int
	lo, prev []int64
	loMember []int32
	hi, next []int64
	hiMember []int32
}

// neighbourCursor is a scanning goroutine's last group and its last
// positions in each group's lists.
type neighbourCursor struct {
	key   opStream
	g     *streamGroup
	hints []int // 2 per group
	descs map[opDesc]uint32
	// The last member's lists the goroutine added to, kept here until it
	// moves on to another member: ops come in near correlation order, so
	// a kernel-heavy export sends hundreds in a row to one list, and
	// the shared slots and their lock are touched once per member.
	before, after pendingList
	listed        bool // in the index's cursors, for finish to flush
}

// pendingList is a goroutine's copy of a member's slot list, in the same
// form (inverted keys, largest first, zero for empty).
type pendingList struct {
	m    int32 // -1: none
	keys [max(MaxGPUBefore, MaxGPUAfter)]uint64
}

// opStream is a process's stream on a device: the ops of one stream.
type opStream struct {
	pid    GlobalPid
	device DeviceID
	stream StreamID
}

// streamKeys calls fn with each sync that has a stream for its windows,
// in order, and its (globalPid, device, stream): its own stream, or for a
// context-scope sync the stream of its thread's previous stream-scoped
// sync when that is on the same device (or the sync's device is unknown).
func streamKeys(syncs []Sync, fn func(i int, key opStream)) {
	type devStream struct {
		device DeviceID
		stream StreamID
	}
	last := map[GlobalTid]devStream{}                           // device, stream of a thread's last stream-scoped sync
	tid, cached := GlobalTid(-1), devStream{NoDevice, NoStream} // last's entry of the latest thread set
	for i := range syncs {
		s := &syncs[i]
		switch {
		case s.Stream >= 0 && s.Device >= 0:
			fn(i, opStream{s.GlobalPid, s.Device, s.Stream})
			if v := (devStream{s.Device, s.Stream}); tid != s.GlobalTid || cached != v {
				last[s.GlobalTid], tid, cached = v, s.GlobalTid, v
			}
		case s.Scope == ScopeContext:
			if l, has := last[s.GlobalTid]; has && (s.Device < 0 || s.Device == l.device) {
				fn(i, opStream{s.GlobalPid, l.device, l.stream})
			}
		}
	}
}

// newNeighbourIndex groups the syncs that have a stream; nil when none has.
func newNeighbourIndex(syncs []Sync) *neighbourIndex {
	nb := &neighbourIndex{groups: map[opStream]*streamGroup{}, descIx: map[opDesc]uint32{}}
	var g *streamGroup
	var gkey opStream
	streamKeys(syncs, func(i int, key opStream) {
		if g == nil || key != gkey {
			if g, gkey = nb.groups[key], key; g == nil {
				g = &streamGroup{id: len(nb.groups)}
				nb.groups[key] = g
			}
		}
		lo, hi := syncs[i].corrWindow()
		g.loMember = append(g.loMember, int32(len(nb.member)))
		g.lo, g.hi = append(g.lo, lo), append(g.hi, hi)
		nb.member = append(nb.member, int32(i))
	})
	if len(nb.member) == 0 {
		return nil
	}
	nb.ngroup = len(nb.groups)
	nb.slots = make([]uint64, nSlots*len(nb.member))
	for i := 0; i < len(nb.slots); i += 512 { // fault the pages in here, on a core of its own (see newOpIndex)
		nb.slots[i] = 0
	}
	for _, g := range nb.groups {
		if g.simple() {
			g.hiMember = g.loMember // prev and next are the neighbours'
			continue
		}
		g.sortOverlapping()
	}
	return nb
}

// simple reports whether the group's syncs, in time order, have disjoint
// windows in the same order: the k-th sync's prev is the (k-1)-th's hi
// and its next the (k+1)-th's lo, with no arrays for them. This is the
// rule; syncs of several threads on one stream may overlap.
func (g *streamGroup) simple() bool {
	for k := 1; k < len(g.lo); k++ {
		if g.lo[k] <= g.hi[k-1] {
			return false
		}
	}
	return true
}

// sortOverlapping sorts the members of a group that is not simple by lo
// and by hi, and fills prev and next.
func (g *streamGroup) sortOverlapping() {
	n := len(g.lo)
	members, lo0, hi0 := g.loMember, g.lo, g.hi // by position in time order
	byLo, byHi := make([]int, n), make([]int, n)
	for p := range n {
		byLo[p], byHi[p] = p, p
	}
	slices.SortStableFunc(byLo, func(a, b int) int { return cmp.Compare(lo0[a], lo0[b]) })
	slices.SortStableFunc(byHi, func(a, b int) int { return cmp.Compare(hi0[a], hi0[b]) })
	g.loMember, g.hiMember = make([]int32, n), make([]int32, n)
	g.lo, g.hi, g.prev, g.next = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	for k := range n {
		g.loMember[k], g.lo[k] = members[byLo[k]], lo0[byLo[k]]
		g.hiMember[k], g.hi[k] = members[byHi[k]], hi0[byHi[k]]
	}
	// prev of the k-th by lo: the largest hi below its lo.
	j := 0
	for k := range n {
		for j < n && g.hi[j] < g.lo[k] {
			j++
		}
		g.prev[k] = math.MinInt64
		if j > 0 {
			g.prev[k] = g.hi[j-1]
		}
	}
	// next of the k-th by hi: the smallest lo above its hi.
	j = n - 1
	for k := n - 1; k >= 0; k-- {
		for j >= 0 && g.lo[j] > g.hi[k] {
			j--
		}
		g.next[k] = math.MaxInt64
		if j < n-1 {
			g.next[k] = g.lo[j+1]
		}
	}
}

// prevOf is the largest hi below the lo of the k-th member by lo.
func (g *streamGroup) prevOf(k int) int64 {
	switch {
	case g.prev != nil:
		return g.prev[k]
	case k > 0:
		return g.hi[k-1]
	}
	return math.MinInt64
}

// nextOf is the smallest lo above the hi of the k-th member by hi.
func (g *streamGroup) nextOf(k int) int64 {
	switch {
	case g.next != nil:
		return g.next[k]
	case k < len(g.lo)-1:
		return g.lo[k+1]
	}
	return math.MaxInt64
}

// add folds one op into the windows it falls in.
func (nb *neighbourIndex) add(cur *neighbourCursor, op *gpuOp) {
	if !cur.listed {
		cur.listed, cur.before.m, cur.after.m = true, -1, -1
		nb.descMu.Lock()
		nb.cursors = append(nb.cursors, cur)
		nb.descMu.Unlock()
	}
	key := opStream{op.pid, op.device, op.stream}
	if cur.g == nil || cur.key != key {
		cur.key, cur.g = key, nb.groups[key]
		if cur.hints == nil {
			cur.hints = make([]int, 2*nb.ngroup)
		}
	}
	g := cur.g
	if g == nil {
		return
	}
	n := len(g.lo)
	var payload uint64
	// Before windows: the syncs from the first with lo > corr, while their
	// prev is below corr.
	h := &cur.hints[2*g.id]
	k := *h // the hint is almost always the answer: test it inline first
	if k > n || (k > 0 && g.lo[k-1] > op.corr) || (k < n && g.lo[k] <= op.corr) {
		k = seek(n, k, func(i int) bool { return g.lo[i] > op.corr })
		*h = k
	}
	for ; k < n && g.prevOf(k) < op.corr; k++ {
		d := uint64(g.lo[k] - op.corr)
		if d > math.MaxUint32 {
			continue
		}
		if payload == 0 {
			payload = nb.payload(cur, op) + 1
		}
		nb.insertPending(&cur.before, g.loMember[k], 0, MaxGPUBefore, d<<32|(payload-1))
	}
	// After windows: the syncs from the last with hi < corr, back while
	// their next is above corr.
	h = &cur.hints[2*g.id+1]
	k = *h
	if k > n || (k > 0 && g.hi[k-1] >= op.corr) || (k < n && g.hi[k] < op.corr) {
		k = seek(n, k, func(i int) bool { return g.hi[i] >= op.corr })
		*h = k
	}
	for k--; k >= 0 && g.nextOf(k) > op.corr; k-- {
		d := uint64(op.corr - g.hi[k])
		if d > math.MaxUint32 {
			continue
		}
		if payload == 0 {
			payload = nb.payload(cur, op) + 1
		}
		nb.insertPending(&cur.after, g.hiMember[k], MaxGPUBefore, MaxGPUAfter, d<<32|(payload-1))
	}
}

// insertPending adds key to the goroutine's copy of member m's list
// [off, off+n), after flushing the copy of the member before it.
func (nb *neighbourIndex) insertPending(p *pendingList, m int32, off, n int, key uint64) {
	if p.m != m {
		nb.flush(p, off, n)
		p.m = m
	}
	insertInverted(p.keys[:n], ^key)
}

// flush merges a goroutine's copy of a list into the member's slots.
// Slots are plain words under the member's lock.
func (nb *neighbourIndex) flush(p *pendingList, off, n int) {
	if p.m < 0 || p.keys[0] == 0 {
		p.m = -1
		return
	}
	m := int(p.m)
	sl := nb.slots[m*nSlots+off : m*nSlots+off+n]
	mu := &nb.locks[m%nLocks]
	mu.Lock()
	for _, inv := range p.keys[:n] {
		if inv == 0 {
			break
		}
		insertInverted(sl, inv)
	}
	mu.Unlock()
	p.m, p.keys = -1, [max(MaxGPUBefore, MaxGPUAfter)]uint64{}
}

// insertInverted puts inv into a list of inverted keys (largest first,
// zero for empty) if it is among the list's largest.
func insertInverted(sl []uint64, inv uint64) {
	n := len(sl)
	if inv <= sl[n-1] {
		return
	}
	i := n - 1
	for ; i > 0 && sl[i-1] < inv; i-- {
		sl[i] = sl[i-1]
	}
	sl[i] = inv
}
