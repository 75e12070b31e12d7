package trace

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"html"
	"sort"
)

// frameLoader attaches native (CUDA_CALLCHAINS) and Python (backtrace marks)
// frames to the syncs. It reads through the export's source.
type frameLoader struct{ *source }

// attachNativeFrames reads the CUDA callchains of the syncs' calls by
// primary key and resolves their strings.
func (ld frameLoader) attachNativeFrames(ctx context.Context, syncs []Sync, ev *Evidence) error {
	s := ld.Schema
	if !s.HasColumn(tableCallchains, "id") || !s.HasColumn(tableCallchains, "symbol") {
		return nil
	}
	want := map[int64]bool{}
	for i := range syncs {
		for _, c := range syncs[i].Calls() {
			if c.CallchainID >= 0 {
				want[c.CallchainID] = true
			}
		}
	}
	if len(want) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	type rawFrame struct{ depth, symbol, module, unresolved int64 }
	chains := map[int64][]rawFrame{}
	strIDs := map[int64]bool{}
	v, dest := nullInts(5)
	for _, batch := range chunks(ids, 500) {
		q := fmt.Sprintf(`SELECT id, stackDepth, symbol, %s, %s FROM %s WHERE id IN (%s)`,
			s.col(tableCallchains, "module", "NULL"), s.col(tableCallchains, "unresolved", "0"), s.Name(tableCallchains), inList(batch))
		_, err := ld.scanRows(ctx, "reading callchains", q, dest, func() error {
			f := rawFrame{depth: v[1].Int64, symbol: v[2].Int64, module: intOr(v[3], -1), unresolved: v[4].Int64}
			chains[v[0].Int64] = append(chains[v[0].Int64], f)
			strIDs[f.symbol] = true
			if f.module >= 0 {
				strIDs[f.module] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	strs, err := ld.lookupStrings(ctx, strIDs)
	if err != nil {
		return err
	}
	frames := map[int64][]Frame{}
	for id, raw := range chains {
		sort.Slice(raw, func(a, b int) bool { return raw[a].depth < raw[b].depth })
		out := make([]Frame, len(raw))
		for i, f := range raw {
			out[i] = Frame{Symbol: strs[f.symbol], Module: strs[f.module], Unresolved: f.unresolved != 0}
		}
		frames[id] = out
	}
	for i := range syncs {
		// The last call (the sync proper) carries the deciding stack.
		calls := syncs[i].Calls()
		for j := len(calls) - 1; j >= 0; j-- {
			if f, ok := frames[calls[j].CallchainID]; ok && calls[j].CallchainID >= 0 {
				syncs[i].ownDetail().native = f
				ev.Backtraces = true
				break
			}
		}
	}
	return nil
}

// attachPythonFrames matches the "Python Backtrace on CUDA" marks to the
// calls' backtrace rows (same thread, same start) and decodes their
// payload, JSON (--include-json) or binary (--include-blobs).
func (ld frameLoader) attachPythonFrames(ctx context.Context, syncs []Sync, domains map[domainKey]string, ev *Evidence) error {
	s := ld.Schema
	var pyDomains []int64
	pyDomainOf := map[domainKey]bool{}
	for k, name := range domains {
		if name == PythonBacktraceDomain {
			pyDomains = append(pyDomains, k.id)
			pyDomainOf[k] = true
		}
	}
	if len(pyDomains) == 0 {
		return nil
	}
	type markKey struct {
		tid   GlobalTid
		start int64
	}
	owner := map[markKey]int{}
	for i := range syncs {
		for _, c := range syncs[i].Calls() {
			if c.TwinStart >= 0 {
				owner[markKey{c.GlobalTid, c.TwinStart}] = i
			}
		}
	}
	q := fmt.Sprintf(`SELECT globalTid, start, domainId, %s, %s FROM %s WHERE eventType = %d AND domainId IN (%s)`,
		s.col(tableNVTX, "jsonText", "NULL"), s.col(tableNVTX, "binaryData", "NULL"), s.Name(tableNVTX), nvtxMark, inList(pyDomains))
	var tid, start, dom sql.NullInt64
	var jsonText sql.NullString
	var blob []byte
	found := map[int][][3]int64{}
	_, err := ld.scanRows(ctx, "reading Python backtraces", q, []any{&tid, &start, &dom, &jsonText, &blob}, func() error {
		if !pyDomainOf[domainKey{GlobalTid(tid.Int64).Process(), dom.Int64}] {
			return nil
		}
		ev.PythonMarks = true
		i, ok := owner[markKey{GlobalTid(tid.Int64), start.Int64}]
		if !ok {
			return nil
		}
		if _, done := found[i]; done {
			return nil
		}
		frames := decodeFrames(jsonText, blob)
		if len(frames) == 0 {
			return nil
		}
		found[i] = frames
		return nil
	})
	if err != nil {
		return err
	}
	return ld.setPythonFrames(ctx, syncs, found, func(int, *syncDetail) { ev.PythonFrames = true })
}

// setPythonFrames resolves the string ids of the payload frames found per
// sync (function, file, line) and sets them as the syncs' Python frames,
// calling each with the sync's detail after.
func (ld frameLoader) setPythonFrames(ctx context.Context, syncs []Sync, found map[int][][3]int64, each func(int, *syncDetail)) error {
	strIDs := map[int64]bool{}
	for _, frames := range found {
		for _, f := range frames {
			strIDs[f[0]], strIDs[f[1]] = true, true
		}
	}
	strs, err := ld.lookupStrings(ctx, strIDs)
	if err != nil {
		return err
	}
	// nsys escapes the names ("&lt;module&gt;"): unescape each string once,
	// so that every frame naming it shares its one copy, whatever its size.
	for id, v := range strs {
		strs[id] = html.UnescapeString(v)
	}
	for i, ids := range found {
		out := make([]PyFrame, len(ids))
		for j, f := range ids {
			out[j] = PyFrame{Function: strs[f[0]], File: strs[f[1]], Line: f[2]}
		}
		d := syncs[i].ownDetail()
		d.python = out
		each(i, d)
	}
	return nil
}

// decodeFrames reads a Python stack payload: JSON (--include-json) when
// there is one, else the binary blob (--include-blobs).
func decodeFrames(jsonText sql.NullString, blob []byte) [][3]int64 {
	if jsonText.Valid && jsonText.String != "" {
		return decodeJSONFrames(jsonText.String)
	}
	if len(blob) > 0 {
		return decodeBinaryFrames(blob)
	}
	return nil
}

// decodeJSONFrames reads {"<schema>": {"Frames": [{"Function": id, "File":
// id, "Line": n}, ...]}}. Malformed payloads give no frames.
func decodeJSONFrames(text string) [][3]int64 {
	var doc map[string]struct {
		Frames []struct {
			Function int64 `json:"Function"`
			File     int64 `json:"File"`
			Line     int64 `json:"Line"`
		} `json:"Frames"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return nil
	}
	for _, v := range doc {
		out := make([][3]int64, len(v.Frames))
		for i, f := range v.Frames {
			out[i] = [3]int64{f.Function, f.File, f.Line}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// decodeBinaryFrames reads the --include-blobs payload: a 32-byte header
// (count, schema id, payload size, data offset), then thread state id (u64),
// state (u32), frame count (u32) and 24-byte frames {u64 function, u64
// file, i32 line, pad}.
func decodeBinaryFrames(b []byte) [][3]int64 {
	if len(b) < 32 {
		return nil
	}
	off := binary.LittleEndian.Uint64(b[24:32])
	if off > uint64(len(b)) || uint64(len(b))-off < 16 {
		return nil
	}
	p := b[off:]
	count := uint64(binary.LittleEndian.Uint32(p[12:16]))
	p = p[16:]
	if count > uint64(len(p))/24 {
		return nil
	}
	out := make([][3]int64, count)
	for i := range out {
		f := p[i*24:]
		out[i] = [3]int64{int64(binary.LittleEndian.Uint64(f[0:8])), int64(binary.LittleEndian.Uint64(f[8:16])), int64(int32(binary.LittleEndian.Uint32(f[16:20])))}
	}
	return out
}
