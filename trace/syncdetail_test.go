package trace

import (
	"testing"
	"unsafe"
)

// TestSyncDetail checks the accessors of a sync's frames and ops before: nil
// without any, and a setter on one copy of a Sync leaves the others alone.
func TestSyncDetail(t *testing.T) {
	var s Sync
	if s.Native() != nil || s.Python() != nil || s.OpsBefore() != nil || s.detail != nil {
		t.Fatal("a new sync has detail")
	}
	s.SetNative([]Frame{{Symbol: "a"}})
	s.SetPython([]PyFrame{{Function: "f"}})
	c := s
	c.SetOpsBefore([]RangeRef{{Name: "aten::item"}})
	c.SetNative(nil)
	if len(s.Native()) != 1 || len(s.Python()) != 1 || s.OpsBefore() != nil {
		t.Errorf("the original changed with its copy: %+v", *s.detail)
	}
	if c.Native() != nil || len(c.Python()) != 1 || len(c.OpsBefore()) != 1 {
		t.Errorf("copy: %+v", *c.detail)
	}
}

// TestSyncSize guards the size of a Sync, a Copy and a Call, of which an
// export may hold millions (issue 8: 320, 88 and 80 bytes before the
// fields were packed).
func TestSyncSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes for 64-bit platforms")
	}
	if n := unsafe.Sizeof(Sync{}); n > 176 {
		t.Errorf("a Sync takes %d bytes, more than 176", n)
	}
	if n := unsafe.Sizeof(Copy{}); n > 64 {
		t.Errorf("a Copy takes %d bytes, more than 64", n)
	}
	if n := unsafe.Sizeof(Call{}); n > 72 {
		t.Errorf("a Call takes %d bytes, more than 72", n)
	}
}

// TestSyncCalls checks Calls and SetCalls: the sync refers to the calls.
func TestSyncCalls(t *testing.T) {
	var s Sync
	if s.Calls() != nil {
		t.Fatal("a new sync has calls")
	}
	calls := []Call{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	s.SetCalls(calls[1:])
	if got := s.APIs(); len(got) != 2 || got[0] != "b" || got[1] != "c" || cap(s.Calls()) != 2 {
		t.Errorf("calls %v, cap %d", got, cap(s.Calls()))
	}
	calls[1].Name = "B"
	if s.Calls()[0].Name != "B" {
		t.Error("the sync copied its calls")
	}
	s.SetCalls(nil)
	if s.Calls() != nil {
		t.Error("calls after SetCalls(nil)")
	}
}
