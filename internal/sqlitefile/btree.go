package sqlitefile

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
)

// B-tree page types.
const (
	pageTableInterior = 0x05
	pageTableLeaf     = 0x0D
)

// maxDepth bounds a B-tree's depth; SQLite's own limit is 20.
const maxDepth = 40

// maxRunBytes bounds one read of consecutive sibling pages.
const maxRunBytes = 1 << 20

// Part is a contiguous slice of a table's rows: a run of sibling subtrees
// of its B-tree, in rowid order.
type Part struct {
	pages []uint32
	// With bounded set, only rows with lo <= rowid < hi are read.
	bounded bool
	lo, hi  int64
}

// RowidRange is the part of the table rooted at root that holds the rows
// with lo <= rowid < hi. Scanning it reads the pages on the way down and
// those that hold such rows.
func RowidRange(root uint32, lo, hi int64) Part {
	return Part{pages: []uint32{root}, bounded: true, lo: lo, hi: hi}
}

// Parts splits the table whose B-tree is rooted at page root into at most
// n parts of about equal size, in rowid order; scanning them all reads
// every row once. A table of one page is one part.
func (f *File) Parts(root uint32, n int) ([]Part, error) {
	n = max(n, 1)
	// Expand the frontier of subtrees level by level until it holds
	// several subtrees per part, so that parts are of about equal size.
	frontier := []uint32{root}
	buf := make([]byte, f.pageSize)
	for depth := 0; len(frontier) < 8*n; depth++ {
		if depth > maxDepth {
			return nil, corrupt("table b-tree deeper than %d", maxDepth)
		}
		var next []uint32
		expanded := false
		for _, pg := range frontier {
			p, err := f.readPages(buf, pg, 1)
			if err != nil {
				return nil, err
			}
			h := pageHeader(pg)
			switch p[h] {
			case pageTableLeaf:
				next = append(next, pg)
			case pageTableInterior:
				kids, err := children(p, h, f.usable, nil)
				if err != nil {
					return nil, fmt.Errorf("page %d: %w", pg, err)
				}
				next = append(next, kids...)
				expanded = true
			default:
				return nil, corrupt("page %d: type %#x where a table b-tree page was expected", pg, p[h])
			}
			if uint64(len(next)) > uint64(f.pages) {
				return nil, corrupt("table b-tree has more pages than the file")
			}
		}
		frontier = next
		if !expanded {
			break
		}
	}
	n = min(n, len(frontier))
	parts := make([]Part, 0, n)
	for i := range n {
		lo, hi := i*len(frontier)/n, (i+1)*len(frontier)/n
		parts = append(parts, Part{pages: frontier[lo:hi]})
	}
	return parts, nil
}

// Scan reads the rows of a part in rowid order and calls fn with the
// requested columns of each: indexes into the record, Rowid, or Absent
// for a column to leave NULL. A record holds the table's columns in
// declared order less its VIRTUAL generated columns (STORED ones take
// their slot), so an index is not PRAGMA table_info's cid where the
// table has generated columns: count the columns of PRAGMA table_xinfo
// whose hidden is 0 or 3. The slice passed to fn is reused for every row. It returns the rows read. An error from fn
// stops the scan and is returned as it is.
func (f *File) Scan(ctx context.Context, part Part, cols []int, fn func([]Value) error) (int64, error) {
	d, err := newDecoder(cols)
	if err != nil {
		return 0, err
	}
	s := &scanner{f: f, ctx: ctx, dec: d, fn: func() error { return fn(d.vals) }, runBuf: make([][]byte, maxDepth+2), kids: make([][]uint32, maxDepth+2)}
	return s.run(part)
}

// ScanInts is Scan for integer columns, stored into dst (as long as cols)
// before each call of fn: NULL as invalid, a real by its integer part, and
// text that spells an integer as that integer; other text is a
// *ValueError. A column given as Absent is not touched.
func (f *File) ScanInts(ctx context.Context, part Part, cols []int, dst []sql.NullInt64, fn func() error) (int64, error) {
	if len(dst) != len(cols) {
		return 0, fmt.Errorf("sqlitefile: %d targets for %d columns", len(dst), len(cols))
	}
	d, err := newDecoder(cols)
	if err != nil {
		return 0, err
	}
	s := &scanner{f: f, ctx: ctx, dec: d, ints: dst, fn: fn, runBuf: make([][]byte, maxDepth+2), kids: make([][]uint32, maxDepth+2)}
	return s.run(part)
}

