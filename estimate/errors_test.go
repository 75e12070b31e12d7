package estimate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/trace"
)

// TestSavingsErrNamesTheFileFirst: an estimator error begins with the
// file, once (issue 14: "nsyssync: estimating savings: FILE: …"), and the
// context's errors stay recognisable.
func TestSavingsErrNamesTheFileFirst(t *testing.T) {
	input := &trace.InputError{Path: "a.sqlite", Problem: "corrupt or truncated SQLite file (while reading the timeline)", Err: trace.ErrCorrupt}
	for _, tc := range []struct {
		name string
		err  error
		want string
		is   error
	}{
		{"input error", fmt.Errorf("reading: %w", input), "reading: a.sqlite: corrupt", trace.ErrCorrupt},
		{"other error", errors.New("disk on fire"), "a.sqlite: estimating savings: disk on fire", nil},
		{"cancelled", fmt.Errorf("scan: %w", context.Canceled), "scan: context canceled", context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := savingsErr("a.sqlite", tc.err)
			if !strings.HasPrefix(got.Error(), tc.want) || strings.Count(got.Error(), "a.sqlite") > 1 {
				t.Errorf("%q, want it to begin %q and name the file once", got, tc.want)
			}
			if tc.is != nil && !errors.Is(got, tc.is) {
				t.Errorf("%v is not %v", got, tc.is)
			}
		})
	}
}
