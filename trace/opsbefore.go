package trace

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
)

// MaxOpsBefore bounds the ranges kept in Sync.OpsBefore.
const MaxOpsBefore = 24

// attachOpsBefore gives each sync the push/pop NVTX ranges of its thread
// that began after the thread's previous sync returned and ended before
// this sync began: with --pytorch=autograd-nvtx, the aten ops that led up
// to it. Only the outermost ranges are kept, the latest MaxOpsBefore of
// them, in time order. The ranges from `from` on are streamed once in start
// order, so memory stays bounded by the number of syncs.
func (ld nvtxLoader) attachOpsBefore(ctx context.Context, syncs []Sync, domains map[domainKey]string, from int64) error {
	s := ld.Schema
	if len(syncs) == 0 || !s.HasColumn(tableNVTX, "start") || !s.HasColumn(tableNVTX, "globalTid") {
		return nil
	}
	byThread := map[GlobalTid][]int{}
	last := int64(math.MinInt64)
	for i := range syncs {
		byThread[syncs[i].GlobalTid] = append(byThread[syncs[i].GlobalTid], i)
		last = max(last, syncs[i].Start)
	}
	gapStart := make([]int64, len(syncs)) // the previous sync's return on the thread
	for _, list := range byThread {
		sort.SliceStable(list, func(a, b int) bool { return syncs[list[a]].Start < syncs[list[b]].Start })
		for k, i := range list {
			gapStart[i] = math.MinInt64
			if k > 0 {
				gapStart[i] = syncs[list[k-1]].End
			}
		}
	}
	type pending struct {
		ref    RangeRef
		textID int64
	}
	kept := make([][]pending, len(syncs))
	q := fmt.Sprintf(`SELECT start, "end", globalTid, text, %s, %s FROM %s
		WHERE eventType IN (%d, %d) AND "end" IS NOT NULL AND start >= ? AND start < ? ORDER BY start, "end" DESC`,
		s.col(tableNVTX, "textId", "NULL"), s.col(tableNVTX, "domainId", "0"), s.Name(tableNVTX), nvtxPushPop, nvtxtPushPop)
	var start, end, tid, textID, dom sql.NullInt64
	var text sql.NullString
	_, err := ld.scanRows(ctx, "reading the NVTX ranges before each sync", q, []any{&start, &end, &tid, &text, &textID, &dom}, func() error {
		list := byThread[GlobalTid(tid.Int64)]
		k := sort.Search(len(list), func(j int) bool { return syncs[list[j]].Start >= end.Int64 })
		if k == len(list) {
			return nil
		}
		i := list[k]
		if start.Int64 < gapStart[i] {
			return nil
		}
		if n := len(kept[i]); n > 0 && start.Int64 < kept[i][n-1].ref.End {
			return nil // nested in the previous kept range: not outermost
		}
		ref := RangeRef{Name: text.String, Domain: domains[domainKey{GlobalTid(tid.Int64).Process(), dom.Int64}], Start: start.Int64, End: end.Int64}
		kept[i] = append(kept[i], pending{ref: ref, textID: intOr(textID, -1)})
		if len(kept[i]) > MaxOpsBefore {
			kept[i] = append(kept[i][:0], kept[i][1:]...)
		}
		return nil
	}, from, last)
	if err != nil {
		return err
	}
	ids := map[int64]bool{}
	for _, list := range kept {
		for _, p := range list {
			if p.ref.Name == "" && p.textID >= 0 {
				ids[p.textID] = true
			}
		}
	}
	strs, err := ld.lookupStrings(ctx, ids)
	if err != nil {
		return err
	}
	for i, list := range kept {
		if len(list) == 0 {
			continue
		}
		refs := make([]RangeRef, len(list))
		for j, p := range list {
			refs[j] = p.ref
			if refs[j].Name == "" && p.textID >= 0 {
				refs[j].Name = strs[p.textID]
			}
		}
		syncs[i].ownDetail().opsBefore = refs
	}
	return nil
}
