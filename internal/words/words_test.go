package words

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 sites"}, {1, "1 site"}, {2, "2 sites"}, {41, "41 sites"}, {-1, "-1 sites"}} {
		if got := Count(c.n, "site", "sites"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := Noun(1, "op", "ops"); got != "op" {
		t.Errorf("Noun(1) = %q, want op", got)
	}
}
