package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/nsyssync/nsyssync/internal/format"
	"github.com/nsyssync/nsyssync/internal/textsafe"
)

// maxDoctorRanges is how many NVTX range names the doctor lists.
const maxDoctorRanges = 30

// maxDoctorAten is how many aten:: ranges the doctor names.
const maxDoctorAten = 8

// WriteText prints the diagnosis for a terminal (see TextOptions for
// Color and Width; Top is not used).
func (d *Diagnosis) WriteText(w io.Writer, opt TextOptions) error {
	st := newStyles(w, opt.Color)
	var b strings.Builder
	kv := func(k, v string) {
		b.WriteString(st.key.Render(fmt.Sprintf("%-9s", k)) + v + "\n")
	}
	kv("export", termText(d.Path))
	if d.NsysVersion != "" || d.SchemaVersion != "" {
		kv("made by", termText(strings.TrimSpace("nsys "+d.NsysVersion+" schema "+d.SchemaVersion)))
	}
	if d.Problem != "" {
		kv("problem", st.warn.Render(termText(d.Problem)))
	} else {
		kv("syncs", plural(d.Syncs, "host sync", "host syncs")+" at "+plural(d.Sites, "site", "sites"))
	}

	b.WriteString("\n" + st.section.Render("EVIDENCE") + "\n")
	var rows [][]string
	for _, c := range d.Checks {
		mark := map[string]string{statusYes: "✓", statusNo: "✗", statusPartial: "!"}[c.Status]
		text := c.Detail
		if c.Impact != "" {
			text = c.Impact
		}
		rows = append(rows, []string{mark, c.Name, termText(text)})
	}
	markStyle := func(m string) lipgloss.Style {
		switch m {
		case "✓":
			return st.trueDep
		case "✗":
			return st.falseDep
		}
		return st.warn
	}
	renderTable(&b, st, []column{{header: "", style: markStyle}, {header: "WHAT"}, {header: "DETAIL", flex: true, wrap: true}}, rows, opt.Width)

	if d.Analysable {
		b.WriteString("\n" + st.section.Render("NVTX RANGES AROUND SYNCS") + st.dim.Render("  (analyse one with --nvtx NAME or NAME@DOMAIN)") + "\n")
		if len(d.Ranges) == 0 && len(d.AtenRanges) == 0 {
			b.WriteString("none: no NVTX range encloses a sync\n")
		}
		if len(d.Ranges) > 0 {
			rows = rows[:0]
			for i, r := range d.Ranges {
				if i >= maxDoctorRanges {
					break
				}
				rows = append(rows, []string{termText(r.Name), termText(r.Domain), itoa(r.Occurrences), format.Duration(r.TotalNs), itoa(r.Syncs)})
			}
			renderTable(&b, st, []column{{header: "NAME", flex: true}, {header: "DOMAIN"}, {header: "OCCURRENCES"}, {header: "TIME"}, {header: "SYNCS"}}, rows, opt.Width)
			if len(d.Ranges) > maxDoctorRanges {
				b.WriteString(st.dim.Render(fmt.Sprintf("… %d more (--format json lists all)", len(d.Ranges)-maxDoctorRanges)) + "\n")
			}
		}
		if n := len(d.AtenRanges); n > 0 {
			var names []string
			for i, r := range d.AtenRanges {
				if i >= maxDoctorAten {
					names = append(names, "…")
					break
				}
				names = append(names, fmt.Sprintf("%s ×%d", r.Name, r.Syncs))
			}
			b.WriteString(wrapIndent(fmt.Sprintf("autograd ranges around syncs: %s (%s)", plural(n, "op", "ops"), termText(strings.Join(names, ", "))), opt.Width, "") + "\n")
		}
	}

	b.WriteString("\n" + st.section.Render("FOR BETTER EVIDENCE") + "\n")
	switch {
	case d.Profile != "":
		if d.capture.python {
			b.WriteString("Profile again, then export with the Python payload:\n\n")
		} else {
			b.WriteString("Profile again, then export:\n\n")
		}
		b.WriteString("  " + textsafe.Escape(d.Profile, textsafe.Terminal) + "\n  " + textsafe.Escape(d.Export, textsafe.Terminal) + "\n")
		b.WriteString("\n")
		notes := []string{"Backtraces need CPU sampling (-s cpu), which needs perf_event access",
			"(kernel.perf_event_paranoid 2 or lower)."}
		if d.capture.torch {
			notes = []string{notes[0], notes[1] + " --pytorch=autograd-nvtx adds",
				"host overhead: drop it when timing matters more than op names."}
		}
		if d.capture.python {
			notes = append(notes, "Where CPU sampling is not allowed, --python-sampling=true works with -s none",
				"and gives the line of each sync that waits longer than its period (1 ms).")
		}
		for _, line := range notes {
			b.WriteString(st.dim.Render(line) + "\n")
		}
	case d.ReexportOnly:
		b.WriteString("Export the same report again (no need to profile again):\n\n  " + textsafe.Escape(d.Export, textsafe.Terminal) + "\n")
	default:
		b.WriteString("This export carries every kind of evidence nsyssync reads.\n")
	}
	return writeString(w, b.String())
}

// WriteJSON writes the diagnosis as indented JSON.
func (d *Diagnosis) WriteJSON(w io.Writer) error {
	// Names from the export are bounded (textsafe.Bound), as in the report.
	out := *d
	out.Path, out.Problem = textsafe.Bound(d.Path), textsafe.Bound(d.Problem)
	out.GPUs = bounded(d.GPUs)
	out.Ranges, out.AtenRanges = boundedRanges(d.Ranges), boundedRanges(d.AtenRanges)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&out); err != nil {
		return fmt.Errorf("writing the diagnosis: %w", err)
	}
	return nil
}

// boundedRanges is the ranges with their names bounded.
func boundedRanges(ranges []RangeSummary) []RangeSummary {
	if ranges == nil {
		return nil
	}
	out := make([]RangeSummary, len(ranges))
	for i, r := range ranges {
		r.Name, r.Domain = textsafe.Bound(r.Name), textsafe.Bound(r.Domain)
		out[i] = r
	}
	return out
}
