package trace

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
)

// PythonSamplingDomain is the NVTX domain of the marks nsys records with
// --python-sampling=true: one mark a sampling period (1 ms by default) per
// Python thread, with the thread's Python stack as its payload (the same
// payload schema as PythonBacktraceDomain's).
const PythonSamplingDomain = "Python Periodic Sampling"

// PythonSampled tells whether the sync's Python frames come from a
// periodic sample taken on its thread while it waited in the sync
// (--python-sampling), not from a backtrace of its call.
func (s *Sync) PythonSampled() bool { return s.detail != nil && s.detail.pySampled }

// attachPythonSamples gives each sync without Python frames of its own
// the stack of the first Python periodic sample taken on its thread inside
// it ([Start, End]). While a thread waits in a CUDA call its Python stack
// does not move, so a sample inside the wait names the line that made the
// call as a backtrace would. Syncs shorter than the sampling period hold a
// sample only now and then: they keep no frames.
//
// A run at 1 kHz is millions of marks, each with its payload: their
// times are read from the file's pages on every core (scanInts), the
// payloads only of the samples kept, by rowid.
func (ld frameLoader) attachPythonSamples(ctx context.Context, syncs []Sync, domains map[domainKey]string, ev *Evidence) error {
	s := ld.Schema
	var ids []int64
	sampling := map[domainKey]bool{}
	for k, name := range domains {
		if name == PythonSamplingDomain {
			ids = append(ids, k.id)
			sampling[k] = true
		}
	}
	if len(ids) == 0 {
		return nil
	}
	byThread := syncsByThread(syncs, func(s *Sync) bool { return len(s.Python()) == 0 })
	// A sample inside a sync, found by one part of the scan.
	type hit struct {
		rowid, at int64
		sync      int32
	}
	var mu sync.Mutex
	var parts []*[]hit
	var seen atomic.Bool
	scan := intScan{what: "reading Python samples", table: tableNVTX,
		cols:  []intCol{col(rowidColumn), col("globalTid"), col("start"), col("domainId"), col("eventType")},
		where: fmt.Sprintf("eventType = %d AND domainId IN (%s)", nvtxMark, inList(ids)),
		keep: func(v []sql.NullInt64) bool {
			ok := v[0].Valid && v[1].Valid && v[2].Valid && v[4].Int64 == nvtxMark &&
				sampling[domainKey{GlobalTid(v[1].Int64).Process(), v[3].Int64}]
			if ok {
				seen.Store(true)
			}
			return ok
		}}
	_, err := ld.scanInts(ctx, scan, inSyncs(byThread, func(int) func(v []sql.NullInt64, sync int) {
		found := new([]hit)
		mu.Lock()
		parts = append(parts, found)
		mu.Unlock()
		return func(v []sql.NullInt64, sync int) {
			*found = append(*found, hit{rowid: v[0].Int64, at: v[2].Int64, sync: int32(sync)})
		}
	}))
	if err != nil {
		return err
	}
	ev.PythonSamples = ev.PythonSamples || seen.Load()
	// Each sync keeps its earliest sample.
	first := map[int]hit{}
	for _, p := range parts {
		for _, h := range *p {
			if f, ok := first[int(h.sync)]; !ok || h.at < f.at || h.at == f.at && h.rowid < f.rowid {
				first[int(h.sync)] = h
			}
		}
	}
	if len(first) == 0 {
		return nil
	}
	of := make(map[int64]int, len(first))
	rowids := make([]int64, 0, len(first))
	for i, h := range first {
		of[h.rowid] = i
		rowids = append(rowids, h.rowid)
	}
	found := map[int][][3]int64{}
	// One stack is sampled many times: its payload is decoded once.
	decoded := map[string][][3]int64{}
	var rowid sql.NullInt64
	var jsonText sql.NullString
	var blob []byte
	for _, batch := range chunks(rowids, 500) {
		q := fmt.Sprintf(`SELECT rowid, %s, %s FROM %s WHERE rowid IN (%s)`,
			s.col(tableNVTX, "jsonText", "NULL"), s.col(tableNVTX, "binaryData", "NULL"), s.Name(tableNVTX), inList(batch))
		_, err := ld.scanRows(ctx, "reading Python samples", q, []any{&rowid, &jsonText, &blob}, func() error {
			key := jsonText.String
			if key == "" {
				key = string(blob)
			}
			frames, ok := decoded[key]
			if !ok {
				frames = decodeFrames(jsonText, blob)
				decoded[key] = frames
			}
			if len(frames) > 0 {
				found[of[rowid.Int64]] = frames
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return ld.setPythonFrames(ctx, syncs, found, func(_ int, d *syncDetail) {
		d.pySampled = true
		ev.PythonSampledSyncs++
	})
}
