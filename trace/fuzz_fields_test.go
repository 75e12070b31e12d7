package trace_test

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzExportFields builds a small nsys-shaped export from fuzzed rows and
// analyses it. The rows come from a little program (see fieldDecoder) whose
// values may be NULL, of the wrong type (text, real, blob where an integer
// is expected), huge or negative; callchain ids may dangle or repeat, NVTX
// ranges may never end or end before they start, rowids may sit at the
// ends of the int64 range, and Python backtrace payloads may be any text.
// The property is the one of FuzzOpenBytes: no panic, no hang, bounded
// memory, a report or one error line naming the file.
func FuzzExportFields(f *testing.F) {
	for _, s := range fieldSeeds() {
		f.Add(s.prog, s.payload, s.name)
	}
	f.Fuzz(func(t *testing.T, prog []byte, payload, name string) {
		path := filepath.Join(t.TempDir(), "fields.sqlite")
		nvtx := buildFieldExport(t, path, prog, payload, name)
		analysePipeline(t, path, nvtx)
	})
}

// fieldTable is a table FuzzExportFields may create: the columns nsyssync
// reads, with the types nsys 2025 declares.
type fieldTable struct {
	name string
	cols []string // "name TYPE"
	// key is a primary key clause, "" for none.
	key string
	// noRowid: the table's rowid is its INTEGER PRIMARY KEY column.
	noRowid bool
}

var fieldTables = []fieldTable{
	{name: "CUPTI_ACTIVITY_KIND_RUNTIME", cols: []string{"start INTEGER", "end INTEGER", "eventClass INTEGER", "globalTid INTEGER",
		"correlationId INTEGER", "nameId INTEGER", "returnValue INTEGER", "callchainId INTEGER"}},
	{name: "CUPTI_ACTIVITY_KIND_KERNEL", cols: []string{"start INTEGER", "end INTEGER", "deviceId INTEGER", "contextId INTEGER",
		"streamId INTEGER", "correlationId INTEGER", "globalPid INTEGER", "demangledName INTEGER", "shortName INTEGER"}},
	{name: "CUPTI_ACTIVITY_KIND_MEMCPY", cols: []string{"start INTEGER", "end INTEGER", "deviceId INTEGER", "contextId INTEGER",
		"streamId INTEGER", "correlationId INTEGER", "globalPid INTEGER", "bytes INTEGER", "copyKind INTEGER", "srcKind INTEGER", "dstKind INTEGER"}},
	{name: "CUPTI_ACTIVITY_KIND_MEMSET", cols: []string{"start INTEGER", "end INTEGER", "deviceId INTEGER", "contextId INTEGER",
		"streamId INTEGER", "correlationId INTEGER", "globalPid INTEGER", "bytes INTEGER", "memKind INTEGER"}},
	{name: "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", cols: []string{"start INTEGER", "end INTEGER", "deviceId INTEGER", "contextId INTEGER",
		"streamId INTEGER", "correlationId INTEGER", "globalPid INTEGER"}},
	{name: "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", cols: []string{"start INTEGER", "end INTEGER", "deviceId INTEGER", "contextId INTEGER",
		"streamId INTEGER", "correlationId INTEGER", "globalPid INTEGER", "syncType INTEGER", "eventId INTEGER", "eventSyncId INTEGER"}},
	{name: "CUPTI_ACTIVITY_KIND_CUDA_EVENT", cols: []string{"deviceId INTEGER", "contextId INTEGER", "streamId INTEGER",
		"correlationId INTEGER", "globalPid INTEGER", "eventId INTEGER", "eventSyncId INTEGER"}},
	{name: "CUDA_CALLCHAINS", cols: []string{"id INTEGER", "symbol INTEGER", "module INTEGER", "unresolved INTEGER",
		"originalIP INTEGER", "stackDepth INTEGER"}, key: "PRIMARY KEY (id, stackDepth)"},
	{name: "NVTX_EVENTS", cols: []string{"start INTEGER", "end INTEGER", "eventType INTEGER", "text TEXT", "globalTid INTEGER",
		"textId INTEGER", "domainId INTEGER", "jsonText TEXT", "binaryData TEXT"}},
	{name: "TARGET_INFO_GPU", cols: []string{"id INTEGER", "name TEXT", "busLocation TEXT", "smCount INTEGER", "cuDevice INTEGER",
		"computeMajor INTEGER", "computeMinor INTEGER"}},
	{name: "TARGET_INFO_CUDA_STREAM", cols: []string{"streamId INTEGER", "processId INTEGER", "contextId INTEGER", "flag INTEGER"}},
	{name: "TARGET_INFO_CUDA_CONTEXT_INFO", cols: []string{"nullStreamId INTEGER", "processId INTEGER", "deviceId INTEGER", "contextId INTEGER"}},
	{name: "ThreadNames", cols: []string{"nameId INTEGER", "priority INTEGER", "globalTid INTEGER"}},
	{name: "PROCESSES", cols: []string{"globalPid INTEGER", "pid INTEGER", "name TEXT"}},
	{name: "META_DATA_EXPORT", cols: []string{"name TEXT", "value TEXT"}},
	{name: "StringIds", cols: []string{"id INTEGER PRIMARY KEY", "value TEXT"}, noRowid: true},
}