func (s *scanner) run(part Part) (int64, error) {
	s.bounded, s.lo, s.hi = part.bounded, part.lo, part.hi
	if s.bounded && s.lo >= s.hi {
		return 0, nil
	}
	err := s.visitPages(part.pages, 0)
	var fe fnError
	if errors.As(err, &fe) {
		err = fe.err
	}
	return s.rows, err
}

type scanner struct {
	f      *File
	ctx    context.Context
	dec    *decoder
	ints   []sql.NullInt64 // ScanInts' targets
	fn     func() error
	rows   int64
	visits uint64
	runBuf [][]byte   // per depth: consecutive pages read at once
	kids   [][]uint32 // per depth: the children of an interior page
	ovfl   []byte     // a payload reassembled from its overflow chain
	page   []byte     // one overflow page
	// bounded: read only rows with lo <= rowid < hi.
	bounded bool
	lo, hi  int64
	keys    []int64 // an interior page's keys, for within
}

// fnError marks an error returned by the row callback, so that it is not
// wrapped as a damaged page.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// visitPages reads sibling pages, several consecutive ones at a time, and
// visits each.
func (s *scanner) visitPages(pages []uint32, depth int) error {
	if depth > maxDepth {
		return corrupt("table b-tree deeper than %d", maxDepth)
	}
	ps := s.f.pageSize
	maxRun := max(1, maxRunBytes/ps)
	for i := 0; i < len(pages); {
		j := i + 1
		for j < len(pages) && j-i < maxRun && pages[j] == pages[j-1]+1 {
			j++
		}
		if need := (j - i) * ps; cap(s.runBuf[depth]) < need {
			s.runBuf[depth] = make([]byte, need)
		}
		buf, err := s.f.readPages(s.runBuf[depth], pages[i], j-i)
		if err != nil {
			return err
		}
		for k := i; k < j; k++ {
			if err := s.visit(pages[k], buf[(k-i)*ps:(k-i+1)*ps], depth); err != nil {
				var fe fnError
				if errors.As(err, &fe) {
					return err
				}
				return fmt.Errorf("page %d: %w", pages[k], err)
			}
		}
		i = j
	}
	return nil
}

// visit reads the rows of a leaf, or the subtrees of an interior page.
func (s *scanner) visit(pg uint32, p []byte, depth int) error {
	s.visits++
	if s.visits > uint64(s.f.pages) {
		return corrupt("table b-tree visits more pages than the file has (a cycle)")
	}
	if s.visits%64 == 0 {
		if err := s.ctx.Err(); err != nil {
			return fnError{err}
		}
	}
	h := pageHeader(pg)
	switch p[h] {
	case pageTableLeaf:
		return s.leaf(p, h)
	case pageTableInterior:
		kids, err := children(p, h, s.f.usable, s.kids[depth][:0])
		s.kids[depth] = kids
		if err != nil {
			return err
		}
		if s.bounded {
			if kids, err = s.within(p, h, kids); err != nil {
				return err
			}
		}
		return s.visitPages(kids, depth+1)
	}
	return corrupt("type %#x where a table b-tree page was expected", p[h])
}

// leaf decodes the cells of a table leaf page.
func (s *scanner) leaf(p []byte, h int) error {
	u := s.f.usable
	ncell := int(binary.BigEndian.Uint16(p[h+3:]))
	ptrs := h + 8
	if ptrs+2*ncell > u {
		return corrupt("%d cells do not fit the page", ncell)
	}
	for i := range ncell {
		off := int(binary.BigEndian.Uint16(p[ptrs+2*i:]))
		if off < ptrs+2*ncell || off >= u {
			return corrupt("cell %d at offset %d", i, off)
		}
		cell := p[off:u]
		size, n := varint(cell)
		if n == 0 {
			return corrupt("cell %d cut short", i)
		}
		rowid, m := varint(cell[n:])
		if m == 0 {
			return corrupt("cell %d cut short", i)
		}
		if s.bounded && (int64(rowid) < s.lo || int64(rowid) >= s.hi) {
			continue
		}
		cell = cell[n+m:]
		rec, err := s.payload(cell, size)
		if err != nil {
			return fmt.Errorf("cell %d: %w", i, err)
		}
		if s.ints != nil {
			err = s.dec.decodeInts(int64(rowid), rec, s.ints)
		} else {
			err = s.dec.decode(int64(rowid), rec)
		}
		if err != nil {
			return fmt.Errorf("cell %d: %w", i, err)
		}
		s.rows++
		if err := s.fn(); err != nil {
			return fnError{err}
		}
	}
	return nil
}

