package trace

import (
	"encoding/json"
	"testing"
)

// TestEnumNames checks the text of the one-byte enumerations of a Sync: the
// strings they were before they were packed.
func TestEnumNames(t *testing.T) {
	for _, tc := range []struct {
		got  interface{ String() string }
		want string
	}{
		{SyncKind(0), ""}, {Explicit, "explicit"}, {Implicit, "implicit"},
		{Scope(0), ""}, {ScopeStream, "stream"}, {ScopeEvent, "event"}, {ScopeContext, "context"},
		{Reason(0), ""}, {ReasonOther, "other"}, {ReasonFree, "free"}, {ReasonCopy, "copy"},
		{ReasonDtoH.ThenStreamSync(), "dtoh-copy+stream-sync"}, {ReasonPageableHtoD, "pageable-htod-copy"},
		{Reason(200), "reason(200)"},
	} {
		if s := tc.got.String(); s != tc.want {
			t.Errorf("%#v: %q, want %q", tc.got, s, tc.want)
		}
	}
	for k := CallOther; k <= CallFree; k++ {
		if got, want := reasonOf(k).String(), k.String(); got != want {
			t.Errorf("reason of %s: %q", want, got)
		}
	}
	b, err := json.Marshal(struct {
		K SyncKind
		S Scope
		R Reason
	}{Implicit, ScopeEvent, ReasonHtoD.ThenStreamSync()})
	if want := `{"K":"implicit","S":"event","R":"htod-copy+stream-sync"}`; err != nil || string(b) != want {
		t.Errorf("JSON %s (%v), want %s", b, err, want)
	}
}
