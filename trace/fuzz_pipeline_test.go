package trace_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/gate"
	"github.com/nsyssync/nsyssync/report"
	"github.com/nsyssync/nsyssync/trace"
)

// The fuzz targets of this package feed bad exports through the whole path
// of 'nsyssync analyze' and 'nsyssync doctor': open, load, classify,
// estimate and every renderer. The property: no panic, no hang, bounded
// memory, and either a report or one error line that names the file.

const (
	// fuzzDeadline bounds one analysis through its context: every reader
	// must notice it.
	fuzzDeadline = 20 * time.Second
	// fuzzHang is when the watchdog gives up on an analysis that ignores
	// its context and crashes the process, so that the fuzzer keeps the
	// input.
	fuzzHang = 60 * time.Second
	// fuzzAllocLimit bounds the bytes one analysis of a small export may
	// allocate: a size read from the file must never size a buffer.
	fuzzAllocLimit = 1 << 30
)

// pipelineOutcome is what an analysis of a fuzzed export produced.
type pipelineOutcome struct {
	loaded bool // Open and Load succeeded
	syncs  int
}

// analysePipeline runs an export through what the analyze and doctor
// commands do and checks the properties every input must keep.
func analysePipeline(t *testing.T, path string, nvtx string) pipelineOutcome {
	t.Helper()
	watchdog := time.AfterFunc(fuzzHang, func() {
		panic(fmt.Sprintf("analysing %s took more than %v: a reader ignores its context or loops", path, fuzzHang))
	})
	defer watchdog.Stop()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	ctx, cancel := context.WithTimeout(context.Background(), fuzzDeadline)
	defer cancel()
	out, err := runPipeline(ctx, path, nvtx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("analysis did not finish in %v: %v", fuzzDeadline, err)
		}
		checkErrorLine(t, path, err)
		// Once the export loaded, only a bad value read later (a corrupt
		// page, a wrong type in the timeline) may stop the analysis.
		var ie *trace.InputError
		if out.loaded && !errors.As(err, &ie) {
			t.Errorf("the export loaded, then the analysis failed: %v", err)
		}
	}

	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > fuzzAllocLimit {
		t.Fatalf("analysing a %s allocated %d MiB", path, alloc>>20)
	}
	return out
}

// checkErrorLine checks that an error is one line naming the file.
func checkErrorLine(t *testing.T, path string, err error) {
	t.Helper()
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") {
		t.Errorf("error spans several lines: %q", msg)
	}
	if !strings.Contains(msg, path) {
		t.Errorf("error does not name the file %s: %q", path, msg)
	}
	var ie *trace.InputError
	if errors.As(err, &ie) && !strings.HasPrefix(msg, path+": ") && !strings.Contains(msg, ": "+path+": ") {
		t.Errorf("input error does not begin with the file: %q", msg)
	}
}

// runPipeline is analyze's path (cmd/nsyssync analyzeOne) with every
// format rendered, then doctor's.
func runPipeline(ctx context.Context, path, nvtx string) (pipelineOutcome, error) {
	var out pipelineOutcome
	x, err := trace.Open(ctx, path)
	if err != nil {
		return out, err
	}
	defer x.Close()
	tr, err := x.Load(ctx, trace.LoadOptions{NVTX: nvtx})
	if err != nil {
		return out, err
	}
	out.loaded, out.syncs = true, len(tr.Syncs)
	a := report.NewWith(tr, classify.Options{})
	if len(tr.Syncs) > 0 && tr.Region.Duration > 0 {
		res, err := estimate.Run(ctx, x, tr, a.Sites, estimate.Options{})
		if err != nil {
			return out, err
		}
		a.Estimates = report.FromEstimate(res)
	}
	gateLine := gate.Decide(a, 5, gate.Options{}).String()
	renders := []struct {
		format string
		write  func(w io.Writer) error
	}{
		{"json", a.WriteJSON},
		{"text", func(w io.Writer) error { return a.WriteText(w, report.TextOptions{Width: 80}) }},
		{"markdown", func(w io.Writer) error { return a.WriteMarkdown(w, report.MarkdownOptions{GateLine: gateLine}) }},
		{"html", func(w io.Writer) error {
			return a.WriteHTML(ctx, w, report.HTMLOptions{Top: 5, Timelines: x, GateLine: gateLine})
		}},
		{"perfetto", func(w io.Writer) error { return a.WritePerfetto(ctx, w, x) }},
	}
	for _, r := range renders {
		if err := r.write(io.Discard); err != nil {
			return out, fmt.Errorf("%s: rendering %s: %w", path, r.format, err)
		}
	}
	d := report.Diagnose(report.New(tr))
	if err := d.WriteText(io.Discard, report.TextOptions{Width: 80}); err != nil {
		return out, fmt.Errorf("%s: doctor text: %w", path, err)
	}
	if err := d.WriteJSON(io.Discard); err != nil {
		return out, fmt.Errorf("%s: doctor json: %w", path, err)
	}
	return out, nil
}
