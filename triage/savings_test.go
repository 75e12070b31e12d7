package triage

import "testing"

// TestSavingsCell: the tables print a saving as a duration, no estimate as
// "-", and a negative saving with a minus sign, never as "-".
func TestSavingsCell(t *testing.T) {
	tests := []struct {
		ns   int64
		want string
	}{
		{1_460_000, "1.46ms"},
		{0, "-"},
		{-8_682, "−8.7µs"},
	}
	for _, tc := range tests {
		if got := savings(tc.ns); got != tc.want {
			t.Errorf("savings(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}
