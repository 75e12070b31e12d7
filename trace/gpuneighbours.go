package trace

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// MaxGPUBefore and MaxGPUAfter bound the ops of Sync.GPUBefore and
// Sync.GPUAfter. Four after: a boolean-mask count is followed by CUB's
// compaction (two kernels) and only then by the op that tells a read
// (`index_kernel`) from an assignment (`index_put_kernel`).
const (
	MaxGPUBefore = 3
	MaxGPUAfter  = 4
)

// GPUOpKind is the kind of a GPU op of GPUBefore and GPUAfter.
type GPUOpKind uint8

// GPU op kinds.
const (
	GPUKernel GPUOpKind = iota + 1
	GPUMemcpy
	GPUMemset
	GPUGraph // a graph launch traced at graph level (one row for the graph)
)

func (k GPUOpKind) String() string {
	switch k {
	case GPUKernel:
		return "kernel"
	case GPUMemcpy:
		return "memcpy"
	case GPUMemset:
		return "memset"
	case GPUGraph:
		return "graph"
	}
	return "unknown"
}

// GPUOpRef is a GPU op enqueued on a sync's stream just before or just
// after it (Sync.GPUBefore, Sync.GPUAfter).
type GPUOpRef struct {
	// Name: a kernel's demangled name (the export's demangledName, its
	// shortName when that is absent); for the others a fixed short name:
	// "[memcpy HtoD]", "[memcpy DtoH]", "[memcpy DtoD]", "[memcpy HtoH]",
	// "[memcpy PtoP]" or "[memcpy]" (direction unknown) for a copy,
	// "[memset]", "[graph]". The string is shared by every op of that
	// name: no copy per sync.
	Name          string
	CorrelationID int64 // of the launch (the API call that enqueued it)
	Bytes         int64 // a copy's or memset's size; 0 for kernels and graphs
	Kind          GPUOpKind
	Copy          CopyKind // a copy's direction (normalised: HtoA counts as HtoD, …); 0 otherwise
}

// gpuNeighbours holds the ops of GPUBefore and GPUAfter, with each
// CorrelationID replaced by its distance from the sync (before: the
// sync's first correlation id minus the op's; after: the op's minus the
// sync's last), so that the syncs of a repeated pattern share one.
type gpuNeighbours struct {
	before, after []GPUOpRef
}

// corrWindow returns the correlation ids that bound a sync's windows: the
// ops before it have ids below lo, those after it ids above hi. lo is the
// first call's id, or, for an event sync, the event record's when that
// is earlier (the sync waited only for the work before the record); hi is
// the last call's id.
func (s *Sync) corrWindow() (lo, hi int64) {
	calls := s.Calls()
	if len(calls) == 0 {
		return s.waitCorr, s.waitCorr
	}
	return min(calls[0].CorrelationID, s.waitCorr), calls[len(calls)-1].CorrelationID
}

// GPUBefore returns the GPU ops the sync waited for last: the latest
// MaxGPUBefore ops (kernels, copies, memsets, graphs) enqueued on the
// sync's stream by its process after the previous sync of that stream and
// before this one, in launch (correlation id) order. Exactly: the ops of
// the process on the sync's (device, stream) whose correlation id c has
// prev < c < lo, where lo is the sync's first call's id (for an event
// sync, the event record's id if earlier) and prev the largest last-call
// id below lo among the other syncs of the stream; ops with equal ids (the
// kernels of one graph launch traced at node level) are in an order fixed
// by their kind and name. The sync's own copy or memset is not among
// them (its id is the sync's first call's).
//
// Syncs with a stream have them: stream and event syncs, copies and
// memsets resolved to their activity. A context-scope sync (device or
// context synchronize, cudaFree) is counted as a sync of its thread's
// previous stream-scoped sync's stream (the same device), and has none
// when the thread had no such sync before it. Ops more than 2^32-1
// correlation ids away are not looked at. The result is a new slice; see
// AppendGPUBefore to reuse one.
func (s *Sync) GPUBefore() []GPUOpRef { return s.AppendGPUBefore(nil) }

// GPUAfter returns the first MaxGPUAfter GPU ops enqueued on the sync's
// stream by its process after the sync's last call and before the next
// sync of that stream began, in launch order: the ops with hi < c < next,
// hi the sync's last call's correlation id and next the smallest lo (see
// GPUBefore) above hi among the stream's other syncs. An empty result
// means the program enqueued nothing on the stream before its next sync.
func (s *Sync) GPUAfter() []GPUOpRef { return s.AppendGPUAfter(nil) }