// fieldTableIndex finds a table of fieldTables by name.
func fieldTableIndex(name string) int {
	for i, t := range fieldTables {
		if t.name == name {
			return i
		}
	}
	panic("no field table " + name)
}

// fieldStrings are the strings every fuzzed export holds in StringIds, ids
// 1 and up: the APIs the inventory reads and names its evidence knows.
var fieldStrings = []string{
	"cudaStreamSynchronize_v3020", "cudaMemcpyAsync_v3020", "cudaEventSynchronize_v3020", "cudaDeviceSynchronize_v3020",
	"cudaFree_v3020", "cudaMemsetAsync_v3020", "cuCtxSynchronize", "cudaStreamWaitEvent_v3020", "cudaLaunchKernel_v7000",
	"cudaMemcpy_v3020", "cudaEventRecord_v3020", "cuStreamSynchronize", "aten::item", "aten::_local_scalar_dense",
	"/home/u/train.py", "step", "torch::autograd::THPVariable_item", "libtorch_python.so", "sgemm_kernel", "python3",
	"cuMemcpyDtoH_v2", "cudaMemcpyAsync_ptsz", "aten::nonzero", "&lt;module&gt;",
}

// fieldKnown are texts a value may take by index: names the reader looks
// for, versions, and integers written as text.
var fieldKnown = []string{
	"Python Backtrace on CUDA", "step", "aten::item", "EXPORT_SCHEMA_VERSION", "EXPORT_PRODUCT_VERSION", "3.20.3", "3.8.0",
	"2025.3.2.0", "NVIDIA H100 80GB HBM3", "0000:01:00.0", "42", "-1", "9223372036854775807", "99999999999999999999",
	"1e3", "0x10", " 7", "", "step@Python Backtrace on CUDA", "python3",
}

// fieldInts are integers a value may take by index: the enums the reader
// branches on and the edges of the ranges it computes with.
var fieldInts = []int64{
	0, 1, -1, 2, 3, 4, 8, 34, 59, 60, 67, 70, 71, 75, 0xFFFFFFFF, 1 << 24, 1 << 32, 1 << 48, 1 << 62,
	math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, -1 << 32, 1e9, 1e12, 1e18,
	0x100040f00040f, 0x100040f000000, 1039, 2_000_000_000,
}

// fieldDecoder reads a fuzzed program: a flags byte, then rows, each a
// table selector byte and a value per column (the rowid first). A value
// is a tag byte and its operands:
//
//	0 NULL            5 fieldKnown[next byte]
//	1 int8            6 REAL: int8*1.5, or ±Inf, ±1e300, 1e19
//	2 fieldInts[next] 7 BLOB of the next byte's length
//	3 int64, 8 bytes  8 the payload argument
//	4 TEXT of the next byte's length, 9 the name argument
type fieldDecoder struct {
	data          []byte
	payload, name string
}

func (d *fieldDecoder) next() (byte, bool) {
	if len(d.data) == 0 {
		return 0, false
	}
	b := d.data[0]
	d.data = d.data[1:]
	return b, true
}

func (d *fieldDecoder) bytes(n int) ([]byte, bool) {
	if len(d.data) < n {
		return nil, false
	}
	b := d.data[:n]
	d.data = d.data[n:]
	return b, true
}

