package trace

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
