package trace

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// nvtxLoader reads the NVTX ranges: the domains, the region an NVTX range
// names, the ranges that enclose each sync and (opsbefore.go) the autograd
// ops before it. It reads through the export's source.
type nvtxLoader struct{ *source }

// NVTX event types (ENUM_NSYS_EVENT_TYPE).
const (
	nvtxMark         = 34
	nvtxPushPop      = 59
	nvtxStartEnd     = 60
	nvtxtPushPop     = 70
	nvtxtStartEnd    = 71
	nvtxDomainCreate = 75
)

// PythonBacktraceDomain is the NVTX domain nsys puts Python frames in.
const PythonBacktraceDomain = "Python Backtrace on CUDA"

// domainKey identifies an NVTX domain: ids are per process.
type domainKey struct {
	pid GlobalPid
	id  int64
}

// loadDomains reads the domain names (eventType 75 rows).
func (ld nvtxLoader) loadDomains(ctx context.Context) (map[domainKey]string, error) {
	out := map[domainKey]string{}
	if !ld.Schema.HasColumn(tableNVTX, "domainId") {
		return out, nil
	}
	q := fmt.Sprintf(`SELECT domainId, globalTid, coalesce(text, '') FROM %s WHERE eventType = %d`, ld.Schema.Name(tableNVTX), nvtxDomainCreate)
	var dom, tid sql.NullInt64
	var text sql.NullString
	_, err := ld.scanRows(ctx, "reading NVTX domains", q, []any{&dom, &tid, &text}, func() error {
		out[domainKey{GlobalTid(tid.Int64).Process(), dom.Int64}] = text.String
		return nil
	})
	return out, err
}

// ParseRangeSpec splits NAME[@DOMAIN].
func ParseRangeSpec(spec string) (name, domain string) {
	if i := strings.LastIndex(spec, "@"); i > 0 {
		return spec[:i], spec[i+1:]
	}
	return spec, ""
}

// findRegion returns every occurrence of the named NVTX range (in the given
// domain when one is named). The name filter runs in SQL.
func (ld nvtxLoader) findRegion(ctx context.Context, spec string, domains map[domainKey]string) (Region, error) {
	name, domain := ParseRangeSpec(spec)
	r := Region{Name: name, Domain: domain}
	s := ld.Schema
	if !s.HasColumn(tableNVTX, "start") {
		return r, inputErr(ld.Path, ErrNVTXNotFound, "NVTX range %q not found: the export has no NVTX events (profile with -t nvtx)", spec)
	}
	q := fmt.Sprintf(`SELECT start, "end", globalTid, %s FROM %s WHERE eventType IN (%d,%d,%d,%d) AND "end" IS NOT NULL
		AND (text = ?1 OR %s IN (SELECT id FROM %s WHERE value = ?1)) ORDER BY start`,
		s.col(tableNVTX, "domainId", "0"), s.Name(tableNVTX), nvtxPushPop, nvtxStartEnd, nvtxtPushPop, nvtxtStartEnd,
		s.col(tableNVTX, "textId", "NULL"), s.Name(tableStrings))
	v, dest := nullInts(4)
	_, err := ld.scanRows(ctx, "finding the NVTX range", q, dest, func() error {
		if domain != "" && domains[domainKey{GlobalTid(v[2].Int64).Process(), v[3].Int64}] != domain {
			return nil
		}
		r.Intervals = append(r.Intervals, Interval{Start: v[0].Int64, End: v[1].Int64})
		return nil
	}, name)
	if err != nil {
		return r, err
	}
	if len(r.Intervals) == 0 {
		return r, inputErr(ld.Path, ErrNVTXNotFound, "NVTX range %q not found (run 'nsyssync doctor' to list the ranges)", spec)
	}
	r.Intervals = mergeIntervals(r.Intervals)
	r.Start, r.End = r.Intervals[0].Start, r.Intervals[len(r.Intervals)-1].End
	for _, iv := range r.Intervals {
		r.Duration += iv.End - iv.Start
	}
	return r, nil
}

