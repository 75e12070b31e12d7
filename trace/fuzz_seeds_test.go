package trace_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// fieldProgram writes programs for fieldDecoder: the seeds of
// FuzzExportFields.
type fieldProgram struct{ b []byte }

// payloadArg and nameArg stand for the fuzz target's string arguments.
type (
	payloadArg struct{}
	nameArg    struct{}
)

func newFieldProgram(flags byte) *fieldProgram { return &fieldProgram{b: []byte{flags}} }

// row adds a row: the rowid (nil: SQLite picks it; left out for
// StringIds), then a value per column.
func (p *fieldProgram) row(table string, vals ...any) {
	ti := fieldTableIndex(table)
	n := len(fieldTables[ti].cols) + 1
	if fieldTables[ti].noRowid {
		n--
	}
	if len(vals) != n {
		panic(fmt.Sprintf("%s: %d values, want %d", table, len(vals), n))
	}
	p.b = append(p.b, byte(ti))
	for _, v := range vals {
		p.put(v)
	}
}

func (p *fieldProgram) put(v any) {
	switch x := v.(type) {
	case nil:
		p.b = append(p.b, 0)
	case int:
		p.put(int64(x))
	case int64:
		if i := slices.Index(fieldInts, x); i >= 0 {
			p.b = append(p.b, 2, byte(i))
		} else if x == int64(int8(x)) {
			p.b = append(p.b, 1, byte(int8(x)))
		} else {
			p.b = append(p.b, 3)
			p.b = binary.BigEndian.AppendUint64(p.b, uint64(x))
		}
	case float64:
		switch {
		case math.IsInf(x, 1):
			p.b = append(p.b, 6, 251)
		case x == 1e300:
			p.b = append(p.b, 6, 253)
		default:
			p.b = append(p.b, 6, byte(int8(x/1.5)))
		}
	case string:
		if i := slices.Index(fieldKnown, x); i >= 0 {
			p.b = append(p.b, 5, byte(i))
		} else {
			p.b = append(p.b, 4, byte(len(x)))
			p.b = append(p.b, x...)
		}
	case []byte:
		p.b = append(p.b, 7, byte(len(x)))
		p.b = append(p.b, x...)
	case payloadArg:
		p.b = append(p.b, 8)
	case nameArg:
		p.b = append(p.b, 9)
	default:
		panic(fmt.Sprintf("cannot encode %T", v))
	}
}

// fieldSeed is one seed of FuzzExportFields.
type fieldSeed struct {
	prog          []byte
	payload, name string
}

// String ids of fieldStrings used by the seeds.
const (
	sidStreamSync = 1 + iota
	sidMemcpyAsync
	sidEventSync
	sidDeviceSync
	sidFree
	sidMemsetAsync
	sidCtxSync
	sidStreamWait
	sidLaunch
	sidMemcpy
	sidEventRecord
	_
	sidAtenItem
	sidLocalScalar
	sidTrainPy
	_
	sidTHPItem
	sidLibTorch
	sidSgemm
	sidPython
)

// seedValues are what the seeds vary: the odd values the fuzzer should
// start from.
type seedValues struct {
	syncEnd, kernelStart, copyBytes any
	rangeEnd, atenEnd               any
	chainID, chainDepth             any
	runtimeRowid, kernelRowid       any
	time                            any // a kernel's start as text, real, …
}

// fieldSeeds are a PyTorch step in miniature — a kernel, an .item() copy
// and its stream synchronize with native and Python backtraces, an event
// synchronize, a device synchronize, a free, a pageable copy, a memset, a
// stream wait, NVTX ranges — first well formed, then with odd values.
func fieldSeeds() []fieldSeed {
	good := seedValues{syncEnd: 9000, kernelStart: 1200, copyBytes: 4, rangeEnd: 30000, atenEnd: 9100, chainID: 5, chainDepth: 1, time: 1300}
	odd := seedValues{syncEnd: int64(math.MaxInt64), kernelStart: int64(math.MinInt64), copyBytes: int64(math.MaxInt64),
		rangeEnd: nil, atenEnd: 100, chainID: 99, chainDepth: int64(1 << 32),
		runtimeRowid: int64(math.MaxInt64), kernelRowid: int64(math.MinInt64), time: 1300}
	text := odd
	text.time = "soon"
	json := `{"PyBt":{"Frames":[{"Function":14,"File":15,"Line":42},{"Function":24,"File":15,"Line":7}]}}`
	return []fieldSeed{
		{stepProgram(0, good), json, "step"},
		{stepProgram(flagNVTXStep, good), json, "step"},
		{stepProgram(flagNVTXName, good), json, "step@Python Backtrace on CUDA"},
		{stepProgram(flagUntyped|flagAllTables, seedValues{syncEnd: "9000", kernelStart: 12.0, copyBytes: "4", rangeEnd: 30000,
			atenEnd: 9100, chainID: "5", chainDepth: 1, time: []byte("1300")}), `{"PyBt":{"Frames":[{"Function":"14"}]}}`, "x"},
		{stepProgram(0, odd), `{"PyBt":{"Frames":[{"Function":14,"File":15,"Line":1e99}]}}`, "aten::item"},
		{stepProgram(flagNVTXStep|flagUntyped, odd), `{"PyBt":`, ""},
		{stepProgram(0, text), "[]", ""},
		{newFieldProgram(flagAllTables).b, "", ""},
	}
}

