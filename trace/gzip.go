package trace

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nsyssync/nsyssync/internal/safefile"
)

// Gzipped exports: nightly traces are often archived as report.sqlite.gz.
// Open reads one by decompressing it into a private temporary file (under
// $TMPDIR, mode 0600), which the Export reads and Close removes; the
// user's file is only read. SQLite cannot read a compressed file in place,
// and the row scanners read the file's pages directly (tablescan.go), so
// the whole export is unpacked first: it takes the export's unpacked size
// on the temporary directory's disk.

// gzipMagic is the first two bytes of every gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// IsGzipped says whether the regular file at path starts with gzip's
// magic bytes (a gzipped export, which Open reads as it is). Any problem
// opening or reading it answers false: Open reports it, in its own words.
func IsGzipped(path string) bool { return isGzip(path) }

// isGzip says whether the regular file at path starts with gzip's magic
// bytes. Any problem opening or reading it answers false: checkHeader
// reports it, in its own words.
func isGzip(path string) bool {
	f, err := safefile.OpenRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [2]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return false
	}
	return head[0] == gzipMagic[0] && head[1] == gzipMagic[1]
}

// unpackChunk is how much is decompressed between two looks at the
// context.
const unpackChunk = 4 << 20

// gunzipToTemp decompresses the gzip file at path into a new temporary
// file and returns that file's path. On any failure no temporary file is
// left behind; the error names the user's file.
func gunzipToTemp(ctx context.Context, path string) (string, error) {
	in, err := safefile.OpenRegular(path)
	if err != nil {
		return "", inputErr(path, err, "cannot open: %v", safefile.Problem(err))
	}
	defer in.Close()
	zr, err := gzip.NewReader(bufio.NewReaderSize(in, 1<<20))
	if err != nil {
		return "", gzipErr(path, err)
	}
	defer zr.Close()
	base := strings.TrimSuffix(filepath.Base(path), ".gz")
	out, err := os.CreateTemp("", "nsyssync-*-"+base)
	if err != nil {
		return "", fmt.Errorf("%s: unpacking the gzipped export: %w", path, err)
	}
	tmp := out.Name()
	fail := func(err error) (string, error) {
		out.Close()
		os.Remove(tmp)
		return "", err
	}
	for {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		n, err := io.CopyN(out, zr, unpackChunk)
		if errors.Is(err, io.EOF) {
			if n == 0 && isEmptyStream(out) {
				return fail(inputErr(path, ErrNotSQLite, "a gzip file that unpacks to nothing, not an nsys SQLite export"))
			}
			break
		}
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return fail(fmt.Errorf("%s: unpacking the gzipped export into %s: %w", path, filepath.Dir(tmp), err))
			}
			return fail(gzipErr(path, err))
		}
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("%s: unpacking the gzipped export into %s: %w", path, filepath.Dir(tmp), err)
	}
	return tmp, nil
}

// isEmptyStream says whether nothing was written to f.
func isEmptyStream(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Size() == 0
}

// gzipErr turns a decompression error into the problem it shows.
func gzipErr(path string, err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return inputErr(path, ErrTruncated, "truncated gzip file: it ends before its compressed stream does")
	case errors.Is(err, gzip.ErrChecksum):
		return inputErr(path, ErrCorrupt, "corrupt gzip file: its checksum does not match its contents")
	default:
		return inputErr(path, ErrCorrupt, "corrupt gzip file: %v", err)
	}
}
