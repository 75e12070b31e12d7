package trace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// namedOp is a GPU op read with plain SQL, its name joined from StringIds.
type namedOp struct {
	op  gpuOp
	ref GPUOpRef // CorrelationID set
	tie uint64   // order among ops of equal correlation id (the payload)
}

// namedGPUOps reads every kernel, memcpy, memset and graph row of an
// export with its name, through SQLite.
func namedGPUOps(t *testing.T, x *Export, path string) []namedOp {
	t.Helper()
	db := rawDB(t, path)
	var out []namedOp
	for _, table := range []string{tableKernel, tableMemcpy, tableMemset, tableGraphTrace} {
		if !x.Schema.HasColumn(table, "start") || !x.Schema.HasColumn(table, "streamId") {
			continue
		}
		c := func(name, def string) string {
			if x.Schema.HasColumn(table, name) {
				return "g." + name
			}
			return def
		}
		name, bytes, ck, join := "-1", "0", "0", ""
		switch table {
		case tableKernel:
			name = "coalesce(" + c("demangledName", c("shortName", "-1")) + ", -1)"
			join = " LEFT JOIN StringIds s ON s.id = " + name
		case tableMemcpy:
			bytes, ck = c("bytes", "0"), c("copyKind", "0")
		case tableMemset:
			bytes = c("bytes", "0")
		}
		text := "''"
		if join != "" {
			text = "coalesce(s.value, '')"
		}
		q := fmt.Sprintf(`SELECT g.deviceId, g.streamId, %s, %s, %s, %s, %s, %s FROM %s g%s`,
			c("correlationId", "0"), c("globalPid", "0"), name, bytes, ck, text, x.Schema.Name(table), join)
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		kind := map[string]GPUOpKind{tableKernel: GPUKernel, tableMemcpy: GPUMemcpy, tableMemset: GPUMemset, tableGraphTrace: GPUGraph}[table]
		for rows.Next() {
			var v [7]sql.NullInt64
			var s string
			if err := rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &s); err != nil {
				t.Fatal(err)
			}
			o := namedOp{op: gpuOp{device: DeviceID(v[0].Int64), stream: StreamID(v[1].Int64), corr: v[2].Int64, pid: GlobalPid(v[3].Int64),
				kind: kind, name: v[4].Int64, bytes: v[5].Int64, copyKind: v[6].Int64}}
			o.ref = GPUOpRef{CorrelationID: o.op.corr, Kind: kind}
			o.tie = tieOf(&o.op)
			switch kind {
			case GPUKernel:
				o.ref.Name = s
			case GPUMemcpy:
				o.ref.Copy, o.ref.Bytes = normDirection(CopyKind(o.op.copyKind)), o.op.bytes
				o.ref.Name = copyName(o.ref.Copy)
			case GPUMemset:
				o.ref.Name, o.ref.Bytes = "[memset]", o.op.bytes
			case GPUGraph:
				o.ref.Name = "[graph]"
			}
			out = append(out, o)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// tieOf is the order of an op among those of equal correlation id:
// inlinePayload, or MaxUint32 where the scan's order depends on the order
// the ops arrived in.
func tieOf(op *gpuOp) uint64 {
	if p, ok := inlinePayload(op); ok {
		return p
	}
	return math.MaxUint32
}

// bruteNeighbours computes GPUBefore and GPUAfter of every sync from
// their definitions: for each sync with a stream, the other syncs of its
// stream give the window's bounds, and every op of the export is tested
// against the window. ambiguous is set when ops of equal correlation id
// whose order the definition does not fix compete for the last place.
func bruteNeighbours(syncs []Sync, ops []namedOp) (before, after [][]GPUOpRef, ambiguous []bool) {
	byKey := map[opStream][]int{}
	streamKeys(syncs, func(i int, key opStream) { byKey[key] = append(byKey[key], i) })
	opsBy := map[opStream][]namedOp{}
	for _, o := range ops {
		k := opStream{o.op.pid, o.op.device, o.op.stream}
		if _, has := byKey[k]; has {
			opsBy[k] = append(opsBy[k], o)
		}
	}
	before, after, ambiguous = make([][]GPUOpRef, len(syncs)), make([][]GPUOpRef, len(syncs)), make([]bool, len(syncs))
	for k, members := range byKey {
		for _, i := range members {
			lo, hi := syncs[i].corrWindow()
			prev, next := int64(math.MinInt64), int64(math.MaxInt64)
			for _, j := range members {
				if j == i {
					continue
				}
				l, h := syncs[j].corrWindow()
				if h < lo {
					prev = max(prev, h)
				}
				if l > hi {
					next = min(next, l)
				}
			}
			type cand struct {
				d   int64
				tie uint64
				ref GPUOpRef
			}
			var b, a []cand
			for _, o := range opsBy[k] {
				c := o.op.corr
				if prev < c && c < lo && lo-c <= math.MaxUint32 {
					b = append(b, cand{lo - c, o.tie, o.ref})
				}
				if hi < c && c < next && c-hi <= math.MaxUint32 {
					a = append(a, cand{c - hi, o.tie, o.ref})
				}
			}
			less := func(x, y cand) int {
				if x.d != y.d {
					return int(x.d - y.d)
				}
				return int(int64(x.tie) - int64(y.tie))
			}
			slices.SortStableFunc(b, less)
			slices.SortStableFunc(a, less)
			cut := func(cs []cand, n int) []cand {
				if len(cs) > n {
					for _, x := range cs[:n] {
						for _, y := range cs[n:] {
							if x.d == y.d && x.tie == math.MaxUint32 && y.tie == math.MaxUint32 && x.ref != y.ref {
								ambiguous[i] = true
							}
						}
					}
					cs = cs[:n]
				}
				return cs
			}
			b, a = cut(b, MaxGPUBefore), cut(a, MaxGPUAfter)
			for j := len(b) - 1; j >= 0; j-- {
				before[i] = append(before[i], b[j].ref)
			}
			for _, c := range a {
				after[i] = append(after[i], c.ref)
			}
		}
	}
	return before, after, ambiguous
}

// sameOps compares ops, ignoring the order of ops of equal correlation id
// that the definition leaves open.
func sameOps(got, want []GPUOpRef) bool {
	if len(got) != len(want) {
		return false
	}
	key := func(r GPUOpRef) string {
		return fmt.Sprintf("%d|%d|%s|%d|%d", r.CorrelationID, r.Kind, r.Name, r.Bytes, r.Copy)
	}
	g, w := make([]string, len(got)), make([]string, len(want))
	for i := range got {
		if got[i].CorrelationID != want[i].CorrelationID {
			return false
		}
		g[i], w[i] = key(got[i]), key(want[i])
	}
	sort.Strings(g)
	sort.Strings(w)
	return slices.Equal(g, w)
}

// TestGPUNeighboursMatchBruteForce checks GPUBefore and GPUAfter of every
// sync of the fixtures and of the corpus against bruteNeighbours, on ops
// and names read with plain SQLite.
func TestGPUNeighboursMatchBruteForce(t *testing.T) {
	files, _ := filepath.Glob("../fixtures/*.sqlite*")
	corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	checked, withOps := 0, 0
	for _, path := range append(files, corpus...) {
		x, err := Open(context.Background(), path)
		if errors.Is(err, ErrNoCUDATrace) {
			continue
		}
		if err != nil {
			t.Fatalf("Open(%s): %v", path, err)
		}
		tr, err := x.Load(context.Background(), LoadOptions{})
		if errors.Is(err, ErrNoCUDATrace) {
			x.Close()
			continue
		}
		if err != nil {
			t.Fatalf("Load(%s): %v", path, err)
		}
		ops := namedGPUOps(t, x, path)
		x.Close()
		before, after, ambiguous := bruteNeighbours(tr.Syncs, ops)
		n := 0
		for i := range tr.Syncs {
			s := &tr.Syncs[i]
			gb, ga := s.GPUBefore(), s.GPUAfter()
			if len(gb)+len(ga) > 0 {
				n++
			}
			if ambiguous[i] {
				continue
			}
			if !sameOps(gb, before[i]) || !sameOps(ga, after[i]) {
				t.Fatalf("%s: sync %d (%s, stream %d, calls %v):\nscan   before %+v\n       after  %+v\ndirect before %+v\n       after  %+v",
					filepath.Base(path), i, s.Reason, s.Stream, s.APIs(), gb, ga, before[i], after[i])
			}
		}
		t.Logf("%s: %d of %d syncs with GPU ops around them", filepath.Base(path), n, len(tr.Syncs))
		if n > 0 {
			withOps++
		}
		checked++
	}
	if checked < len(files) || withOps == 0 {
		t.Fatalf("checked %d exports (%d with GPU ops around a sync), want at least the %d fixtures", checked, withOps, len(files))
	}
}

// TestGPUOpsShared checks that syncs share their GPU ops' detail, and that
// setting another detail on one of them copies it first.
func TestGPUOpsShared(t *testing.T) {
	calls := []Call{{CorrelationID: 10}, {CorrelationID: 20}}
	var a, b Sync
	a.SetCalls(calls[:1])
	b.SetCalls(calls[1:])
	a.waitCorr, b.waitCorr = 10, 20
	a.SetGPUOps([]GPUOpRef{{Name: "k", CorrelationID: 8, Kind: GPUKernel}}, []GPUOpRef{{Name: "[memcpy DtoH]", CorrelationID: 11, Kind: GPUMemcpy, Bytes: 4}})
	b.detail = a.detail
	a.detail.shared = true
	b.ownDetail().native = []Frame{{Symbol: "f"}}
	if a.Native() != nil || len(b.Native()) != 1 || b.detail.shared {
		t.Fatal("ownDetail changed a shared detail")
	}
	if got := b.GPUBefore(); len(got) != 1 || got[0].CorrelationID != 18 {
		t.Errorf("b before %+v: want the same op 2 ids before its call", got)
	}
	if got := a.GPUAfter(); len(got) != 1 || got[0].CorrelationID != 11 || got[0].Bytes != 4 {
		t.Errorf("a after %+v", got)
	}
	a.SetGPUOps(nil, nil)
	if a.GPUBefore() != nil || len(b.GPUBefore()) != 1 {
		t.Error("SetGPUOps(nil, nil)")
	}
}

// TestGPUNeighboursPatterns logs what the lean patterns fixture shows
// around its syncs: the names the classifier's rules read.
func TestGPUNeighboursPatterns(t *testing.T) {
	tr := loadFile(t, "../fixtures/patterns_lean.sqlite.gz", LoadOptions{})
	short := func(ops []GPUOpRef) string {
		var parts []string
		for _, op := range ops {
			n := op.Name
			if len(n) > 150 {
				n = n[:150] + "…"
			}
			if op.Kind != GPUKernel {
				n = fmt.Sprintf("%s %d B", n, op.Bytes)
			}
			parts = append(parts, n)
		}
		return strings.Join(parts, " | ")
	}
	n := 0
	for i := range tr.Syncs {
		s := &tr.Syncs[i]
		if s.detail == nil || s.detail.gpu == nil {
			continue
		}
		n++
		t.Logf("sync %d %s %v stream %d\n\tbefore: %s\n\tafter:  %s", i, s.Reason, s.APIs(), s.Stream, short(s.GPUBefore()), short(s.GPUAfter()))
	}
	if n == 0 {
		t.Fatal("no sync of patterns_lean has GPU ops around it")
	}
}
