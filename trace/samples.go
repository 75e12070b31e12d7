package trace

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// sampleLoader attaches the CPU samples that fell inside the syncs. It reads through the export's source.
type sampleLoader struct{ *source }

// The CPU sampling tables of nsys's default capture (-s process-tree).
const (
	tableSamples      = "COMPOSITE_EVENTS"
	tableSampleChains = "SAMPLING_CALLCHAINS"
)

// Bounds on the CPU samples read (see loadSamples).
const (
	// MaxSamplesPerSync is the most samples kept inside one sync: a long
	// wait is sampled hundreds of times in the same stack.
	MaxSamplesPerSync = 4
	// maxSampleStacks bounds the samples whose callchains are fetched, over
	// the whole export; beyond it every k-th kept sample is fetched.
	maxSampleStacks = 1 << 13
	// maxSampleDepth bounds the frames kept of one sampled stack.
	maxSampleDepth = 128
)

// Samples returns the native stacks of the CPU samples taken on the sync's
// thread while it waited in the sync (a sample whose start lies in
// [Start, End]), innermost frame first, at most MaxSamplesPerSync, in
// time order; nil when the export has no CPU samples or none fell inside.
// Kernel-mode frames and nsys's own entries ("[Max depth]", "[Broken
// backtraces]") are left out. Samples of one stack share one slice.
func (s *Sync) Samples() [][]Frame {
	if s.detail == nil {
		return nil
	}
	return s.detail.samples
}

// SetSamples replaces the stacks of Samples. Copies of the Sync made
// before keep theirs.
func (s *Sync) SetSamples(stacks [][]Frame) { s.cloneDetail().samples = stacks }

// sampleHit is a sample inside a sync: the sample's id and the sync's
// index.
type sampleHit struct {
	id   int64
	sync int32
}

// threadSyncs are one thread's syncs by start: their indexes, starts and
// ends.
type threadSyncs struct {
	idx        []int32
	start, end []int64
}

// syncsByThread indexes the syncs that keep accepts (all when keep is
// nil) by thread, each thread's by start.
func syncsByThread(syncs []Sync, keep func(*Sync) bool) map[GlobalTid]*threadSyncs {
	byThread := map[GlobalTid]*threadSyncs{}
	for i := range syncs {
		if keep != nil && !keep(&syncs[i]) {
			continue
		}
		ts := byThread[syncs[i].GlobalTid]
		if ts == nil {
			ts = &threadSyncs{}
			byThread[syncs[i].GlobalTid] = ts
		}
		ts.idx = append(ts.idx, int32(i))
	}
	for _, ts := range byThread {
		byStart := func(a, b int32) int { return cmp.Compare(syncs[a].Start, syncs[b].Start) }
		if !slices.IsSortedFunc(ts.idx, byStart) { // Load's syncs are in time order, nearly always
			slices.SortStableFunc(ts.idx, byStart)
		}
		ts.start, ts.end = make([]int64, len(ts.idx)), make([]int64, len(ts.idx))
		for k, i := range ts.idx {
			ts.start[k], ts.end[k] = syncs[i].Start, syncs[i].End
		}
	}
	return byThread
}

// containing returns the index in syncs of the sync of ts whose [Start,
// End] holds at, or -1; hint is the position a previous call found (0 at
// first), updated for the next call of a caller whose times rise.
func (ts *threadSyncs) containing(at int64, hint *int) int {
	k := seek(len(ts.start), *hint, func(j int) bool { return ts.start[j] > at }) - 1
	if k < 0 {
		return -1
	}
	*hint = k
	if at > ts.end[k] {
		return -1
	}
	return int(ts.idx[k])
}

// inSyncs is the part function of a scan whose rows hold a thread
// (column 1) and a time (column 2): each part's hit, made by newPart, gets
// every row that falls inside a sync of byThread, with the sync's index.
// A part keeps its own search hint: rows in time order cost a step each.
func inSyncs(byThread map[GlobalTid]*threadSyncs, newPart func(p int) func(v []sql.NullInt64, sync int)) onPart {
	return func(_, p int) func(v []sql.NullInt64) error {
		hit := newPart(p)
		tid, hint := int64(0), 0
		var ts *threadSyncs
		return func(v []sql.NullInt64) error {
			if ts == nil || v[1].Int64 != tid {
				tid, ts, hint = v[1].Int64, byThread[GlobalTid(v[1].Int64)], 0
			}
			if ts == nil {
				return nil
			}
			if i := ts.containing(v[2].Int64, &hint); i >= 0 {
				hit(v, i)
			}
			return nil
		}
	}
}