// payload returns a cell's record: in place when it fits the page, else
// reassembled from its overflow chain.
func (s *scanner) payload(cell []byte, size uint64) ([]byte, error) {
	u := uint64(s.f.usable)
	maxLocal := u - 35
	if size <= maxLocal {
		if size > uint64(len(cell)) {
			return nil, corrupt("payload of %d bytes overruns the page", size)
		}
		return cell[:size], nil
	}
	if size > uint64(s.f.pages)*u {
		return nil, corrupt("payload of %d bytes is larger than the file", size)
	}
	minLocal := (u-12)*32/255 - 23
	local := minLocal + (size-minLocal)%(u-4)
	if local > maxLocal {
		local = minLocal
	}
	if local+4 > uint64(len(cell)) {
		return nil, corrupt("payload of %d bytes overruns the page", size)
	}
	s.ovfl = append(s.ovfl[:0], cell[:local]...)
	next := binary.BigEndian.Uint32(cell[local:])
	if s.page == nil {
		s.page = make([]byte, s.f.pageSize)
	}
	for uint64(len(s.ovfl)) < size {
		if next == 0 {
			return nil, corrupt("overflow chain ends before the payload's %d bytes", size)
		}
		// Overflow pages count as visits: in a sound file each belongs to
		// one cell, so a scan reads at most as many pages as the file has.
		if s.visits++; s.visits > uint64(s.f.pages) {
			return nil, corrupt("overflow chains share pages (a cycle)")
		}
		p, err := s.f.readPages(s.page, next, 1)
		if err != nil {
			return nil, err
		}
		take := min(size-uint64(len(s.ovfl)), u-4)
		s.ovfl = append(s.ovfl, p[4:4+take]...)
		next = binary.BigEndian.Uint32(p)
	}
	return s.ovfl, nil
}

// children lists an interior page's child pages in key order, the
// right-most last, appended to out.
func children(p []byte, h, usable int, out []uint32) ([]uint32, error) {
	ncell := int(binary.BigEndian.Uint16(p[h+3:]))
	ptrs := h + 12
	if ptrs+2*ncell > usable {
		return out, corrupt("%d cells do not fit the page", ncell)
	}
	for i := range ncell {
		off := int(binary.BigEndian.Uint16(p[ptrs+2*i:]))
		if off < ptrs+2*ncell || off+4 > usable {
			return out, corrupt("cell %d at offset %d", i, off)
		}
		out = append(out, binary.BigEndian.Uint32(p[off:]))
	}
	return append(out, binary.BigEndian.Uint32(p[h+8:])), nil
}

// within narrows an interior page's children (kids, as children lists
// them: one per cell, then the right-most) to those that can hold a rowid
// in [lo, hi). Child k holds the rowids above cell k-1's key up to cell
// k's key; the right-most those above the last key.
func (s *scanner) within(p []byte, h int, kids []uint32) ([]uint32, error) {
	m := len(kids) - 1
	keys := s.keys[:0]
	for i := range m {
		off := int(binary.BigEndian.Uint16(p[h+12+2*i:])) // checked by children
		key, n := varint(p[off+4 : s.f.usable])
		if n == 0 {
			return nil, corrupt("cell %d cut short", i)
		}
		keys = append(keys, int64(key))
	}
	s.keys = keys
	from := m
	for k := range m {
		if keys[k] >= s.lo {
			from = k
			break
		}
	}
	to := 0
	for k := m; k >= 1; k-- {
		if keys[k-1] < s.hi-1 {
			to = k
			break
		}
	}
	if to < from {
		return kids[:0], nil
	}
	return kids[from : to+1], nil
}

// pageHeader is the offset of a page's B-tree header: page 1 begins with
// the 100-byte file header.
func pageHeader(pg uint32) int {
	if pg == 1 {
		return 100
	}
	return 0
}

func errBadColumn(c int) error { return fmt.Errorf("sqlitefile: column %d", c) }

func errDuplicate(c int) error { return fmt.Errorf("sqlitefile: column %d requested twice", c) }