// AppendGPUBefore appends the ops of GPUBefore to dst and returns it.
func (s *Sync) AppendGPUBefore(dst []GPUOpRef) []GPUOpRef {
	if s.detail == nil || s.detail.gpu == nil {
		return dst
	}
	lo, _ := s.corrWindow()
	for _, op := range s.detail.gpu.before {
		op.CorrelationID = lo - op.CorrelationID
		dst = append(dst, op)
	}
	return dst
}

// AppendGPUAfter appends the ops of GPUAfter to dst and returns it.
func (s *Sync) AppendGPUAfter(dst []GPUOpRef) []GPUOpRef {
	if s.detail == nil || s.detail.gpu == nil {
		return dst
	}
	_, hi := s.corrWindow()
	for _, op := range s.detail.gpu.after {
		op.CorrelationID += hi
		dst = append(dst, op)
	}
	return dst
}

// SetGPUOps replaces the ops of GPUBefore and GPUAfter (their correlation
// ids are kept relative to the sync's calls, which should be set first).
// Copies of the Sync made before keep theirs.
func (s *Sync) SetGPUOps(before, after []GPUOpRef) {
	d := s.cloneDetail()
	d.gpu = nil
	if len(before) == 0 && len(after) == 0 {
		return
	}
	lo, hi := s.corrWindow()
	g := &gpuNeighbours{before: slices.Clone(before), after: slices.Clone(after)}
	for i := range g.before {
		g.before[i].CorrelationID = lo - g.before[i].CorrelationID
	}
	for i := range g.after {
		g.after[i].CorrelationID -= hi
	}
	d.gpu = g
}

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
	groups map[[3]int64]*streamGroup // (globalPid, device, stream)
	member []int32                   // sync index of each member
	slots  []uint64                  // nSlots per member, under locks[member%nLocks]
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
	key   [3]int64
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

// streamKeys calls fn with each sync that has a stream for its windows,
// in order, and its (globalPid, device, stream): its own stream, or for a
// context-scope sync the stream of its thread's previous stream-scoped
// sync when that is on the same device (or the sync's device is unknown).
func streamKeys(syncs []Sync, fn func(i int, key [3]int64)) {
	last := map[int64][2]int64{}               // globalTid -> device, stream of its last stream-scoped sync
	tid, cached := int64(-1), [2]int64{-1, -1} // last's entry of the latest thread set
	for i := range syncs {
		s := &syncs[i]
		switch {
		case s.Stream >= 0 && s.Device >= 0:
			fn(i, [3]int64{s.GlobalPid, s.Device, s.Stream})
			if v := [2]int64{s.Device, s.Stream}; tid != s.GlobalTid || cached != v {
				last[s.GlobalTid], tid, cached = v, s.GlobalTid, v
			}
		case s.Scope == ScopeContext:
			if l, has := last[s.GlobalTid]; has && (s.Device < 0 || s.Device == l[0]) {
				fn(i, [3]int64{s.GlobalPid, l[0], l[1]})
			}
		}
	}
}

