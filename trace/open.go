package trace

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/nsyssync/nsyssync/internal/safefile"
)

// Export is an open nsys SQLite export. It is safe for concurrent readers.
//
// Its source (source.go) is the SQLite side: the handles, the schema and
// the row scanners (query.go, tablescan.go). Load (load.go) runs the
// loaders over it, each reading one part of a Trace; Timeline and its
// kin (timeline.go, timeline_seek.go) run the timeline reader.
type Export struct {
	Path   string
	Schema *Schema
	src    *source
}

// Open opens an nsys export read-only, checks that it is an intact SQLite
// file holding a CUDA trace, and detects its schema. A gzipped export
// (report.sqlite.gz) is unpacked into a temporary file first (gzip.go),
// which Close removes. Every problem with the file comes back as an
// *InputError that names the file.
func Open(ctx context.Context, path string) (*Export, error) {
	data := path
	if isGzip(path) {
		tmp, err := gunzipToTemp(ctx, path)
		if err != nil {
			return nil, err
		}
		data = tmp
	}
	x, err := openFile(ctx, path, data)
	if err != nil && data != path {
		os.Remove(data)
	}
	return x, err
}

// openFile opens the SQLite file data, which is the user's file path or,
// for a gzipped export, the file it was unpacked into; errors name path.
func openFile(ctx context.Context, path, data string) (*Export, error) {
	if err := checkHeader(data, path); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(data)
	if err != nil {
		return nil, inputErr(path, err, "cannot resolve path: %v", err)
	}
	// immutable=1: SQLite takes no locks and never creates -wal/-shm/-journal
	// files beside the user's export.
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?mode=ro&immutable=1"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, inputErr(path, err, "cannot open: %v", err)
	}
	db.SetMaxOpenConns(4)
	src := &source{Path: path, data: data, sqlDB: db, uri: dsn}
	if data != path {
		src.unpacked = data
	}
	schema, err := readSchema(ctx, db)
	if err != nil {
		db.Close()
		return nil, src.dbErr(err, "reading the table list")
	}
	src.Schema = schema
	if err := src.validate(); err != nil {
		db.Close()
		return nil, err
	}
	return &Export{Path: path, Schema: schema, src: src}, nil
}

// Close releases the database handles. Scans still running close their
// connections when they end.
func (x *Export) Close() error { return x.src.close() }

// checkHeader reads the 100-byte SQLite header of the file data and
// compares the database size it declares with the file's size, so that a
// truncated copy is reported as such before any query runs. Errors name
// path, the user's file (data is the file a gzipped export was unpacked
// into, or path itself).
func checkHeader(data, path string) error {
	err := checkHeaderOf(data)
	var ie *InputError
	if err != nil && errors.As(err, &ie) {
		ie.Path = path
		if data != path {
			ie.Problem = "unpacked from gzip: " + ie.Problem
		}
	}
	return err
}

func checkHeaderOf(path string) error {
	// Opened without blocking and only as a regular file: a FIFO named
	// like an export would otherwise wait for a writer for ever, and a
	// device (/dev/zero) read without end.
	f, err := safefile.OpenRegular(path)
	if err != nil {
		var nr *safefile.NotRegularError
		if errors.As(err, &nr) {
			return inputErr(path, ErrNotSQLite, "is %s, not an nsys SQLite export", safefile.Kind(nr.Mode))
		}
		return inputErr(path, err, "cannot open: %v", safefile.Problem(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return inputErr(path, err, "cannot stat: %v", err)
	}
	if st.Size() == 0 {
		return inputErr(path, ErrNotSQLite, "empty file (0 bytes), not an nsys SQLite export")
	}
	var hdr [100]byte
	n, err := io.ReadFull(f, hdr[:])
	if !strings.HasPrefix(string(hdr[:n]), "SQLite format 3\x00") {
		if strings.HasPrefix(string(hdr[:min(n, 4)]), "NSYS") || strings.HasSuffix(path, ".nsys-rep") || strings.HasSuffix(path, ".qdrep") {
			return inputErr(path, ErrNotSQLite, "is an nsys report, not its SQLite export: run 'nsys export --type sqlite' first")
		}
		return inputErr(path, ErrNotSQLite, "not an SQLite database (want an 'nsys export --type sqlite' file)")
	}
	if err != nil {
		return inputErr(path, ErrTruncated, "truncated SQLite file: only %d bytes", n)
	}
	pageSize := int64(binary.BigEndian.Uint16(hdr[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return inputErr(path, ErrCorrupt, "corrupt SQLite header (page size %d)", pageSize)
	}
	pages := int64(binary.BigEndian.Uint32(hdr[28:32]))
	changeCounter := binary.BigEndian.Uint32(hdr[24:28])
	validFor := binary.BigEndian.Uint32(hdr[92:96])
	if pages > 0 && changeCounter == validFor {
		if want := pages * pageSize; st.Size() < want {
			return inputErr(path, ErrTruncated, "truncated SQLite file: %d bytes, the header declares %d", st.Size(), want)
		}
	}
	if st.Size()%pageSize != 0 {
		return inputErr(path, ErrTruncated, "truncated SQLite file: %d bytes is not a whole number of %d-byte pages", st.Size(), pageSize)
	}
	return nil
}

// validate checks that the file is an nsys export with a CUDA trace whose
// API table this reader understands.
func (src *source) validate() error {
	s := src.Schema
	if s.Has("StringTable") && s.Has("CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL") && !s.Has("StringIds") {
		return inputErr(src.Path, ErrNotNsys, "an nvprof database, not an nsys export")
	}
	if !s.Has(tableStrings) || !s.looksLikeNsys() {
		if len(s.tables) == 0 {
			return inputErr(src.Path, ErrNotNsys, "not an nsys export: the database has no tables")
		}
		return inputErr(src.Path, ErrNotNsys, "not an nsys export: no StringIds table and no nsys tables")
	}
	if !s.Has(tableRuntime) {
		return inputErr(src.Path, ErrNoCUDATrace, "no CUDA trace: the export has no CUDA API calls (profile with 'nsys profile -t cuda')")
	}
	for _, col := range []string{"start", "end", "globalTid", "correlationId", "nameId"} {
		if !s.HasColumn(tableRuntime, col) {
			return inputErr(src.Path, ErrUnsupported, "unsupported export schema: %s has no column %q (re-export the report with a recent nsys)", tableRuntime, col)
		}
	}
	for _, col := range []string{"id", "value"} {
		if !s.HasColumn(tableStrings, col) {
			return inputErr(src.Path, ErrUnsupported, "unsupported export schema: %s has no column %q", tableStrings, col)
		}
	}
	return nil
}