// attachSamples gives each sync the stacks of the CPU samples that fell
// inside it (Sync.Samples).
//
// COMPOSITE_EVENTS has no index but its primary key, and nsys writes it
// in time order, so it is read once, in rowid order, by the page reader
// on every core (a sort by (globalTid, start) of a large table would cost
// more than the scan): each sample is placed by a galloping search from
// the last sync its part found on that thread, which for rows in time
// order is the same or the next one. The samples inside syncs are kept,
// at most MaxSamplesPerSync per sync (the first ones), and their
// callchains are read by primary key, at most maxSampleStacks of them
// (every k-th beyond that, so that every part of the run keeps some).
// Their strings are resolved once per id (lookupStrings), so that every
// frame naming one shares its copy, and identical stacks share one slice.
func (ld sampleLoader) attachSamples(ctx context.Context, syncs []Sync, t *Trace) error {
	s := ld.Schema
	if !s.HasColumn(tableSamples, "start") || !s.HasColumn(tableSamples, "globalTid") ||
		!s.HasColumn(tableSampleChains, "id") || !s.HasColumn(tableSampleChains, "symbol") || !s.HasColumn(tableSampleChains, "stackDepth") {
		return nil
	}
	byThread := syncsByThread(syncs, nil)
	var mu sync.Mutex
	parts := map[int]*[]sampleHit{}
	scan := intScan{what: "reading CPU samples", table: tableSamples,
		cols: []intCol{col("id"), col("globalTid"), col("start")},
		keep: func(v []sql.NullInt64) bool { return v[0].Valid && v[1].Valid && v[2].Valid }}
	rows, err := ld.scanInts(ctx, scan, inSyncs(byThread, func(p int) func(v []sql.NullInt64, sync int) {
		hits := new([]sampleHit)
		mu.Lock()
		parts[p] = hits
		mu.Unlock()
		return func(v []sql.NullInt64, sync int) { *hits = append(*hits, sampleHit{id: v[0].Int64, sync: int32(sync)}) }
	}))
	if err != nil {
		return err
	}
	t.Stats.Samples = rows
	t.Stats.RowsScanned += rows
	if rows == 0 {
		return nil
	}
	t.Evidence.Samples = true
	// Parts are rowid ranges: put end to end, the hits are in rowid
	// order, and each sync keeps its first ones.
	perSync := make([]uint8, len(syncs))
	var kept []sampleHit
	for _, p := range slices.Sorted(maps.Keys(parts)) {
		for _, h := range *parts[p] {
			t.Evidence.SamplesInSyncs++
			if perSync[h.sync] < MaxSamplesPerSync {
				perSync[h.sync]++
				kept = append(kept, h)
			}
		}
	}
	if len(kept) > maxSampleStacks {
		step := (len(kept) + maxSampleStacks - 1) / maxSampleStacks
		thin := kept[:0]
		for i := 0; i < len(kept); i += step {
			thin = append(thin, kept[i])
		}
		kept = thin
	}
	stacks, err := ld.sampleStacks(ctx, kept)
	if err != nil {
		return err
	}
	for _, h := range kept {
		if st, ok := stacks[h.id]; ok {
			d := syncs[h.sync].ownDetail()
			d.samples = append(d.samples, st)
		}
	}
	return nil
}

// rawSampleFrame is one SAMPLING_CALLCHAINS row.
type rawSampleFrame struct{ depth, symbol, module, unresolved int64 }

// sampleStacks reads the callchains of the samples by primary key, and
// returns each sample's stack, innermost first, without kernel-mode
// frames and nsys's own entries; samples with no frame left are absent.
func (ld sampleLoader) sampleStacks(ctx context.Context, hits []sampleHit) (map[int64][]Frame, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	s := ld.Schema
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.id
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	chains := map[int64][]rawSampleFrame{}
	strIDs := map[int64]bool{}
	v, dest := nullInts(6)
	for _, batch := range chunks(ids, 500) {
		q := fmt.Sprintf(`SELECT id, stackDepth, symbol, %s, %s, %s FROM %s WHERE id IN (%s) AND stackDepth < %d`,
			s.col(tableSampleChains, "module", "NULL"), s.col(tableSampleChains, "unresolved", "0"), s.col(tableSampleChains, "kernelMode", "0"),
			s.Name(tableSampleChains), inList(batch), maxSampleDepth)
		_, err := ld.scanRows(ctx, "reading CPU sample callchains", q, dest, func() error {
			if !v[0].Valid || !v[1].Valid || !v[2].Valid || intOr(v[5], 0) != 0 {
				return nil // a kernel-mode frame: the wait inside the driver's system call
			}
			f := rawSampleFrame{depth: v[1].Int64, symbol: v[2].Int64, module: intOr(v[3], -1), unresolved: intOr(v[4], 0)}
			chains[v[0].Int64] = append(chains[v[0].Int64], f)
			strIDs[f.symbol] = true
			if f.module >= 0 {
				strIDs[f.module] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	strs, err := ld.lookupStrings(ctx, strIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[int64][]Frame, len(chains))
	shared := map[string][]Frame{} // identical stacks, by their string ids
	var key []byte
	for id, raw := range chains {
		slices.SortFunc(raw, func(a, b rawSampleFrame) int { return cmp.Compare(a.depth, b.depth) })
		key = key[:0]
		for _, f := range raw {
			if isSpecialEntry(strs[f.symbol]) {
				continue
			}
			key = strconv.AppendInt(key, f.symbol, 10)
			key = strconv.AppendInt(append(key, ','), f.module, 10)
			key = strconv.AppendInt(append(key, ','), f.unresolved, 10)
			key = append(key, ';')
		}
		if len(key) == 0 {
			continue
		}
		st, ok := shared[string(key)]
		if !ok {
			for _, f := range raw {
				if sym := strs[f.symbol]; !isSpecialEntry(sym) {
					st = append(st, Frame{Symbol: sym, Module: strs[f.module], Unresolved: f.unresolved != 0})
				}
			}
			shared[string(key)] = st
		}
		out[id] = st
	}
	return out, nil
}

// isSpecialEntry reports nsys's own callchain entries, such as "[Max
// depth]" (the stack was cut) and "[Broken backtraces]" (unwinding
// failed): no function of the program.
func isSpecialEntry(sym string) bool {
	return strings.HasPrefix(sym, "[") && strings.HasSuffix(sym, "]")
}
