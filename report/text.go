package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
)

// TextOptions tune the plain report.
type TextOptions struct {
	// Top limits the sites and syncs listed; 0 lists all.
	Top int
}

// WriteText prints the summary, the sites and the longest syncs as plain
// aligned tables.
func (a *Analysis) WriteText(w io.Writer, opt TextOptions) error {
	t := a.Trace
	fmt.Fprintf(w, "trace   %s\n", t.Path)
	fmt.Fprintf(w, "export  %s\n", t.Schema.Version())
	if g := a.GPUName(); g != "" {
		fmt.Fprintf(w, "gpu     %s\n", g)
	}
	region := "whole trace"
	if t.Region.Name != "" {
		region = fmt.Sprintf("NVTX %q", t.Region.Name)
		if len(t.Region.Intervals) > 1 {
			region += fmt.Sprintf(" (%d occurrences)", len(t.Region.Intervals))
		}
	}
	fmt.Fprintf(w, "region  %s, %s\n", region, Duration(t.Region.Duration))
	blocked := t.BlockedNs()
	fmt.Fprintf(w, "syncs   %d host syncs at %d sites, host blocked %s (%s of the region)\n",
		len(t.Syncs), len(a.Sites), Duration(blocked), percent(blocked, t.Region.Duration))
	for _, warn := range t.Warnings {
		fmt.Fprintf(w, "warning %s\n", warn)
	}
	if len(t.Syncs) == 0 {
		_, err := fmt.Fprintln(w, "\nNo host syncs found.")
		return err
	}

	fmt.Fprintln(w, "\nSITES")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCOUNT\tBLOCKED\tMEAN\tDEPENDENCY\tCATEGORY\tAPIS\tLOCATION")
	for i, s := range a.Sites {
		if opt.Top > 0 && i >= opt.Top {
			break
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, len(s.Syncs), Duration(s.BlockedNs),
			Duration(s.BlockedNs/int64(len(s.Syncs))), s.Dependency, s.Category, strings.Join(s.APIs, "+"), Where(&s))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if opt.Top > 0 && len(a.Sites) > opt.Top {
		fmt.Fprintf(w, "… %d more sites\n", len(a.Sites)-opt.Top)
	}

	fmt.Fprintln(w, "\nLONGEST SYNCS")
	order := make([]int, len(t.Syncs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return t.Syncs[order[x]].Duration() > t.Syncs[order[y]].Duration() })
	limit := 20
	if opt.Top > 0 {
		limit = opt.Top
	}
	site := a.siteOf()
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SYNC\tSITE\tTHREAD\tAT\tBLOCKED\tWAITED FOR\tGPU IDLE AFTER\tWHAT")
	for n, i := range order {
		if n >= limit {
			break
		}
		s := &t.Syncs[i]
		fmt.Fprintf(tw, "e%d\t%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\n", i+1, site[i], trace.PidOf(s.GlobalTid), trace.TidOf(s.GlobalTid),
			Duration(s.Start-t.Region.Start), Duration(s.Duration()), waited(s), idleAfter(s), What(s))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(order) > limit {
		_, err := fmt.Fprintf(w, "… %d more syncs (--top N, or --format json for all)\n", len(order)-limit)
		return err
	}
	return nil
}

// Where names a site's location in one short line.
func Where(s *classify.Site) string {
	switch {
	case s.Location.File != "":
		return fmt.Sprintf("%s:%d %s", shortPath(s.Location.File), s.Location.Line, s.Location.Function)
	case s.Location.Function != "":
		return s.Location.Function
	case len(s.NVTX) > 0:
		return "nvtx " + strings.Join(s.NVTX, " > ")
	}
	return s.Reason
}

// What describes a sync in a few words.
func What(s *trace.Sync) string {
	var parts []string
	parts = append(parts, strings.Join(s.APIs(), "+"))
	switch {
	case s.Scope == trace.ScopeContext:
		parts = append(parts, "all streams")
	case s.Legacy:
		parts = append(parts, fmt.Sprintf("legacy stream %d", s.Stream))
	case s.Stream >= 0:
		parts = append(parts, fmt.Sprintf("stream %d", s.Stream))
	}
	if c := s.Copy; c != nil && c.FromActivity {
		parts = append(parts, fmt.Sprintf("%s %s→%s %dB", DirectionName(c), MemName(c.SrcKind), MemName(c.DstKind), c.Bytes))
	}
	return strings.Join(parts, ", ")
}

func waited(s *trace.Sync) string {
	if s.Waited.Ops == 0 {
		return "nothing"
	}
	return fmt.Sprintf("%d ops, %s", s.Waited.Ops, Duration(s.Waited.BusyNs))
}

func idleAfter(s *trace.Sync) string {
	switch {
	case s.Gap.DeviceBusy:
		return "busy"
	case s.Gap.IdleAfterNs < 0:
		return "end"
	}
	return Duration(s.Gap.IdleAfterNs)
}

func percent(part, whole int64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

func shortPath(p string) string {
	if i := strings.LastIndex(p, "/site-packages/"); i >= 0 {
		return p[i+len("/site-packages/"):]
	}
	if parts := strings.Split(p, "/"); len(parts) > 3 {
		return ".../" + strings.Join(parts[len(parts)-2:], "/")
	}
	return p
}
