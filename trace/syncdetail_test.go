package trace

import "testing"

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
