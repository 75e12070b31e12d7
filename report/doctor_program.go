package report

import (
	"strings"

	"github.com/nsyssync/nsyssync/program"
)

// capture is what the doctor's advice depends on: the program's language
// and framework, and the trace tables nsys would add for it.
type capture struct {
	python bool // the program runs under CPython
	torch  bool // PyTorch words apply (--pytorch=autograd-nvtx, torch.cuda.nvtx.range)
	// traces are the nsys -t values the program needs beyond cuda,nvtx
	// (openacc, openmp, mpi).
	traces []string
	// annotate says how the program's phases are named in NVTX.
	annotate string
}

// captureFor reads the capture advice of a program.
func captureFor(p program.Program, pythonSeen, torchFrames bool) capture {
	c := capture{python: pythonSeen || p.IsPython()}
	c.torch = p.Framework == program.PyTorch && c.python || p.Framework == program.Unknown && torchFrames
	for _, f := range []program.Framework{program.OpenACC, program.OpenMP, program.MPI} {
		if p.Uses(f) {
			c.traces = append(c.traces, string(f))
		}
	}
	switch {
	case c.torch:
		c.annotate = "torch.cuda.nvtx.range"
	case p.Framework == program.JAX:
		c.annotate = "jax.profiler.TraceAnnotation"
	case p.Framework == program.CuPy:
		c.annotate = "cupyx.profiler.time_range"
	case c.python:
		c.annotate = "nvtx.annotate of the nvtx package"
	default:
		c.annotate = "nvtxRangePushA/nvtxRangePop of the NVTX C API"
	}
	return c
}

// traceChecks adds a check per programming model whose nsys trace the
// program uses: without it, syncs cannot be tied to a directive or call.
func (d *Diagnosis) traceChecks(p program.Program) {
	what := map[program.Framework]string{
		program.OpenACC: "the OpenACC directive (construct, file and line) behind each sync is unknown: add -t openacc",
		program.OpenMP:  "the OpenMP target region behind each sync is unknown: add -t openmp",
		program.MPI:     "MPI calls are not traced, so waits cannot be set against communication: add -t mpi",
	}
	for _, f := range []program.Framework{program.OpenACC, program.OpenMP, program.MPI} {
		if !p.Uses(f) {
			continue
		}
		c := Check{Name: strings.TrimSuffix(f.Name(), " + CUDA") + " trace", Status: statusYes, Detail: "nsys -t " + string(f) + " tables hold rows"}
		if !p.IsTraced(f) {
			c.Status, c.Impact, c.remedy = statusNo, what[f], remedyProfile
		}
		d.Checks = append(d.Checks, c)
	}
}

// profileCommand is the nsys profile command line for a capture.
func profileCommand(c capture, name string) string {
	traces := append([]string{"cuda", "nvtx"}, c.traces...)
	cmd := "nsys profile -t " + strings.Join(traces, ",") + " --cudabacktrace=all:1000 -s cpu --cpuctxsw=none"
	program := "./your_program"
	if c.python {
		cmd += profilePython
		program = "python3 your_program.py"
	}
	if c.torch {
		cmd += profileAutograd
	}
	return cmd + " -o " + name + " " + program
}
