package trace

// This file exposes, read-only, what a simulator of the timeline needs
// beyond the inventory's public fields.

// WaitCorrelationID returns the correlation id that bounds the GPU work the
// sync waited for: work of the sync's process enqueued, in the sync's scope,
// before this id. For a stream or device synchronize it is the call's own
// id; for an event synchronize, the id of the event record it waited on;
// for a blocking copy, the id after the copy's own (the copy is waited for).
func (s *Sync) WaitCorrelationID() int64 { return s.waitCorr }
