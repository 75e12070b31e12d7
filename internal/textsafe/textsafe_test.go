package textsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	cases := []struct {
		name string
		in   string
		mode Mode
		want string
	}{
		{"plain stays", "at::native::copy_kernel<float>", Terminal, "at::native::copy_kernel<float>"},
		{"osc and csi", "a\x1b]0;PWNED\x07\x1b[2Jb", Terminal, `a\x1b]0;PWNED\x07\x1b[2Jb`},
		{"line breaks and tab", "a\nb\r\tc", Terminal, `a\nb\r\tc`},
		{"del", "a\x7fb", Terminal, `a\x7fb`},
		{"c1 csi", "a\u009b2Jb", Terminal, `a\u009b2Jb`},
		{"rtl override", "step\u202etxt.exe", Terminal, `step\u202etxt.exe`},
		{"isolates and marks", "\u2066\u2067\u2068\u2069\u200e\u200f\u061c", Terminal, `\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
		{"line separator", "a\u2028b", HTML, `a\u2028b`},
		{"invalid utf8", "a\xffb\x9b", Terminal, `a\xffb\x9b`},
		{"unicode kept", "µs → ×", Terminal, "µs → ×"},
		{"html keeps tags for the template", "<b>\n", HTML, `<b>\n`},
		{"markdown image", "x\n![x](http://evil)", Markdown, `x\\n\!\[x\](http:\/\/evil)`},
		{"markdown details", "</details>", Markdown, "&lt;/details&gt;"},
		{"markdown table", "a|b", Markdown, `a\|b`},
		{"markdown bare url", "see www.evil.example", Markdown, `see www\.evil.example`},
		{"markdown cpp", "at::native::f", Markdown, "at::native::f"},
		{"markdown code literal", "vector<int> [x](y)\x1b", MarkdownCode, `vector<int> [x](y)\x1b`},
		{"markdown html", `<a href="x">[y](z)</a>` + "`|\n", MarkdownHTML, `&lt;a href=&#34;x&#34;&gt;&#91;y&#93;(z)&lt;/a&gt;&#96;&#124;\n`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Escape(c.in, c.mode); got != c.want {
				t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestShorten(t *testing.T) {
	long := strings.Repeat("a", 200) + strings.Repeat("é", 200) + "syncs.py:34"
	cases := []struct {
		name      string
		in        string
		max       int
		want      string
		wantRunes int
	}{
		{"short stays", "abc", 10, "abc", 3},
		{"exact stays", "abcdefghij", 10, "abcdefghij", 10},
		{"multibyte within max stays", "éééé", 4, "éééé", 4},
		{"cut keeps both ends", "abcdefghijklmnopqrstuvwxyz", 10, "abcdef…xyz", 10},
		{"long keeps its end", long, 40, strings.Repeat("a", 26) + "…" + "éé" + "syncs.py:34", 40},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Shorten(c.in, c.max)
			if got != c.want {
				t.Errorf("Shorten = %q, want %q", got, c.want)
			}
			if n := utf8.RuneCountInString(got); n != c.wantRunes {
				t.Errorf("%d runes, want %d", n, c.wantRunes)
			}
		})
	}
}

func TestDisplayIsBounded(t *testing.T) {
	cases := []struct {
		name string
		in   string
		mode Mode
	}{
		{"megabyte symbol", strings.Repeat("x", 1<<20), Terminal},
		{"megabyte of escapes", strings.Repeat("\x1b", 1<<20), Terminal},
		{"megabyte of markdown", strings.Repeat("<[", 1<<19), Markdown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Display(c.in, c.mode)
			// The worst expansion is a rune written as \u202e (6 bytes)
			// or a Markdown entity of an escape (7).
			if len(got) > 8*MaxDisplay {
				t.Errorf("display form of %d bytes is %d bytes", len(c.in), len(got))
			}
			if strings.ContainsAny(got, "\x1b\n") {
				t.Errorf("raw control character in %q", got[:40])
			}
		})
	}
}

func TestBound(t *testing.T) {
	cases := []struct {
		name     string
		in       string
		wantSame bool
	}{
		{"short stays", "kernel", true},
		{"at the limit stays", strings.Repeat("k", MaxJSON), true},
		{"megabyte is cut", strings.Repeat("k", 1<<20) + "end.py", false},
		{"multibyte cut at a rune", strings.Repeat("é", MaxJSON), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Bound(c.in)
			if (got == c.in) != c.wantSame {
				t.Fatalf("Bound changed the string: %v, want %v", got != c.in, !c.wantSame)
			}
			if c.wantSame {
				return
			}
			if len(got) > MaxJSON+64 || !utf8.ValidString(got) || !strings.Contains(got, " bytes cut]…") {
				t.Errorf("bounded form of %d bytes: %d bytes, valid %v", len(c.in), len(got), utf8.ValidString(got))
			}
			if !strings.HasPrefix(got, c.in[:100]) || !strings.HasSuffix(got, c.in[len(c.in)-100:]) {
				t.Errorf("the start or the end of the string is lost")
			}
		})
	}
}

func TestMessage(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"own line breaks stay", "2 sites match:\nab12\ncd34", "2 sites match:\nab12\ncd34"},
		{"escapes in a line", "open x\x1b[2J.sqlite: no such file", `open x\x1b[2J.sqlite: no such file`},
		{"carriage return shown", "a\rb", `a\rb`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Message(c.in); got != c.want {
				t.Errorf("Message(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
	if n := utf8.RuneCountInString(Message(strings.Repeat("x", 1<<20))); n != MaxMessage {
		t.Errorf("a megabyte message keeps %d characters, want %d", n, MaxMessage)
	}
}
