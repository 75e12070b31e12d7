package trace

import "strconv"

// The small enumerations of a Sync, one byte each (a trace may hold
// millions of syncs); each prints, and marshals as text, as the string it
// was before it was packed.

// SyncKind separates syncs the program asked for from those a call implies.
type SyncKind uint8

// The kinds of sync. The zero value is no kind, printed as "".
const (
	Explicit SyncKind = iota + 1 // "explicit"
	Implicit                     // "implicit"
)

// String returns "explicit", "implicit", or "" for the zero value.
func (k SyncKind) String() string {
	switch k {
	case Explicit:
		return "explicit"
	case Implicit:
		return "implicit"
	}
	return ""
}

// MarshalText marshals the kind as its String.
func (k SyncKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Scope says what a sync waited for.
type Scope uint8

// Wait scopes. The zero value is no scope, printed as "".
const (
	ScopeStream  Scope = iota + 1 // "stream": one stream (or all blocking streams for the legacy stream)
	ScopeEvent                    // "event": the work before an event record
	ScopeContext                  // "context": every stream of the process
)

// String returns "stream", "event", "context", or "" for the zero value.
func (s Scope) String() string {
	switch s {
	case ScopeStream:
		return "stream"
	case ScopeEvent:
		return "event"
	case ScopeContext:
		return "context"
	}
	return ""
}

// MarshalText marshals the scope as its String.
func (s Scope) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Reason says why a sync blocked the host: the call that blocked
// ("stream-sync", "free") or the copy ("pageable-dtoh-copy"), the copy
// followed by a stream sync that completed it ("dtoh-copy+stream-sync").
type Reason uint8

// The reasons. The zero value is no reason, printed as "". A copy's reason
// with ThenStreamSync is that copy completed by a stream synchronize.
const (
	ReasonOther        Reason = iota + 1 // "other"
	ReasonStreamSync                     // "stream-sync"
	ReasonEventSync                      // "event-sync"
	ReasonContextSync                    // "context-sync"
	ReasonMemcpy                         // "memcpy"
	ReasonMemset                         // "memset"
	ReasonFree                           // "free"
	ReasonPageableDtoH                   // "pageable-dtoh-copy"
	ReasonDtoH                           // "dtoh-copy"
	ReasonPageableHtoD                   // "pageable-htod-copy"
	ReasonHtoD                           // "htod-copy"
	ReasonHtoH                           // "htoh-copy"
	ReasonDtoD                           // "dtod-copy"
	ReasonCopy                           // "copy": a copy of unknown direction
	numReasons
)

// reasonLinked is the bit of ThenStreamSync.
const reasonLinked Reason = 0x80

var reasonNames = [numReasons]string{"", "other", "stream-sync", "event-sync", "context-sync", "memcpy", "memset", "free",
	"pageable-dtoh-copy", "dtoh-copy", "pageable-htod-copy", "htod-copy", "htoh-copy", "dtod-copy", "copy"}

// linkedNames are the names with "+stream-sync", built once so that String
// does not allocate.
var linkedNames = func() (out [numReasons]string) {
	for i, n := range reasonNames {
		out[i] = n + "+stream-sync"
	}
	return out
}()

// ThenStreamSync returns the reason of r completed by a stream synchronize.
func (r Reason) ThenStreamSync() Reason { return r | reasonLinked }

// String returns the reason's name, e.g. "stream-sync" or
// "dtoh-copy+stream-sync"; "" for the zero value.
func (r Reason) String() string {
	base := r &^ reasonLinked
	if base >= numReasons {
		return "reason(" + strconv.Itoa(int(r)) + ")"
	}
	if r&reasonLinked != 0 {
		return linkedNames[base]
	}
	return reasonNames[base]
}

// MarshalText marshals the reason as its String.
func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// reasonOf is the reason of a sync made by one call of kind k.
func reasonOf(k CallKind) Reason {
	switch k {
	case CallStreamSync:
		return ReasonStreamSync
	case CallEventSync:
		return ReasonEventSync
	case CallContextSync:
		return ReasonContextSync
	case CallMemcpy:
		return ReasonMemcpy
	case CallMemset:
		return ReasonMemset
	case CallFree:
		return ReasonFree
	}
	return ReasonOther
}
