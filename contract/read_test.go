package contract

import (
	"encoding/json"
	"strings"
	"testing"
)

// withError is a document with a field of its own, as batch's JSON Lines
// write it.
type withError struct {
	Document
	Error string `json:"error,omitempty"`
}

func TestReadStream(t *testing.T) {
	one, _ := json.Marshal(Empty("a.sqlite"))
	two, _ := json.Marshal(withError{Document: Empty("b.sqlite"), Error: "no CUDA trace"})
	var got []withError
	err := ReadStream(strings.NewReader(string(one)+"\n"+string(two)+"\n"), "lines.jsonl", func(l withError) error {
		got = append(got, l)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Trace.Path != "a.sqlite" || got[1].Error != "no CUDA trace" || got[1].Sites == nil {
		t.Errorf("read %+v", got)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"schema":"nsyssync/v0"}`, `lines.jsonl: document 1: schema "nsyssync/v0", want "nsyssync/v1"`},
		{string(one) + "\n[", "lines.jsonl: document 2: not an nsyssync JSON report"},
	} {
		err := ReadStream(strings.NewReader(tc.in), "lines.jsonl", func(Document) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}
