package contract

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// SchemaName is the schema the document names ("nsyssync/v1"); a type
// that embeds a Document has it too, so ReadStream reads either.
func (d Document) SchemaName() string { return d.Schema }

// Empty is the document of an export that gave no analysis: the schema,
// the export's path, and no sites nor syncs.
func Empty(path string) Document {
	return Document{Schema: SchemaVersion, Trace: TraceInfo{Path: path}, Sites: []SiteJSON{}, Syncs: []SyncJSON{}}
}

// ReadStream decodes one JSON document after another from r — JSON Lines,
// or the stream `analyze --format json` writes for several files — each
// into a new T (a Document, or a type that embeds one), and hands each to
// fn. A value that is not JSON, or a document of another schema, is an
// error naming the stream (name) and the document's number.
func ReadStream[T interface{ SchemaName() string }](r io.Reader, name string, fn func(T) error) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<16))
	for n := 1; ; n++ {
		var v T
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: not an nsyssync JSON report: %w", name, n, err)
		}
		if s := v.SchemaName(); s != SchemaVersion {
			return fmt.Errorf("%s: document %d: schema %q, want %q", name, n, s, SchemaVersion)
		}
		if err := fn(v); err != nil {
			return err
		}
	}
}