// stepProgram writes the miniature step with the given values.
func stepProgram(flags byte, v seedValues) []byte {
	const tid, pid, gpid = int64(0x100040f00040f), 1039, int64(0x100040f000000)
	p := newFieldProgram(flags)
	p.row("META_DATA_EXPORT", nil, "EXPORT_SCHEMA_VERSION", "3.20.3")
	p.row("META_DATA_EXPORT", nil, "EXPORT_PRODUCT_VERSION", "2025.3.2.0")
	p.row("TARGET_INFO_GPU", nil, 0, "NVIDIA H100 80GB HBM3", "0000:01:00.0", 132, 0, 9, 0)
	p.row("TARGET_INFO_CUDA_STREAM", nil, 7, pid, 1, 3)
	p.row("TARGET_INFO_CUDA_STREAM", nil, 13, pid, 1, 2)
	p.row("TARGET_INFO_CUDA_CONTEXT_INFO", nil, 7, pid, 0, 1)
	p.row("PROCESSES", nil, gpid, pid, "python3")
	p.row("ThreadNames", nil, sidPython, 0, tid)

	rt := "CUPTI_ACTIVITY_KIND_RUNTIME"
	p.row(rt, v.runtimeRowid, 1000, 1100, 0, tid, 1, sidLaunch, 0, nil)
	p.row(rt, nil, 2000, 2500, 0, tid, 2, sidMemcpyAsync, 0, nil)
	p.row(rt, nil, 1990, 2510, 67, tid, 2, sidMemcpyAsync, 0, 5)
	p.row(rt, nil, 2600, v.syncEnd, 0, tid, 3, sidStreamSync, 0, nil)
	p.row(rt, nil, 2590, 9010, 67, tid, 3, sidStreamSync, 0, v.chainID)
	p.row(rt, nil, 9500, 9600, 0, tid, 4, sidEventRecord, 0, nil)
	p.row(rt, nil, 10000, 12000, 0, tid, 5, sidEventSync, 0, nil)
	p.row(rt, nil, 13000, 15000, 0, tid, 6, sidDeviceSync, 0, nil)
	p.row(rt, nil, 16000, 17000, 0, tid, 7, sidFree, 0, nil)
	p.row(rt, nil, 18000, 19000, 0, tid, 8, sidMemcpy, 0, nil)
	p.row(rt, nil, 20000, 21000, 0, tid, 9, sidMemsetAsync, 0, nil)
	p.row(rt, nil, 21500, 21600, 0, tid, 10, sidStreamWait, 0, nil)
	p.row(rt, nil, 22000, 23000, 1, tid, 11, sidCtxSync, 0, nil)

	p.row("CUPTI_ACTIVITY_KIND_KERNEL", v.kernelRowid, v.kernelStart, 8000, 0, 1, 7, 1, gpid, sidSgemm, sidSgemm)
	p.row("CUPTI_ACTIVITY_KIND_KERNEL", nil, v.time, 11500, 0, 1, 13, 4, gpid, sidSgemm, sidSgemm)
	p.row("CUPTI_ACTIVITY_KIND_MEMCPY", nil, 8100, 8200, 0, 1, 7, 2, gpid, v.copyBytes, 2, 2, 0)
	p.row("CUPTI_ACTIVITY_KIND_MEMCPY", nil, 18100, 18500, 0, 1, 7, 8, gpid, 1<<20, 1, 0, 2)
	p.row("CUPTI_ACTIVITY_KIND_MEMSET", nil, 20100, 20200, 0, 1, 7, 9, gpid, 64, 1)
	p.row("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", nil, 12500, 12900, 0, 1, 7, 12, gpid)
	p.row("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", nil, 2600, 9000, 0, 1, 7, 3, gpid, 2, -1, -1)
	p.row("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", nil, 10000, 12000, 0, 1, 13, 5, gpid, 1, 77, 501)
	p.row("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", nil, 21500, 21600, 0, 1, 7, 10, gpid, 2, 77, 501)
	p.row("CUPTI_ACTIVITY_KIND_CUDA_EVENT", nil, 0, 1, 13, 4, gpid, 77, 501)

	p.row("CUDA_CALLCHAINS", nil, 5, sidTHPItem, sidLibTorch, 0, 4096, 0)
	p.row("CUDA_CALLCHAINS", nil, 5, sidLocalScalar, sidLibTorch, 1, 8192, v.chainDepth)
	p.row("CUDA_CALLCHAINS", nil, 6, sidTHPItem, nil, nil, nil, 0)

	nv := "NVTX_EVENTS"
	p.row(nv, nil, 0, nil, 75, "Python Backtrace on CUDA", tid, nil, 2, nil, nil)
	p.row(nv, nil, 1990, nil, 34, nil, tid, nil, 2, payloadArg{}, nil)
	p.row(nv, nil, 2590, nil, 34, nil, tid, nil, 2, nil, []byte("\x01\x00\x00\x00\x00\x00\x00\x00"))
	p.row(nv, nil, 500, v.rangeEnd, 59, "step", tid, nil, 0, nil, nil)
	p.row(nv, nil, 1900, v.atenEnd, 59, nil, tid, sidAtenItem, 0, nil, nil)
	p.row(nv, nil, 1950, 2550, 59, nil, tid, sidLocalScalar, 0, nil, nil)
	p.row(nv, nil, 400, 40000, 60, nameArg{}, tid, nil, 0, nil, nil)
	return p.b
}
