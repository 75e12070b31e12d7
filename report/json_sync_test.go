package report

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// TestAppendJSONStringMatchesEncodingJSON checks the hand-written string
// encoder against encoding/json: every byte, HTML characters, U+2028/9,
// invalid UTF-8 and random strings.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	cases := []string{"", "plain", hostile, "a\u2028b\u2029c", "\xff\xfe", "ok\xc3", "\xed\xa0\x80", "é日本\U0001F600",
		"tab\tnl\nret\rbs\\q\"", "\b\f\x00\x1f\x7f", "<>&'"}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y")
	}
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "<", "&", "\"", "\\", "\n", "\x01", "\xff", "é", "\u2028", "日", "\U0001F600", "\xe2\x80"}
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for j := rng.Intn(12); j > 0; j-- {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString([]byte("prefix"), s); string(got) != "prefix"+string(want) {
			t.Errorf("%q: got %s, encoding/json %s", s, got[len("prefix"):], want)
		}
		if got := appendJSONString([]byte("prefix"), []byte(s)); string(got) != "prefix"+string(want) {
			t.Errorf("%q as bytes: got %s, encoding/json %s", s, got[len("prefix"):], want)
		}
	}
}

// TestAppendSyncJSONMatchesMarshal checks the sync encoder against
// json.Marshal of the SyncJSON struct, for real syncs and for every
// optional field set and unset, with hostile text.
func TestAppendSyncJSONMatchesMarshal(t *testing.T) {
	for _, fx := range []string{"syncs_backtrace.sqlite.gz", "syncs_autograd.sqlite.gz", "multiproc_lean.sqlite.gz"} {
		l := load(t, fx, "")
		a := l.analysis
		tr := a.Trace
		site := a.siteIndex()
		check := func(name string, s *trace.Sync, siteID string) {
			t.Helper()
			want, err := json.Marshal(syncJSON(tr, s, siteID))
			if err != nil {
				t.Fatal(err)
			}
			if got := appendSyncJSON(nil, s, siteID, tr.Threads[s.GlobalTid].Name); string(got) != string(want) {
				t.Errorf("%s %s:\n got  %s\n want %s", fx, name, got, want)
			}
		}
		for i := range tr.Syncs {
			check("sync", &tr.Syncs[i], a.siteID(site, i))
		}
		if len(tr.Syncs) == 0 {
			t.Fatalf("%s: no syncs", fx)
		}
		// Every optional field both ways.
		s := tr.Syncs[0]
		// Kind, Scope and Reason are codes (no hostile text): the zero
		// values print as "".
		s.Reason, s.Kind, s.Scope = trace.ReasonPageableDtoH.ThenStreamSync(), 0, 0
		s.SetNVTX([]trace.RangeRef{{Name: hostile}, {Name: "step12"}})
		s.SetCalls([]trace.Call{{Name: "cudaMemcpy<&>"}, {Name: "cudaStreamSynchronize"}})
		for _, v := range [][4]int64{{-1, -1, -1, -1}, {0, 0, 0, 0}, {3, 7, 0xFFFFFFFF, 9}, {1, -1, 5, -1}} {
			s.Device, s.Context, s.EventID, s.Stream = trace.DeviceID(v[0]), trace.ContextID(v[1]), v[2], trace.StreamID(v[3])
			s.Legacy, s.Resolved = v[0] > 0, v[1] > 0
			s.Waited.LastEnd = v[2]
			s.Gap.DeviceBusy = v[3] > 0
			s.Copy = nil
			check("no copy", &s, "")
			s.Copy = &trace.Copy{Direction: trace.CopyKind(v[0] + 2), SrcKind: trace.MemKind(v[1] + 2), DstKind: trace.MemKind(v[3] + 3), Bytes: v[2], Memset: v[0] == 0}
			check("copy", &s, hostile)
		}
		s.SetNVTX(nil)
		s.SetCalls(nil)
		check("no calls", &s, "s1")
	}
}

// TestLongestSyncs checks the heap's pick against a stable sort of all.
func TestLongestSyncs(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, size := range []int{0, 1, 5, 100, 3000} {
		tr := &trace.Trace{Syncs: make([]trace.Sync, size)}
		for i := range tr.Syncs {
			tr.Syncs[i].Start = int64(i)
			tr.Syncs[i].End = int64(i) + rng.Int63n(20) // many ties
		}
		want := make([]int, size)
		for i := range want {
			want[i] = i
		}
		sort.SliceStable(want, func(x, y int) bool { return tr.Syncs[want[x]].Duration() > tr.Syncs[want[y]].Duration() })
		for _, n := range []int{0, -1, 1, 2, 10, 99, 100, 101, 2999, 5000} {
			exp := want
			if n > 0 && n < len(want) {
				exp = want[:n]
			}
			if got := longestSyncs(tr, n); !slices.Equal(got, exp) {
				t.Errorf("size %d n %d: got %v, want %v", size, n, got, exp)
			}
		}
	}
}

// TestWriteJSONMatchesBuildDocument checks the streamed report, whose
// sync lines are encoded in blocks on all cores, against encoding/json of
// the whole document, on a fixture's syncs repeated past several blocks
// and across thread changes.
func TestWriteJSONMatchesBuildDocument(t *testing.T) {
	l := load(t, "multiproc_lean.sqlite.gz", "")
	a := l.analysis
	orig := a.Trace.Syncs
	syncs := make([]trace.Sync, 0, 3*4096+17)
	for i := 0; len(syncs) < cap(syncs); i++ {
		s := orig[i%len(orig)]
		s.Index = int32(len(syncs))
		syncs = append(syncs, s)
	}
	a.Trace.Syncs = syncs
	var streamed bytes.Buffer
	if err := a.WriteJSON(&streamed); err != nil {
		t.Fatal(err)
	}
	whole, err := json.Marshal(a.BuildDocument())
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(streamed.Bytes(), &got); err != nil {
		t.Fatalf("the streamed report is not JSON: %v", err)
	}
	if err := json.Unmarshal(whole, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("the streamed report differs from the whole document")
	}
	if n := len(got.(map[string]any)["syncs"].([]any)); n != len(syncs) {
		t.Fatalf("%d syncs written, want %d", n, len(syncs))
	}
}
