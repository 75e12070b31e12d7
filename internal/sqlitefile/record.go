package sqlitefile

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Type is the storage class of a value.
type Type uint8

// Storage classes.
const (
	Null Type = iota
	Integer
	Float
	Text
	Blob
)

// Value is one column of a row. Bytes is borrowed: it is valid only until
// the row's callback returns.
type Value struct {
	Type  Type
	Int   int64   // Integer
	Float float64 // Float
	Bytes []byte  // Text and Blob
}

// Rowid selects the row's rowid as a column.
const Rowid = -1

// Absent marks a requested column that is not read: a Value stays NULL,
// an integer target keeps what the caller put there.
const Absent = -2

// maxColumns is SQLite's largest possible column count.
const maxColumns = 32767

// decoder turns records into the requested columns.
type decoder struct {
	// out[c] is the position in vals of record column c, or -1.
	out     []int
	rowidAt int // position of the rowid in vals, or -1
	vals    []Value
}

func newDecoder(cols []int) (*decoder, error) {
	d := &decoder{rowidAt: -1, vals: make([]Value, len(cols))}
	maxCol := -1
	for _, c := range cols {
		if c < Absent || c > maxColumns {
			return nil, errBadColumn(c)
		}
		maxCol = max(maxCol, c)
	}
	d.out = make([]int, maxCol+1)
	for i := range d.out {
		d.out[i] = -1
	}
	for i, c := range cols {
		if c == Absent {
			continue
		}
		if c == Rowid {
			if d.rowidAt >= 0 {
				return nil, errDuplicate(c)
			}
			d.rowidAt = i
			continue
		}
		if d.out[c] >= 0 {
			return nil, errDuplicate(c)
		}
		d.out[c] = i
	}
	return d, nil
}

// decode fills vals from a record; columns past the record's end are NULL,
// as SQLite reads a row written before a column was added. Only the fields
// that a value's Type names are set: Bytes may keep a stale slice under an
// Integer.
func (d *decoder) decode(rowid int64, rec []byte) error {
	if d.rowidAt >= 0 {
		v := &d.vals[d.rowidAt]
		v.Type, v.Int = Integer, rowid
	}
	hsize, n := varint(rec)
	if n == 0 || hsize < uint64(n) || hsize > uint64(len(rec)) {
		return corrupt("record header of %d bytes in a record of %d", hsize, len(rec))
	}
	hdr := rec[:hsize]
	pos := n
	body := hsize
	col := 0
	for ; col < len(d.out) && pos < len(hdr); col++ {
		var st uint64
		if c := hdr[pos]; c < 0x80 {
			st = uint64(c)
			pos++
		} else {
			var k int
			if st, k = varint(hdr[pos:]); k == 0 {
				return corrupt("record header cut short")
			}
			pos += k
		}
		var size uint64
		if st < 12 {
			size = uint64(smallSizes[st])
			if st == 10 || st == 11 {
				return corrupt("serial type %d", st)
			}
		} else {
			size = (st - 12) / 2
		}
		end := body + size
		if end > uint64(len(rec)) || end < body {
			return corrupt("record column %d ends at byte %d of %d", col, end, len(rec))
		}
		if at := d.out[col]; at >= 0 {
			setValue(&d.vals[at], st, rec[body:end])
		}
		body = end
	}
	for ; col < len(d.out); col++ {
		if at := d.out[col]; at >= 0 {
			d.vals[at].Type = Null
		}
	}
	return nil
}

// ValueError reports a column that holds something other than a number
// where ScanInts expects an integer.
type ValueError struct {
	Column int
	Text   string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("column %d: %q where an integer was expected", e.Column, e.Text)
}

