package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/internal/format"
	"github.com/nsyssync/nsyssync/internal/textsafe"
)

// MarkdownOptions tune the Markdown report.
type MarkdownOptions struct {
	// Top limits the sites listed; 0 lists all.
	Top int
	// Details is how many of the top sites get a collapsible section with
	// their evidence, fix and stacks; 0 means 5.
	Details int
	// GateLine, when set, adds the CI gate's decision (gate.Result's
	// line) to the summary.
	GateLine string
}

const defaultMarkdownDetails = 5

// WriteMarkdown writes a GitHub-flavoured Markdown report, ready to paste
// into an issue or to append to $GITHUB_STEP_SUMMARY: the summary, the
// sites table, and a <details> section per top site. Everything from the
// trace is escaped, so a symbol such as "vector<int>" shows as written.
func (a *Analysis) WriteMarkdown(w io.Writer, opt MarkdownOptions) error {
	var b strings.Builder
	t := a.Trace
	fmt.Fprintf(&b, "## nsyssync: %s\n\n", mdText(t.Path))
	b.WriteString("| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, v) }
	row("export", mdText(t.Schema.Version()))
	if g := a.GPUName(); g != "" {
		row("GPU", mdText(g))
	}
	row("program", mdText(a.programText()))
	row("region", mdText(a.RegionName())+", "+format.Duration(t.Region.Duration))
	blocked := t.BlockedNs()
	row("host syncs", fmt.Sprintf("%d at %s; host blocked %s (%s of the region)",
		len(t.Syncs), plural(len(a.Sites), "site", "sites"), format.Duration(blocked), format.Percent(blocked, t.Region.Duration)))
	row("estimated savings", mdText(a.totalSavingsText()))
	row("evidence", mdText(evidenceSummary(&t.Evidence, len(t.Syncs))))
	if g := opt.GateLine; g != "" {
		row("CI gate", mdText(g))
	}
	for _, warn := range t.Warnings {
		fmt.Fprintf(&b, "\n> [!WARNING]\n> %s\n", mdText(warn))
	}
	if len(t.Syncs) == 0 {
		b.WriteString("\nNo host syncs found.\n")
		return writeString(w, b.String())
	}

	sites := a.Ordered()
	b.WriteString("\n### Sites\n\n")
	b.WriteString("| site | dependency | category | count | blocked | mean | est. savings | location |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|---|\n")
	for i, s := range sites {
		if opt.Top > 0 && i >= opt.Top {
			break
		}
		dep := dependencyText(s)
		if s.Dependency == classify.DepFalse && !s.Likely() {
			dep = "**false**"
		}
		loc := mdText(siteLabel(s))
		if reason, ok := a.Allowed[s.ID]; ok {
			loc += " (allowed: " + mdText(reason) + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s | %s |\n", s.ID, dep, mdText(s.Category), len(s.Syncs),
			format.Duration(s.BlockedNs), format.Duration(meanNs(s)), a.savingsText(s), loc)
	}
	if legend := a.savingsLegend(); legend != "" {
		b.WriteString("\n" + legend + "\n")
	}
	if opt.Top > 0 && len(sites) > opt.Top {
		fmt.Fprintf(&b, "\n%s not shown.\n", plural(len(sites)-opt.Top, "more site", "more sites"))
	}

	n := opt.Details
	if n <= 0 {
		n = defaultMarkdownDetails
	}
	if opt.Top > 0 {
		n = min(n, opt.Top)
	}
	n = min(n, len(sites))
	if n > 0 {
		b.WriteString("\n### Top sites\n")
		for _, s := range sites[:n] {
			a.markdownSite(&b, s)
		}
	}
	return writeString(w, b.String())
}

// markdownSite writes one site's collapsible section.
func (a *Analysis) markdownSite(b *strings.Builder, s *classify.Site) {
	// The summary line is HTML: escape it as HTML, not as Markdown.
	fmt.Fprintf(b, "\n<details><summary><b>%s</b> · %s ×%d · blocked %s · dependency %s · %s</summary>\n\n",
		s.ID, mdHTML(strings.Join(s.APIs, "+")), len(s.Syncs), format.Duration(s.BlockedNs),
		mdHTML(dependencyText(s)), mdHTML(siteLabel(s)))
	if s.Location.File != "" || s.Location.Function != "" {
		fmt.Fprintf(b, "- **location**: %s\n", mdText(Where(s)))
	} else {
		fmt.Fprintf(b, "- **calls**: %s (no backtrace: grouped by API, stream and NVTX path)\n", mdText(s.Reason))
	}
	fmt.Fprintf(b, "- **fingerprint**: %s\n", classify.Fingerprint(s))
	fmt.Fprintf(b, "- **category**: %s", mdText(s.Category))
	if s.Confidence > 0 {
		fmt.Fprintf(b, " (confidence %.2f)", s.Confidence)
	}
	b.WriteString("\n")
	if len(s.NVTX) > 0 {
		fmt.Fprintf(b, "- **NVTX**: %s\n", mdText(nvtxText(s)))
	}
	if e := a.savingsText(s); e != "-" {
		fmt.Fprintf(b, "- **estimated savings**: %s\n", e)
	}
	if why := a.SavingsExplanation(s); why != "" {
		fmt.Fprintf(b, "- **savings explained**: %s\n", mdText(why))
	}
	if rw, ok := a.RewriteAssumed(s); ok {
		fmt.Fprintf(b, "- **rewrite assumed**: %s\n", mdText(rw.Assumes))
	}
	if reason, ok := a.Allowed[s.ID]; ok {
		fmt.Fprintf(b, "- **allowed**: %s\n", mdText(reason))
	}
	if len(s.Evidence) == 0 {
		b.WriteString("- **evidence**: none yet\n")
	} else {
		b.WriteString("- **evidence**:\n")
		for _, e := range s.Evidence {
			fmt.Fprintf(b, "  - %s\n", mdInline(e))
		}
	}
	if s.Fix != "" {
		fmt.Fprintf(b, "- **fix**: %s\n", mdInline(s.Fix))
	}
	if len(s.Location.Frames) > 0 {
		b.WriteString("\n" + fenced(s.Location.Frames))
	}
	b.WriteString("\n</details>\n")
}

// mdText is the display form of text from the trace in Markdown text and
// table cells (textsafe.Markdown): visible control characters, HTML's
// <, > and & as entities, Markdown's active characters escaped, no line
// break.
func mdText(s string) string { return textsafe.Display(s, textsafe.Markdown) }

// mdHTML is the display form of text from the trace in HTML written into
// the Markdown (a <details> summary).
func mdHTML(s string) string { return textsafe.Display(s, textsafe.MarkdownHTML) }

// fenced puts lines in a fenced code block, each in its display form
// (textsafe.MarkdownCode: shown literally, but with visible control
// characters and line breaks, so that one line stays one line), behind a
// fence longer than any run of backticks in them.
func fenced(lines []string) string {
	shown := make([]string, len(lines))
	for i, l := range lines {
		shown[i] = textsafe.Display(l, textsafe.MarkdownCode)
	}
	text := strings.Join(shown, "\n")
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "\n" + text + "\n" + fence + "\n"
}

func writeString(w io.Writer, s string) error {
	if _, err := io.WriteString(w, s); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// span is a piece of classifier text: plain, or code (written between
// backticks).
type span struct {
	Text string
	Code bool
}

// codeSpans splits text at backticks into plain and code pieces; text
// with unbalanced backticks is one plain piece.
func codeSpans(text string) []span {
	parts := strings.Split(text, "`")
	if len(parts)%2 == 0 {
		return []span{{Text: text}}
	}
	var out []span
	for i, p := range parts {
		if p != "" {
			out = append(out, span{Text: p, Code: i%2 == 1})
		}
	}
	return out
}

// mdInline escapes classifier text for Markdown, keeping its code spans
// as code spans (whose content GitHub shows literally, tags included).
// Each piece is shortened on its own, so that a cut never unbalances the
// backticks.
func mdInline(text string) string {
	var b strings.Builder
	for _, s := range codeSpans(text) {
		if s.Code {
			b.WriteString("`" + textsafe.Display(s.Text, textsafe.MarkdownCode) + "`")
			continue
		}
		b.WriteString(mdText(s.Text))
	}
	return b.String()
}
