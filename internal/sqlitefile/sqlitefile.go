// Package sqlitefile reads the rows of SQLite tables straight from the
// pages of the database file, for fast full scans of a few columns.
//
// An nsys export's activity tables hold tens of millions of rows, and
// SQLite's virtual machine, as modernc.org/sqlite compiles it to Go, spends
// about a microsecond on each row of a five-column SELECT. Reading the
// table B-tree directly ("Database File Format", sqlite.org/fileformat2.html)
// decodes the same columns in a tenth of that. The package reads only what
// a full scan needs: table B-tree pages (interior and leaf), records and
// overflow chains. It never writes, takes no lock, and ignores any
// write-ahead log, as SQLite does with immutable=1. Indexes, WITHOUT ROWID
// tables and the SQL layer are out of scope: callers find a table's root
// page and column order through SQL and fall back to SQL when Open or
// Parts fails.
//
// Every length, offset and page number read from the file is checked: a
// damaged file gives an error wrapping ErrCorrupt, never a panic, and a
// B-tree whose pages point in a cycle is cut off after as many page visits
// as the file has pages.
package sqlitefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrCorrupt is wrapped by every error that comes from the file's content.
var ErrCorrupt = errors.New("database disk image is malformed")

// File is an SQLite database file opened for reading. Its methods may be
// called from several goroutines at once.
type File struct {
	r        io.ReaderAt
	closer   io.Closer
	pageSize int
	usable   int    // page size less the reserved bytes at each page's end
	pages    uint32 // pages in the file
}

const headerMagic = "SQLite format 3\x00"

// Open opens a database file read-only and checks its header.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	f, err := newFile(fh, st.Size())
	if err != nil {
		fh.Close()
		return nil, err
	}
	f.closer = fh
	return f, nil
}

// newFile reads the header of a database of size bytes.
func newFile(r io.ReaderAt, size int64) (*File, error) {
	var h [100]byte
	if size < int64(len(h)) {
		return nil, corrupt("file of %d bytes is shorter than the header", size)
	}
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return nil, fmt.Errorf("reading the header: %w", err)
	}
	if !bytes.Equal(h[:16], []byte(headerMagic)) {
		return nil, corrupt("no SQLite header")
	}
	ps := int(binary.BigEndian.Uint16(h[16:]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps&(ps-1) != 0 {
		return nil, corrupt("page size %d", ps)
	}
	usable := ps - int(h[20])
	if usable < 480 {
		return nil, corrupt("usable page size %d", usable)
	}
	n := size / int64(ps)
	if n > 0xFFFFFFFE {
		n = 0xFFFFFFFE
	}
	return &File{r: r, pageSize: ps, usable: usable, pages: uint32(n)}, nil
}

// Close closes the file.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	err := f.closer.Close()
	f.closer = nil
	return err
}

// PageSize returns the database's page size in bytes.
func (f *File) PageSize() int { return f.pageSize }

// Pages returns the number of pages in the file.
func (f *File) Pages() uint32 { return f.pages }

// readPages reads count consecutive pages from page n (1-based) into buf.
func (f *File) readPages(buf []byte, n uint32, count int) ([]byte, error) {
	if n < 1 || n > f.pages || uint64(n)+uint64(count)-1 > uint64(f.pages) {
		return nil, corrupt("page %d out of range (the file has %d)", n, f.pages)
	}
	b := buf[:count*f.pageSize]
	if _, err := f.r.ReadAt(b, int64(n-1)*int64(f.pageSize)); err != nil {
		return nil, fmt.Errorf("reading page %d: %w", n, err)
	}
	return b, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// varint decodes an SQLite variable-length integer: big-endian groups of
// seven bits with the high bit set on all but the last byte, the ninth byte
// contributing all eight. It returns the bytes used, 0 when b ends first.
func varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 8; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		v = v<<7 | uint64(c&0x7f)
		if c < 0x80 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}
