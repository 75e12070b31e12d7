package triage

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/nsyssync/nsyssync/analysis"
	"github.com/nsyssync/nsyssync/contract"
)

// Options choose how Batch analyses each input.
type Options struct {
	// Jobs is how many inputs are analysed at once; 0 or less: the
	// number of CPUs.
	Jobs int
	// Analysis is how every input is analysed (package analysis: NVTX
	// range, sources, estimator).
	Analysis analysis.Options
	// Converter exports .nsys-rep inputs; nil: NewConverter().
	Converter *Converter
	// KeepSyncs keeps Document.Syncs (for JSON Lines); without it they
	// are never built, and only the head (trace, totals, sites) stays in
	// memory.
	KeepSyncs bool
}

// Result is the outcome of one input: its document, or why it has none.
type Result struct {
	// Path is the input as given (the .nsys-rep for a converted report).
	Path string
	// Doc is the nsyssync/v1 document; nil when Err is set. Its
	// Trace.Path is Path.
	Doc *contract.Document
	Err error
	// Elapsed is the time the input took, conversion included.
	Elapsed time.Duration
}

// Batch analyses the inputs, opt.Jobs at a time, and hands every Result to
// emit in input order, from the calling goroutine. A failed input is a
// Result with Err set; the others go on. Batch returns the context's error
// when it is cancelled (the inputs not yet emitted are dropped), or emit's
// first error.
func Batch(ctx context.Context, inputs []Input, opt Options, emit func(Result) error) error {
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	if opt.Converter == nil {
		opt.Converter = NewConverter()
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	// Cancel first, so that the feeder and the workers stop, then wait
	// for them: no goroutine outlives Batch, whichever way it returns.
	defer func() {
		cancel()
		wg.Wait()
	}()

	results := make([]chan Result, len(inputs))
	for i := range results {
		results[i] = make(chan Result, 1)
	}
	// window bounds the results done but not yet emitted, so that a slow
	// input early in the list does not make the others pile up in memory.
	window := make(chan struct{}, 4*jobs)
	next := make(chan int)
	for range min(jobs, len(inputs)) {
		wg.Go(func() {
			for i := range next {
				results[i] <- analyse(ctx, inputs[i], opt)
			}
		})
	}
	wg.Go(func() {
		defer close(next)
		for i := range inputs {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	})
	for i := range inputs {
		var r Result
		select {
		case r = <-results[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(r); err != nil {
			return err
		}
		<-window
	}
	return nil
}

// analyse reads one input into its document. A panic in the readers is
// that input's failure, not the batch's end.
func analyse(ctx context.Context, in Input, opt Options) (r Result) {
	start := time.Now()
	r.Path = in.Path
	defer func() {
		if p := recover(); p != nil {
			r.Doc, r.Err = nil, fmt.Errorf("%s: internal error while analysing: %v", in.Path, p)
		}
		r.Elapsed = time.Since(start)
	}()
	if in.Problem != nil {
		r.Err = in.Problem
		return r
	}
	if err := ctx.Err(); err != nil {
		r.Err = fmt.Errorf("%s: %w", in.Path, err)
		return r
	}
	path := in.Path
	if IsReport(path) {
		exported, cleanup, err := opt.Converter.Export(ctx, path)
		if err != nil {
			r.Err = err
			return r
		}
		defer cleanup()
		path = exported
	}
	doc, err := document(ctx, path, opt)
	if err != nil {
		if path != in.Path {
			err = fmt.Errorf("%s (exported to SQLite): %w", in.Path, err)
		}
		r.Err = err
		return r
	}
	doc.Trace.Path = in.Path
	r.Doc = doc
	return r
}

// document analyses one SQLite export into its document. The errors of
// package analysis already name the file.
func document(ctx context.Context, path string, opt Options) (*contract.Document, error) {
	an, err := analysis.Analyze(ctx, path, opt.Analysis)
	if err != nil {
		return nil, err
	}
	defer an.Close()
	if !opt.KeepSyncs {
		doc := an.Report.HeadDocument()
		doc.Syncs = nil
		return &doc, nil
	}
	doc := an.Report.BuildDocument()
	return &doc, nil
}
