package classify

import (
	"os"
	"strings"
	"testing"
)

// TestCopyGuard: OpenACC Jacobi's final event waits follow its copy-outs
// (the last op on the stream before each is a device-to-host copy): the
// host reads that data next, so they are not false; the fixture's event
// and stream synchronizes follow kernels and copies to the GPU, and stay
// false.
func TestCopyGuard(t *testing.T) {
	const jacobi = "../../shared/corpus/openacc-jacobi_4xv100_reexport2025.3.sqlite"
	if _, err := os.Stat(jacobi); err == nil {
		guarded := 0
		for _, s := range Sites(load(t, jacobi)) {
			if len(s.APIs) == 1 && s.APIs[0] == "cuEventSynchronize" {
				guarded++
				if s.Dependency != DepUnknown || !strings.Contains(s.Evidence[0], "wait for a copy to the host") {
					t.Errorf("jacobi %s: %s, evidence %q", s.ID, s.Dependency, s.Evidence)
				}
			}
		}
		if guarded != 1 {
			t.Errorf("jacobi: %d event-sync sites, want 1", guarded)
		}
	}
	explicit := 0
	for _, s := range Sites(load(t, "../fixtures/syncs_lean.sqlite.gz")) {
		if s.Reason == "event-sync" || s.Reason == "stream-sync" {
			explicit++
			if s.Dependency != DepFalse || strings.Contains(strings.Join(s.Evidence, " "), "wait for a copy to the host") {
				t.Errorf("syncs_lean %s %v: %s, evidence %q", s.ID, s.APIs, s.Dependency, s.Evidence)
			}
		}
	}
	if explicit < 4 {
		t.Errorf("syncs_lean: %d stream and event synchronize sites, want 4", explicit)
	}
}