// mergeIntervals sorts and merges overlapping intervals, so that nested or
// concurrent occurrences are not counted twice.
func mergeIntervals(in []Interval) []Interval {
	sort.Slice(in, func(i, j int) bool { return in[i].Start < in[j].Start })
	var out []Interval
	for _, iv := range in {
		if n := len(out); n > 0 && iv.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, iv.End)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// attachRanges streams the NVTX ranges once and gives each sync the ranges
// that enclose it: push/pop ranges of its thread, start/end ranges of its
// process. Syncs of a thread inside the same ranges share one list
// (rangeHits.attach).
func (ld nvtxLoader) attachRanges(ctx context.Context, syncs []Sync, domains map[domainKey]string, st *Stats, ev *Evidence) error {
	s := ld.Schema
	if !s.HasColumn(tableNVTX, "start") || len(syncs) == 0 {
		return nil
	}
	// syncs are in time order, so each list is sorted by Start.
	byThread := syncLists(syncs, func(s *Sync) GlobalTid { return s.GlobalTid })
	byProcess := syncLists(syncs, func(s *Sync) GlobalPid { return s.GlobalPid })
	var hits rangeHits
	q := fmt.Sprintf(`SELECT start, "end", eventType, globalTid, text, %s, %s FROM %s WHERE eventType IN (%d,%d,%d,%d) AND "end" IS NOT NULL`,
		s.col(tableNVTX, "textId", "NULL"), s.col(tableNVTX, "domainId", "0"), s.Name(tableNVTX),
		nvtxPushPop, nvtxStartEnd, nvtxtPushPop, nvtxtStartEnd)
	var start, end, typ, tid, textID, dom sql.NullInt64
	var text sql.NullString
	n, err := ld.scanRows(ctx, "reading NVTX ranges", q, []any{&start, &end, &typ, &tid, &text, &textID, &dom}, func() error {
		list := byThread[GlobalTid(tid.Int64)]
		if typ.Int64 == nvtxStartEnd || typ.Int64 == nvtxtStartEnd {
			list = byProcess[GlobalTid(tid.Int64).Process()]
		}
		k := sort.Search(len(list), func(i int) bool { return syncs[list[i]].Start >= start.Int64 })
		r := int32(-1) // the row in hits.ranges, once it encloses a sync
		for ; k < len(list) && syncs[list[k]].Start < end.Int64; k++ {
			if syncs[list[k]].End > end.Int64 {
				continue
			}
			if r < 0 {
				ref := RangeRef{Name: text.String, Domain: domains[domainKey{GlobalTid(tid.Int64).Process(), dom.Int64}], Start: start.Int64, End: end.Int64}
				id := int64(-1)
				if ref.Name == "" && textID.Valid {
					id = textID.Int64
				} else {
					ev.AutogradNVTX = ev.AutogradNVTX || strings.HasPrefix(ref.Name, "aten::")
				}
				r = hits.add(ref, id)
			}
			hits.pairs.append(rangePair{sync: list[k], rng: r})
		}
		return nil
	})
	if err != nil {
		return err
	}
	st.NVTXRanges += n
	st.RowsScanned += n
	ev.NVTX = ev.NVTX || n > 0
	ids := map[int64]bool{}
	for _, id := range hits.textIDs {
		if id >= 0 {
			ids[id] = true
		}
	}
	strs, err := ld.lookupStrings(ctx, ids)
	if err != nil {
		return err
	}
	for i, id := range hits.textIDs {
		if id < 0 {
			continue
		}
		hits.ranges[i].Name = strs[id]
		if strings.HasPrefix(hits.ranges[i].Name, "aten::") {
			ev.AutogradNVTX = true
		}
	}
	hits.attach(syncs)
	return nil
}

// hasNVTX reports whether the export has any NVTX range, cheaply.
func (ld nvtxLoader) hasNVTX(ctx context.Context) (bool, error) {
	if !ld.Schema.HasColumn(tableNVTX, "eventType") {
		return false, nil
	}
	q := fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s WHERE eventType IN (%d,%d,%d,%d))`, ld.Schema.Name(tableNVTX), nvtxPushPop, nvtxStartEnd, nvtxtPushPop, nvtxtStartEnd)
	v, dest := nullInts(1)
	_, err := ld.scanRows(ctx, "probing NVTX", q, dest, func() error { return nil })
	return v[0].Int64 == 1, err
}