// value decodes one value; false when the program ran out.
func (d *fieldDecoder) value() (any, bool) {
	tag, ok := d.next()
	if !ok {
		return nil, false
	}
	if tag%10 == 0 {
		return nil, true
	}
	if tag%10 == 8 {
		return d.payload, true
	}
	if tag%10 == 9 {
		return d.name, true
	}
	if tag%10 == 3 {
		b, ok := d.bytes(8)
		if !ok {
			return nil, false
		}
		return int64(binary.BigEndian.Uint64(b)), true
	}
	op, ok := d.next()
	if !ok {
		return nil, false
	}
	switch tag % 10 {
	case 1:
		return int64(int8(op)), true
	case 2:
		return fieldInts[int(op)%len(fieldInts)], true
	case 4:
		b, ok := d.bytes(int(op))
		return string(b), ok
	case 5:
		return fieldKnown[int(op)%len(fieldKnown)], true
	case 6:
		switch op {
		case 251:
			return math.Inf(1), true
		case 252:
			return math.Inf(-1), true
		case 253:
			return 1e300, true
		case 254:
			return -1e300, true
		case 255:
			return 1e19, true
		}
		return float64(int8(op)) * 1.5, true
	}
	b, ok := d.bytes(int(op))
	return append([]byte{}, b...), ok
}

// Flags of a program's first byte.
const (
	flagUntyped   = 1 << iota // columns without declared types: no affinity
	flagAllTables             // create every table, empty or not
	flagNVTXStep              // analyse the NVTX range "step"
	flagNVTXName              // analyse the NVTX range named by the name argument
)

// buildFieldExport writes the export a program describes and returns the
// --nvtx value to analyse it with.
func buildFieldExport(t *testing.T, path string, prog []byte, payload, name string) string {
	t.Helper()
	d := &fieldDecoder{data: prog, payload: payload, name: name}
	flags, _ := d.next()
	rows := make([][][]any, len(fieldTables))
	for {
		sel, ok := d.next()
		if !ok {
			break
		}
		ti := int(sel) % len(fieldTables)
		n := len(fieldTables[ti].cols) + 1
		if fieldTables[ti].noRowid {
			n--
		}
		row := make([]any, 0, n)
		for len(row) < n {
			v, ok := d.value()
			if !ok {
				break
			}
			row = append(row, v)
		}
		if len(row) < n {
			break
		}
		rows[ti] = append(rows[ti], row)
	}
	strs := fieldTableIndex("StringIds")
	for i, s := range fieldStrings {
		rows[strs] = append(rows[strs], []any{int64(i + 1), s})
	}
	rows[strs] = append(rows[strs], []any{int64(100), name})

	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i, ft := range fieldTables {
		if len(rows[i]) == 0 && flags&flagAllTables == 0 {
			continue
		}
		if _, err := tx.Exec(fieldDDL(ft, flags&flagUntyped != 0)); err != nil {
			t.Fatal(err)
		}
		ins := fieldInsert(ft)
		for _, r := range rows[i] {
			tx.Exec(ins, r...) // a row SQLite refuses (a duplicate key) is left out
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	switch {
	case flags&flagNVTXName != 0:
		return name
	case flags&flagNVTXStep != 0:
		return "step"
	}
	return ""
}

// fieldDDL is the CREATE TABLE statement of a table, its column types
// left out when untyped.
func fieldDDL(ft fieldTable, untyped bool) string {
	cols := make([]string, len(ft.cols))
	for i, c := range ft.cols {
		if untyped && !strings.Contains(c, "PRIMARY KEY") {
			c, _, _ = strings.Cut(c, " ")
		}
		cols[i] = `"` + strings.Replace(c, " ", `" `, 1)
		if !strings.Contains(c, " ") {
			cols[i] += `"`
		}
	}
	if ft.key != "" {
		cols = append(cols, ft.key)
	}
	return fmt.Sprintf(`CREATE TABLE %s (%s)`, ft.name, strings.Join(cols, ", "))
}

// fieldInsert is the INSERT statement of a table, the rowid first.
func fieldInsert(ft fieldTable) string {
	var names, marks []string
	if !ft.noRowid {
		names, marks = append(names, "rowid"), append(marks, "?")
	}
	for _, c := range ft.cols {
		n, _, _ := strings.Cut(c, " ")
		names, marks = append(names, `"`+n+`"`), append(marks, "?")
	}
	return fmt.Sprintf(`INSERT INTO %s (%s) VALUES (%s)`, ft.name, strings.Join(names, ", "), strings.Join(marks, ", "))
}