// newNeighbourIndex groups the syncs that have a stream; nil when none has.
func newNeighbourIndex(syncs []Sync) *neighbourIndex {
	nb := &neighbourIndex{groups: map[[3]int64]*streamGroup{}, descIx: map[opDesc]uint32{}}
	var g *streamGroup
	var gkey [3]int64
	streamKeys(syncs, func(i int, key [3]int64) {
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
	key := [3]int64{op.pid, op.device, op.stream}
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

// payload is the low 32 bits of an op's keys.
func (nb *neighbourIndex) payload(cur *neighbourCursor, op *gpuOp) uint64 {
	if p, ok := inlinePayload(op); ok {
		return p
	}
	d := opDesc{kind: op.kind, name: op.name, bytes: op.bytes, copy: normDirection(CopyKind(op.copyKind))}
	if i, ok := cur.descs[d]; ok {
		return descFlag | descTable | uint64(i)
	}
	nb.descMu.Lock()
	i, ok := nb.descIx[d]
	if !ok {
		i = uint32(len(nb.descs))
		nb.descs = append(nb.descs, d)
		nb.descIx[d] = i
	}
	nb.descMu.Unlock()
	if cur.descs == nil {
		cur.descs = map[opDesc]uint32{}
	}
	cur.descs[d] = i
	return descFlag | descTable | uint64(i)
}

// inlinePayload is the payload of an op that needs no table, so that the
// order of ops of equal correlation id does not depend on the scan: a
// kernel's name id below 2^31, or descFlag with the kind (bits 28-29), a
// copy's normalised direction (bits 24-27) and the bytes (below 2^24).
// Larger values go through descs (descFlag|descTable and the index).
func inlinePayload(op *gpuOp) (uint64, bool) {
	if op.kind == GPUKernel {
		return uint64(op.name), op.name >= 0 && op.name < descFlag
	}
	ck := int64(normDirection(CopyKind(op.copyKind)))
	if op.bytes < 0 || op.bytes >= 1<<24 || ck < 0 || ck >= 16 {
		return 0, false
	}
	return descFlag | uint64(op.kind-GPUMemcpy)<<28 | uint64(ck)<<24 | uint64(op.bytes), true
}

// desc decodes a payload with descFlag set.
func (nb *neighbourIndex) desc(p uint64) opDesc {
	if p&descTable != 0 {
		return nb.descs[p&(descTable-1)]
	}
	return opDesc{kind: GPUMemcpy + GPUOpKind(p>>28&3), copy: CopyKind(p >> 24 & 15), bytes: int64(p & (1<<24 - 1))}
}

// copyName is the Name of a copy of direction k.
func copyName(k CopyKind) string {
	switch normDirection(k) {
	case CopyHtoD:
		return "[memcpy HtoD]"
	case CopyDtoH:
		return "[memcpy DtoH]"
	case CopyDtoD:
		return "[memcpy DtoD]"
	case CopyHtoH:
		return "[memcpy HtoH]"
	case CopyPtoP:
		return "[memcpy PtoP]"
	}
	return "[memcpy]"
}

// finish resolves the kept ops' names and gives each member sync its
// ops, shared with the syncs whose ops are the same at the same
// distances. The syncs have no detail yet (the scan runs before the
// frames and ranges are attached).
func (nb *neighbourIndex) finish(syncs []Sync, lookup func(map[int64]bool) (map[int64]string, error)) error {
	for _, cur := range nb.cursors { // the scan is over
		nb.flush(&cur.before, 0, MaxGPUBefore)
		nb.flush(&cur.after, MaxGPUBefore, MaxGPUAfter)
	}
	nb.cursors = nil
	type slotKey [nSlots]uint64
	distinct := map[slotKey]int32{}
	var lists []slotKey
	which := make([]int32, len(nb.member)) // index in lists, -1 for none
	names := map[int64]bool{}
	for m := range nb.member {
		var k slotKey
		for j := range k {
			k[j] = ^nb.slots[m*nSlots+j] // empty: noSlot; the scan is over
		}
		if k[0] == noSlot && k[MaxGPUBefore] == noSlot {
			which[m] = -1
			continue
		}
		i, ok := distinct[k]
		if !ok {
			i = int32(len(lists))
			distinct[k] = i
			lists = append(lists, k)
			for _, key := range k {
				if key == noSlot {
					continue
				}
				p := key & math.MaxUint32
				if p&descFlag == 0 {
					names[int64(p)] = true
				} else if d := nb.desc(p); d.kind == GPUKernel && d.name >= 0 {
					names[d.name] = true
				}
			}
		}
		which[m] = i
	}
	nb.slots = nil
	strs, err := lookup(names)
	if err != nil {
		return err
	}
	ref := func(key uint64) GPUOpRef {
		p := key & math.MaxUint32
		op := GPUOpRef{CorrelationID: int64(key >> 32), Kind: GPUKernel}
		if p&descFlag == 0 {
			op.Name = strs[int64(p)]
			return op
		}
		d := nb.desc(p)
		op.Kind, op.Bytes = d.kind, d.bytes
		switch d.kind {
		case GPUKernel:
			op.Name = strs[d.name]
		case GPUMemcpy:
			op.Name, op.Copy = copyName(d.copy), d.copy
		case GPUMemset:
			op.Name = "[memset]"
		case GPUGraph:
			op.Name = "[graph]"
		}
		return op
	}
	details := make([]*syncDetail, len(lists))
	for i, k := range lists {
		g := &gpuNeighbours{}
		for j := MaxGPUBefore - 1; j >= 0; j-- { // farthest first: launch order
			if k[j] != noSlot {
				g.before = append(g.before, ref(k[j]))
			}
		}
		for j := MaxGPUBefore; j < nSlots; j++ {
			if k[j] != noSlot {
				g.after = append(g.after, ref(k[j]))
			}
		}
		details[i] = &syncDetail{gpu: g, shared: true}
	}
	for m, i := range which {
		if i >= 0 {
			syncs[nb.member[m]].detail = details[i]
		}
	}
	return nil
}
