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

// altSep separates alternative texts of one cell, longest first. A
// flexible column shows the first that fits it (a location with its
// directory, then without) and truncates the last; any other column shows
// its first, or its last when the table is too wide for the first
// ("host-to-device-pageable", then "HtoD-pageable").
const altSep = "\x00"

// keepSep marks, in the last alternative of a flexible column's cell, the
// end of the head the column keeps whole (a location's file and line):
// the column is at least that wide, up to maxKeepWidth, and only what
// follows the mark is truncated.
const keepSep = "\x01"

// maxKeepWidth bounds the width a cell's kept head claims.
const maxKeepWidth = 40

// minFlexWidth is the narrowest a flexible column gets, however narrow the
// terminal: below it the row wraps rather than saying nothing.
const minFlexWidth = 10

// gap separates columns.
const gap = "  "

// layout is the columns a table shows and their widths.
type layout struct {
	cols    []column
	rows    [][]string
	widths  []int
	compact []bool // a non-flexible column shows its cells' last alternative
}

// renderTable lays rows out in aligned columns no wider than width (0: no
// limit) and styles headers and cells. When the table is too wide, in
// this order, each step only while the flexible column has less than its
// cells' last alternatives want: columns with alternatives show their
// short ones, optional columns are left out (rightmost first), wrapping
// columns wrap at spaces; then the flexible column takes the width left,
// never less than the head its cells keep (keepSep).
func renderTable(b *strings.Builder, st *styles, cols []column, rows [][]string, width int) {
	l := newLayout(cols, rows, width)
	cols, rows, widths := l.cols, l.rows, l.widths
	line := func(cells []string, header bool) {
		var sb strings.Builder
		for i, c := range cols {
			text := cells[i]
			switch {
			case header:
			case c.flex:
				text = fit(text, widths[i], c.keepTail)
			default:
				text = pickAlt(text, l.compact[i])
				text = fit(text, widths[i], c.keepTail)
			}
			last := i == len(cols)-1
			if !last {
				text += strings.Repeat(" ", max(0, widths[i]-ansi.StringWidth(text)))
			}
			switch {
			case header:
				text = st.header.Render(text)
			case c.style != nil:
				text = c.style(pickAlt(cells[i], false)).Render(text)
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
		shown := make([]string, len(r))
		for i, c := range cols {
			shown[i] = r[i]
			if !c.flex {
				shown[i] = pickAlt(r[i], l.compact[i])
			}
		}
		for _, r := range wrapRow(cols, widths, shown) {
			line(r, false)
		}
	}
}

// newLayout chooses the columns and their widths (see renderTable).
func newLayout(cols []column, rows [][]string, width int) *layout {
	l := &layout{cols: cols, rows: rows, compact: make([]bool, len(cols))}
	l.measure()
	if width <= 0 {
		return l
	}
	for i, c := range l.cols {
		if l.total(false) <= width {
			break
		}
		if !c.flex && l.hasAlternatives(i) {
			l.compact[i] = true
			l.measure()
		}
	}
	for l.total(false) > width && l.dropOptional() {
		l.measure()
	}
	for i, c := range l.cols {
		if l.total(false) <= width {
			break
		}
		if c.wrap && !c.flex {
			l.widths[i] = max(ansi.StringWidth(c.header), l.longestWord(i), l.widths[i]-(l.total(false)-width))
		}
	}
	fixed := 0
	for i, c := range l.cols {
		if !c.flex {
			fixed += l.widths[i] + len(gap)
		}
	}
	for i, c := range l.cols {
		if c.flex {
			l.widths[i] = min(l.widths[i], max(width-fixed, l.flexWant(i, true)))
		}
	}
	return l
}

// measure sets each column's width to its header and widest cell: a
// flexible column's first alternative, another column's first or (when
// compact) last.
func (l *layout) measure() {
	l.widths = make([]int, len(l.cols))
	for i, c := range l.cols {
		l.widths[i] = ansi.StringWidth(c.header)
		for _, r := range l.rows {
			cell := pickAlt(r[i], l.compact[i] && !c.flex)
			if c.flex {
				cell, _, _ = strings.Cut(r[i], altSep)
				cell = strings.ReplaceAll(cell, keepSep, "")
			}
			l.widths[i] = max(l.widths[i], ansi.StringWidth(cell))
		}
	}
}

// total is the table's width with the flexible columns at the width they
// want (their cells' last alternatives whole) or, with least set, at
// their least (the kept heads).
func (l *layout) total(least bool) int {
	total := 0
	for i, c := range l.cols {
		w := l.widths[i]
		if c.flex {
			w = min(w, l.flexWant(i, least))
		}
		total += w + len(gap)
	}
	return total - len(gap)
}

// flexWant is the width a flexible column wants: its cells' last
// alternatives whole or, with least set, the heads they keep (keepSep);
// at most maxKeepWidth, and no less than minFlexWidth.
func (l *layout) flexWant(i int, least bool) int {
	w := minFlexWidth
	for _, r := range l.rows {
		alts := strings.Split(r[i], altSep)
		last := alts[len(alts)-1]
		head, tail, ok := strings.Cut(last, keepSep)
		switch {
		case !ok && least:
			continue
		case !least:
			head += tail
		}
		w = max(w, min(ansi.StringWidth(head), maxKeepWidth))
	}
	return w
}

func (l *layout) hasAlternatives(i int) bool {
	for _, r := range l.rows {
		if strings.Contains(r[i], altSep) {
			return true
		}
	}
	return false
}

// longestWord is the widest word of a column's cells as shown.
func (l *layout) longestWord(i int) int {
	w := 0
	for _, r := range l.rows {
		for _, word := range strings.Fields(pickAlt(r[i], l.compact[i])) {
			w = max(w, ansi.StringWidth(word))
		}
	}
	return w
}

// dropOptional leaves out the rightmost optional column; false when there
// is none.
func (l *layout) dropOptional() bool {
	drop := -1
	for i, c := range l.cols {
		if c.optional {
			drop = i
		}
	}
	if drop < 0 {
		return false
	}
	l.cols = append(l.cols[:drop:drop], l.cols[drop+1:]...)
	l.compact = append(l.compact[:drop:drop], l.compact[drop+1:]...)
	out := make([][]string, len(l.rows))
	for j, r := range l.rows {
		out[j] = append(r[:drop:drop], r[drop+1:]...)
	}
	l.rows = out
	return true
}

// pickAlt is a cell's first alternative, or its last when short is set.
func pickAlt(cell string, short bool) string {
	if !strings.Contains(cell, altSep) {
		return cell
	}
	alts := strings.Split(cell, altSep)
	if short {
		return alts[len(alts)-1]
	}
	return alts[0]
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
// set. A kept head (keepSep) stays whole as far as the width allows.
func fit(s string, width int, keepTail bool) string {
	alts := strings.Split(s, altSep)
	for i, a := range alts {
		if i == len(alts)-1 {
			break
		}
		if width <= 0 || ansi.StringWidth(a) <= width {
			return a
		}
	}
	s = alts[len(alts)-1]
	if strings.Contains(s, keepSep) {
		// The kept head leads with what matters (file:line): keep it.
		s, keepTail = strings.ReplaceAll(s, keepSep, ""), false
	}
	if len(alts) > 1 {
		// The short form leads with what matters: keep its head.
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
