package triage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/nsyssync/nsyssync/contract"
)

// Line is one line of the JSON Lines output: a trace's nsyssync/v1
// document (contract.Document, the contract of `analyze --format json`),
// plus "error" when the trace could not be analysed — then the document
// holds only the schema and trace.path, and no sites.
type Line struct {
	contract.Document
	Error string `json:"error,omitempty"`
}

// LineOf turns a result into its line.
func LineOf(r Result) Line {
	if r.Err != nil || r.Doc == nil {
		msg := "no document"
		if r.Err != nil {
			msg = r.Err.Error()
		}
		return Line{Document: contract.Empty(r.Path), Error: msg}
	}
	return Line{Document: *r.Doc}
}

// Result turns a line back into a result.
func (l Line) Result() Result {
	if l.Error != "" {
		return Result{Path: l.Trace.Path, Err: errors.New(l.Error)}
	}
	doc := l.Document
	return Result{Path: doc.Trace.Path, Doc: &doc}
}

// WriteLine writes the result as one line of JSON.
func WriteLine(w io.Writer, r Result) error {
	b, err := json.Marshal(LineOf(r))
	if err != nil {
		return fmt.Errorf("encoding the line of %s: %w", r.Path, err)
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("writing the line of %s: %w", r.Path, err)
	}
	return nil
}

// ReadLines decodes one JSON document after another — JSON Lines, or the
// stream `analyze --format json` writes for several files — and hands
// each to fn. name says where the stream comes from, for errors.
func ReadLines(r io.Reader, name string, fn func(Line) error) error {
	return contract.ReadStream(r, name, fn)
}
