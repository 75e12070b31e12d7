package triage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/nsyssync/nsyssync/internal/safefile"
	"github.com/nsyssync/nsyssync/trace"
)

// sqliteMagic starts every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// IsSQLite reports whether the file at path is an SQLite database (an
// export or a findings database) rather than JSON.
func IsSQLite(path string) (bool, error) {
	f, err := safefile.OpenRegular(path) // a FIFO or a device would block or never end
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, fileProblem(err))
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return bytes.Equal(head[:n], sqliteMagic), nil
}

// LoadSnapshot reads one side of a comparison from path: an export
// (.sqlite, .sqlite.gz or .nsys-rep) or a directory of them, analysed with opt, or a
// JSON report (`analyze --format json`, one document or several) or
// JSON Lines file (`batch --format jsonl`). A single export that cannot
// be analysed is an error; in a directory or a JSON Lines file, failed
// traces are counted in Snapshot.Failed and the rest compared.
func LoadSnapshot(ctx context.Context, path string, opt Options) (*Snapshot, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, fileProblem(err))
	}
	snap := NewSnapshot(path)
	if st.IsDir() || IsReport(path) {
		return snap, analyseInto(ctx, snap, Expand([]string{path}), opt, st.IsDir())
	}
	isDB, err := IsSQLite(path)
	if err != nil {
		return nil, err
	}
	if isDB || trace.IsGzipped(path) { // an export, or one gzipped (trace reads both)
		return snap, analyseInto(ctx, snap, []Input{{Path: path}}, opt, false)
	}
	f, err := safefile.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, fileProblem(err))
	}
	defer f.Close()
	err = ReadLines(f, path, func(l Line) error {
		snap.AddResult(l.Result())
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	if snap.Traces+snap.Failed == 0 {
		return nil, fmt.Errorf("%s: holds no nsyssync report", path)
	}
	return snap, nil
}

// analyseInto analyses the inputs into the snapshot; a failure is an
// error unless failures are tolerated (a directory of many traces).
func analyseInto(ctx context.Context, snap *Snapshot, inputs []Input, opt Options, tolerate bool) error {
	opt.KeepSyncs = false
	return Batch(ctx, inputs, opt, func(r Result) error {
		if r.Err != nil && !tolerate {
			return r.Err
		}
		snap.AddResult(r)
		return nil
	})
}
