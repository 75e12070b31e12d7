// Package textsafe makes text from a trace (symbols, file names, NVTX
// ranges, thread names, warnings) safe to print, and bounds its length.
//
// An export is input from anyone: a symbol may carry terminal escape
// sequences (ESC ] 0 ; … BEL sets a terminal's title, ESC [ 2 J clears the
// screen), bidirectional overrides that reorder what a reader sees
// (U+202E), line breaks that end a Markdown table row or <details> block,
// Markdown that renders as a link or an image, or a name a megabyte long.
// Every text-like output of nsyssync passes such text through one family
// of functions:
//
//   - Display(s, mode): the display form, for text, Markdown and HTML:
//     Shorten to MaxDisplay characters, then Escape for the mode.
//   - Escape(s, mode): the same without shortening.
//   - Message(s): a message for stderr (an error that names a file or
//     quotes the trace), in terminal mode line by line, so that the line
//     breaks nsyssync writes into its own messages stay.
//   - Bound(s): the form JSON outputs (the report, Perfetto) carry: the
//     full string when it is at most MaxJSON bytes, else its start and
//     end around a marker. JSON's own escaping handles control
//     characters, so Bound changes no character.
//
// Every mode first makes invisible and control characters visible, as Go
// writes them in a string literal:
//
//   - line feed, carriage return and tab: \n, \r, \t;
//   - the other C0 controls and DEL: \x00 … \x1f, \x7f (ESC is \x1b);
//   - C1 controls (U+0080–U+009F): \u0080 … \u009f;
//   - bidirectional marks, embeddings, overrides and isolates (U+061C,
//     U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and the line and
//     paragraph separators U+2028, U+2029: \u202e and so on;
//   - bytes that are not UTF-8: \xff and so on.
//
// A backslash of the text itself stays as it is: the visible form is for
// people, not to be parsed back.
package textsafe

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Mode says where escaped text goes.
type Mode uint8

const (
	// Terminal is plain text for a terminal or a log: the text report,
	// the batch, history and diff tables, and lines on stderr.
	Terminal Mode = iota
	// HTML is a value for html/template, which escapes HTML itself: only
	// the visible form is applied, so that a line break or an override
	// cannot reorder or break a line of the page.
	HTML
	// Markdown is inline Markdown text (a paragraph, a list item, a
	// table cell): on top of the visible form, HTML's <, > and & become
	// entities, Markdown's active characters (\ ` * _ [ ] | # ~ !) are
	// backslash-escaped, and "://" and "www." are broken up so that no
	// bare URL becomes a link.
	Markdown
	// MarkdownCode is the content of a fenced code block or a code span,
	// shown literally by Markdown: the visible form only (the caller
	// picks a fence longer than any run of backticks).
	MarkdownCode
	// MarkdownHTML is HTML written by hand into Markdown, as the
	// <summary> of a <details> block: HTML-escaped, and [ ] ` | as
	// numeric entities, so that the line reads the same whether or not a
	// renderer looks for Markdown in it.
	MarkdownHTML
)

// MaxDisplay is the most characters (runes) of a text Display keeps: the
// first two thirds and the last third, around an ellipsis, so that the
// head of a location (file:line) and the end of a symbol both show. The
// frames of PyTorch's templated dispatch run to 800 characters in the
// fixtures; they stay whole.
const MaxDisplay = 1024

// MaxJSON is the most bytes of a string Bound keeps whole.
const MaxJSON = 4096

// ellipsis joins the start and the end of a shortened text.
const ellipsis = "…"

// Display returns s shortened to MaxDisplay characters and escaped for
// the mode: the form every report shows of a text from the trace.
func Display(s string, m Mode) string { return Escape(Shorten(s, MaxDisplay), m) }

// MaxMessage is the most characters of a message Message keeps.
const MaxMessage = 4 * MaxDisplay

// Message returns a message for a terminal or a log: shortened to
// MaxMessage characters, each of its lines escaped (Terminal), the line
// feeds between them kept.
func Message(s string) string {
	lines := strings.Split(Shorten(s, MaxMessage), "\n")
	for i, l := range lines {
		lines[i] = Escape(l, Terminal)
	}
	return strings.Join(lines, "\n")
}

// Shorten returns s when it has at most max characters, else its first
// two thirds and last third of max-1 characters joined by an ellipsis. It
// looks at no more than max characters at each end, however long s is.
func Shorten(s string, max int) string {
	if len(s) <= max || max < 2 {
		return s
	}
	headRunes := (max - 1) * 2 / 3
	tailRunes := max - 1 - headRunes
	head := 0
	for n := 0; n < headRunes && head < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[head:])
		head += size
	}
	tail := len(s)
	for n := 0; n < tailRunes && tail > head; n++ {
		_, size := utf8.DecodeLastRuneInString(s[:tail])
		tail -= size
	}
	if tail <= head {
		return s
	}
	// One character more would have fitted in place of the ellipsis.
	if _, size := utf8.DecodeRuneInString(s[head:]); head+size == tail {
		return s
	}
	return s[:head] + ellipsis + s[tail:]
}

// Bound returns s when it is at most MaxJSON bytes, else its start (3
// KiB) and end (1 KiB), cut at character boundaries, around the marker
// "…[nsyssync: N bytes cut]…": still a string, of at most MaxJSON bytes
// and the marker.
func Bound(s string) string {
	if len(s) <= MaxJSON {
		return s
	}
	head := MaxJSON * 3 / 4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - MaxJSON/4
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + "…[nsyssync: " + strconv.Itoa(tail-head) + " bytes cut]…" + s[tail:]
}

// Escape returns s escaped for the mode, whole.
func Escape(s string, m Mode) string {
	if isPlain(s, m) {
		return s
	}
	v := visible(s)
	switch m {
	case Markdown:
		return markdownEscaper.Replace(v)
	case MarkdownHTML:
		return markdownHTMLEscaper.Replace(v)
	}
	return v
}

// markdownEscaper escapes text for inline Markdown and the HTML GitHub
// allows in it.
var markdownEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;",
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"|", `\|`, "#", `\#`, "~", `\~`, "!", `\!`,
	"://", `:\/\/`, "www.", `www\.`,
)

// markdownHTMLEscaper escapes text for HTML written into Markdown.
var markdownHTMLEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;",
	"[", "&#91;", "]", "&#93;", "`", "&#96;", "|", "&#124;",
)

// isPlain reports whether Escape would return s unchanged, without
// allocating: the common case of a symbol with nothing to escape.
func isPlain(s string, m Mode) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < ' ' || c == 0x7f:
			return false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if (r == utf8.RuneError && size == 1) || hidden(r) {
				return false
			}
			i += size - 1
		case m == Markdown && strings.IndexByte("&<>\\`*_[]|#~!:w", c) >= 0:
			return false
		case m == MarkdownHTML && strings.IndexByte("&<>\"'[]`|", c) >= 0:
			return false
		}
	}
	return true
}

// hidden reports whether a rune (not ASCII) is shown by its escape: a C1
// control, a bidirectional control or a line or paragraph separator.
func hidden(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f,
		r == 0x061c, r == 0x200e, r == 0x200f,
		r >= 0x202a && r <= 0x202e,
		r >= 0x2066 && r <= 0x2069,
		r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

// visible writes control, bidirectional and invalid characters as their
// escapes (see the package comment).
func visible(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < ' ' || c == 0x7f:
				b.WriteString(`\x`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		case hidden(r):
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[r>>shift&0xf])
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