// decodeInts is decode for integer targets: NULL as invalid, a real by its
// integer part, text when it spells an integer, as database/sql converts.
// It repeats decode's header walk rather than share it: the walk as a
// function is not inlined, and the call a column cost the 1 GiB
// kernel-heavy inventory about 20% more CPU (3.2–3.8 → 3.9–4.5 s, four
// alternating runs each).
func (d *decoder) decodeInts(rowid int64, rec []byte, dst []sql.NullInt64) error {
	if d.rowidAt >= 0 {
		dst[d.rowidAt] = sql.NullInt64{Int64: rowid, Valid: true}
	}
	hsize, n := varint(rec)
	if n == 0 || hsize < uint64(n) || hsize > uint64(len(rec)) {
		return corrupt("record header of %d bytes in a record of %d", hsize, len(rec))
	}
	hdr := rec[:hsize]
	pos := n
	body := hsize
	col := 0
	for ; col < len(d.out) && pos < len(hdr); col++ {
		var st uint64
		if c := hdr[pos]; c < 0x80 {
			st = uint64(c)
			pos++
		} else {
			var k int
			if st, k = varint(hdr[pos:]); k == 0 {
				return corrupt("record header cut short")
			}
			pos += k
		}
		var size uint64
		if st < 12 {
			size = uint64(smallSizes[st])
			if st == 10 || st == 11 {
				return corrupt("serial type %d", st)
			}
		} else {
			size = (st - 12) / 2
		}
		end := body + size
		if end > uint64(len(rec)) || end < body {
			return corrupt("record column %d ends at byte %d of %d", col, end, len(rec))
		}
		if at := d.out[col]; at >= 0 {
			b := rec[body:end]
			var x int64
			switch st {
			case 0:
				dst[at] = sql.NullInt64{}
				body = end
				continue
			case 1:
				x = int64(int8(b[0]))
			case 2:
				x = int64(int16(binary.BigEndian.Uint16(b)))
			case 3:
				x = int64(int32(uint32(b[0])<<24|uint32(b[1])<<16|uint32(b[2])<<8) >> 8)
			case 4:
				x = int64(int32(binary.BigEndian.Uint32(b)))
			case 5:
				x = int64(uint64(b[0])<<56|uint64(b[1])<<48|uint64(binary.BigEndian.Uint32(b[2:]))<<16) >> 16
			case 6:
				x = int64(binary.BigEndian.Uint64(b))
			case 7:
				x = int64(math.Float64frombits(binary.BigEndian.Uint64(b)))
			case 8:
				x = 0
			case 9:
				x = 1
			default:
				var err error
				if x, err = parseInt(col, b); err != nil {
					return err
				}
			}
			dst[at] = sql.NullInt64{Int64: x, Valid: true}
		}
		body = end
	}
	for ; col < len(d.out); col++ {
		if at := d.out[col]; at >= 0 {
			dst[at] = sql.NullInt64{}
		}
	}
	return nil
}

// parseInt reads text (or a blob) that spells an integer.
func parseInt(col int, b []byte) (int64, error) {
	text := string(b)
	x, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err != nil {
		return 0, &ValueError{Column: col, Text: text}
	}
	return x, nil
}

// smallSizes are the body sizes of serial types 0 to 11 (10 and 11 are
// reserved).
var smallSizes = [12]uint8{0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0}

// setValue decodes a body of the given serial type (its size checked).
func setValue(v *Value, st uint64, b []byte) {
	switch st {
	case 0:
		v.Type = Null
	case 1:
		v.Type, v.Int = Integer, int64(int8(b[0]))
	case 2:
		v.Type, v.Int = Integer, int64(int16(binary.BigEndian.Uint16(b)))
	case 3:
		v.Type, v.Int = Integer, int64(int32(uint32(b[0])<<24|uint32(b[1])<<16|uint32(b[2])<<8)>>8)
	case 4:
		v.Type, v.Int = Integer, int64(int32(binary.BigEndian.Uint32(b)))
	case 5:
		u := uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(binary.BigEndian.Uint32(b[2:]))<<16
		v.Type, v.Int = Integer, int64(u)>>16
	case 6:
		v.Type, v.Int = Integer, int64(binary.BigEndian.Uint64(b))
	case 7:
		v.Type, v.Float = Float, math.Float64frombits(binary.BigEndian.Uint64(b))
	case 8:
		v.Type, v.Int = Integer, 0
	case 9:
		v.Type, v.Int = Integer, 1
	default:
		v.Type, v.Bytes = Text, b
		if st%2 == 0 {
			v.Type = Blob
		}
	}
}
