// Package whatifdump_test dumps, for every fixture, a few labelled
// fixtures and every shared-corpus export, what the simulator estimates
// (estimate.Run, whole and sampled) and the plans the GPU replay would run
// (as recorded, without the profiler, without each site, without all of
// them), one text file per export, to compare a change of the what-if
// model before and after byte for byte (docs/estimator.md, "One model").
// It is a tool, not coverage: it runs only with WHATIF_DUMP set to the
// output directory.
package whatifdump_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/cuda"
	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/report"
	"github.com/nsyssync/nsyssync/trace"
)

var labelled = []string{
	"sync_event_wait.autograd", "sync_stream_prefetch.lean", "h2d_dataloader_no_pin.autograd",
	"d2h_item_rescale.backtrace", "dyn_moe_nonzero.default", "cf_gradscaler.autograd",
	"lib_hf_generate.lean", "sync_device_each_step.autograd",
}

func TestDump(t *testing.T) {
	out := os.Getenv("WHATIF_DUMP")
	if out == "" {
		t.Skip("set WHATIF_DUMP to a directory")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	fx, _ := filepath.Glob("../../fixtures/*.sqlite*")
	paths = append(paths, fx...)
	tmp := t.TempDir()
	for _, l := range labelled {
		paths = append(paths, fixturegz.Gunzip(t, "../../fixtures/labelled/"+l+".sqlite.gz", tmp))
	}
	corpus, _ := filepath.Glob("../../../shared/corpus/*.sqlite")
	paths = append(paths, corpus...)
	for _, p := range paths {
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(p), ".gz"), ".sqlite")
		t.Run(name, func(t *testing.T) { dumpOne(t, p, filepath.Join(out, name+".txt")) })
	}
}

func dumpOne(t *testing.T, path, out string) {
	ctx := context.Background()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	defer w.Flush()
	x, err := trace.Open(ctx, path)
	if err != nil {
		fmt.Fprintf(w, "open: %v\n", err)
		return
	}
	defer x.Close()
	tr, err := x.Load(ctx, trace.LoadOptions{})
	if err != nil {
		fmt.Fprintf(w, "load: %v\n", err)
		return
	}
	a := report.New(tr)
	for _, o := range []estimate.Options{{}, {MaxEvents: 20_000}} {
		res, err := estimate.Run(ctx, x, tr, a.Sites, o)
		if err != nil {
			fmt.Fprintf(w, "estimate: %v\n", err)
		} else {
			b, _ := json.MarshalIndent(res, "", " ")
			fmt.Fprintf(w, "estimate (max events %d):\n%s\n", o.MaxEvents, b)
		}
	}
	r := tr.Region
	tl, err := x.Timeline(ctx, trace.Interval{Start: r.Start, End: r.End + min(r.Duration, 2_000_000_000)})
	if err != nil {
		fmt.Fprintf(w, "timeline: %v\n", err)
		return
	}
	type variant struct {
		name string
		opt  cuda.PlanOptions
	}
	vs := []variant{{"base", cuda.PlanOptions{}}, {"overhead", cuda.PlanOptions{ProfilerOverheadNs: 3_700}}}
	var all []int
	for _, s := range a.Sites {
		vs = append(vs, variant{"site " + s.ID, cuda.PlanOptions{Remove: [][]int{s.Syncs}, ProfilerOverheadNs: 3_700}})
		all = append(all, s.Syncs...)
	}
	var groups [][]int
	for _, s := range a.Sites {
		groups = append(groups, s.Syncs)
	}
	vs = append(vs, variant{"all sites", cuda.PlanOptions{Remove: groups}},
		variant{"all sites kept host code", cuda.PlanOptions{Remove: groups, KeepHostCode: true}},
		variant{"one group", cuda.PlanOptions{Remove: [][]int{all}, ProfilerOverheadNs: 3_700}})
	for _, v := range vs {
		p, err := cuda.BuildPlan(tl, tr, v.opt)
		fmt.Fprintf(w, "plan %s:\n", v.name)
		if err != nil {
			fmt.Fprintf(w, "  error: %v\n", err)
			continue
		}
		dumpPlan(w, p)
	}
}

func dumpPlan(w *bufio.Writer, p *cuda.Plan) {
	fmt.Fprintf(w, "  streams %v events %d copy %d shapes %v recorded %d region %d dispatch %d removed %d counts %+v\n",
		p.Streams, p.Events, p.CopyBytes, p.Shapes, p.RecordedNs, p.RegionNs, p.DispatchGapNs, p.Removed, p.Counts)
	for k, iv := range p.Intervals {
		fmt.Fprintf(w, "  interval %d [%d,%d) rec %d anchor %d trailing %d pending %+v\n", k, iv.Start, iv.End, iv.RecordedNs, iv.Anchor, iv.TrailingNs, iv.Pending)
		for th, tp := range iv.Threads {
			fmt.Fprintf(w, "   thread %d tid %d\n", th, tp.GlobalTid)
			for _, a := range tp.Actions {
				fmt.Fprintf(w, "    %+v\n", a)
				for _, wk := range tp.Work[a.WorkLo:a.WorkHi] {
					fmt.Fprintf(w, "     work %+v\n", wk)
				}
				for _, e := range tp.EventOps[a.EventLo:a.EventHi] {
					fmt.Fprintf(w, "     event %+v\n", e)
				}
			}
		}
	}
}
