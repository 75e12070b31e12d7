package report

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/nsyssync/nsyssync/internal/textsafe"
)

// column is one column of a terminal table.
type column struct {
	header string
	// flex: the column takes the width left over and truncates to it.
	flex bool
	// keepTail truncates from the left ("…/syncs.py:34 step"): the end of
	// a location says the most.
	keepTail bool
	// optional: the column is left out when the table would not fit the
	// width otherwise (the rightmost optional column goes first).
	optional bool
	// wrap: a flexible column wraps onto more lines instead of truncating.
	wrap bool
	// style colours a cell by its text; nil: plain.
	style func(text string) lipgloss.Style
}

// altSep separates alternative texts of one cell, longest first: the
// table shows the first that fits its column (a location with its
// directory, then without) and truncates the last.
const altSep = "\x00"

// minFlexWidth is the narrowest a flexible column gets, however narrow the
// terminal: below it the row wraps rather than saying nothing.
const minFlexWidth = 10

// gap separates columns.
const gap = "  "

// renderTable lays rows out in aligned columns no wider than width (0: no
// limit) by truncating the flexible column, and styles headers and cells.
func renderTable(b *strings.Builder, st *styles, cols []column, rows [][]string, width int) {
	cols, rows = dropOptional(cols, rows, width)
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = ansi.StringWidth(c.header)
	}
	for _, r := range rows {
		for i := range cols {
			first, _, _ := strings.Cut(r[i], altSep)
			widths[i] = max(widths[i], ansi.StringWidth(first))
		}
	}
	if width > 0 {
		fixed := 0
		for i, c := range cols {
			if !c.flex {
				fixed += widths[i] + len(gap)
			}
		}
		for i, c := range cols {
			if c.flex {
				widths[i] = min(widths[i], max(width-fixed, minFlexWidth))
			}
		}
	}
	line := func(cells []string, header bool) {
		var sb strings.Builder
		for i, c := range cols {
			text := fit(cells[i], widths[i], c.keepTail)
			last := i == len(cols)-1
			if !last {
				text += strings.Repeat(" ", widths[i]-ansi.StringWidth(text))
			}
			switch {
			case header:
				text = st.header.Render(text)
			case c.style != nil:
				text = c.style(cells[i]).Render(text)
			}
			sb.WriteString(text)
			if !last {
				sb.WriteString(gap)
			}
		}
		b.WriteString(strings.TrimRight(sb.String(), " "))
		b.WriteByte('\n')
	}
	headers := make([]string, len(cols))
	for i, c := range cols {
		headers[i] = c.header
	}
	line(headers, true)
	for _, r := range rows {
		for _, r := range wrapRow(cols, widths, r) {
			line(r, false)
		}
	}
}

// dropOptional leaves out optional columns, rightmost first, until the
// fixed columns and the narrowest flexible one fit the width.
func dropOptional(cols []column, rows [][]string, width int) ([]column, [][]string) {
	if width <= 0 {
		return cols, rows
	}
	need := func(cols []column, rows [][]string) int {
		total := 0
		for i, c := range cols {
			if c.flex {
				total += minFlexWidth + len(gap)
				continue
			}
			w := ansi.StringWidth(c.header)
			for _, r := range rows {
				w = max(w, ansi.StringWidth(r[i]))
			}
			total += w + len(gap)
		}
		return total - len(gap)
	}
	for need(cols, rows) > width {
		drop := -1
		for i, c := range cols {
			if c.optional {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		cols = append(cols[:drop:drop], cols[drop+1:]...)
		out := make([][]string, len(rows))
		for j, r := range rows {
			out[j] = append(r[:drop:drop], r[drop+1:]...)
		}
		rows = out
	}
	return cols, rows
}

// wrapRow splits a row whose wrapping cells are wider than their column
// into several lines, the other cells empty on the continuation lines.
func wrapRow(cols []column, widths []int, row []string) [][]string {
	out := [][]string{row}
	for i, c := range cols {
		if !c.wrap || strings.Contains(row[i], altSep) || ansi.StringWidth(row[i]) <= widths[i] {
			continue
		}
		parts := strings.Split(wordWrap(row[i], widths[i]), "\n")
		for len(out) < len(parts) {
			out = append(out, make([]string, len(cols)))
		}
		for j, p := range parts {
			out[j][i] = strings.TrimRight(p, " ")
		}
	}
	return out
}

// fit picks the first alternative of s that fits width cells, or
// truncates the last with an ellipsis, keeping its end when keepTail is
// set.
func fit(s string, width int, keepTail bool) string {
	alts := strings.Split(s, altSep)
	for _, a := range alts {
		if width <= 0 || ansi.StringWidth(a) <= width {
			return a
		}
	}
	s = alts[len(alts)-1]
	if len(alts) > 1 {
		// The short form leads with what matters (file:line): keep its head.
		keepTail = false
	}
	w := ansi.StringWidth(s)
	if w <= width || width <= 0 {
		return s
	}
	if width == 1 {
		return "…"
	}
	if !keepTail {
		return ansi.Truncate(s, width, "…")
	}
	runes := []rune(s)
	out := []rune{}
	used := 1 // the ellipsis
	for i := len(runes) - 1; i >= 0; i-- {
		rw := ansi.StringWidth(string(runes[i]))
		if used+rw > width {
			break
		}
		used += rw
		out = append(out, runes[i])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return "…" + string(out)
}

// termText is the display form of text from the trace in the terminal
// reports: control characters and bidirectional marks visible (\x1b,
// \u202e), at most textsafe.MaxDisplay characters.
func termText(s string) string { return textsafe.Display(s, textsafe.Terminal) }

// wrapIndent word-wraps text to width (0: no wrapping) and indents every
// line.
func wrapIndent(text string, width int, indent string) string {
	if width > len(indent)+minFlexWidth {
		text = wordWrap(text, width-len(indent))
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = indent + l
	}
	return strings.Join(lines, "\n")
}

// wordWrap breaks text at spaces so that no line is wider than width
// cells; a word wider than a line is cut. Unlike ansi.Wordwrap it never
// breaks at hyphens, so command-line flags stay whole.
func wordWrap(text string, width int) string {
	if width <= 0 {
		return text
	}
	var lines []string
	for _, para := range strings.Split(text, "\n") {
		line, lineW := "", 0
		for _, word := range strings.Fields(para) {
			ww := ansi.StringWidth(word)
			for ww > width {
				if lineW > 0 {
					lines = append(lines, line)
					line, lineW = "", 0
				}
				lines = append(lines, ansi.Cut(word, 0, width))
				word = ansi.Cut(word, width, ww)
				ww = ansi.StringWidth(word)
			}
			switch {
			case lineW == 0:
				line, lineW = word, ww
			case lineW+1+ww <= width:
				line, lineW = line+" "+word, lineW+1+ww
			default:
				lines = append(lines, line)
				line, lineW = word, ww
			}
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
