// Package program tells what kind of program an export profiled — its
// framework or programming model (PyTorch, JAX/XLA, CuPy, TensorRT,
// RAPIDS, OpenACC, OpenMP offload, MPI, plain CUDA) and its language —
// from what the export holds: kernel and library names, the NVTX domains,
// the OpenACC, OpenMP and MPI trace tables, process names, Python and
// native frames. Reports name it, and the classifier and the doctor phrase
// their advice in its words.
package program

import "strings"

// Framework is the library or programming model the program is written
// against.
type Framework string

// Frameworks, the most specific first (Detect picks the first that has
// evidence).
const (
	PyTorch  Framework = "pytorch"
	JAX      Framework = "jax"
	TensorRT Framework = "tensorrt"
	RAPIDS   Framework = "rapids"
	CuPy     Framework = "cupy"
	OpenACC  Framework = "openacc"
	OpenMP   Framework = "openmp"
	MPI      Framework = "mpi"
	// QUDA, the lattice-QCD library: a library a program calls (from
	// C/C++ or through Python bindings) more often than its framework.
	QUDA    Framework = "quda"
	CUDA    Framework = "cuda"
	Unknown Framework = "unknown"
)

// Languages.
const (
	Python = "Python"
	CPP    = "C/C++"
	// Native is a compiled language the export does not tell apart (an
	// OpenACC or OpenMP program may be C, C++ or Fortran).
	Native          = "C/C++/Fortran"
	UnknownLanguage = "unknown"
)

// Program is what Detect found.
type Program struct {
	Framework Framework `json:"framework"`
	Language  string    `json:"language"`
	// Also lists the other models the program uses besides its framework
	// (MPI with OpenACC, NCCL with JAX, …), in Framework order.
	Also []Framework `json:"also,omitempty"`
	// Traced lists the models whose nsys trace tables hold rows
	// (openacc, openmp, mpi): the doctor asks for the others.
	Traced []Framework `json:"traced,omitempty"`
	// Evidence says what decided, strongest first ("kernels at::native::…",
	// "OpenACC trace tables", "process python3").
	Evidence []string `json:"evidence"`
}

// Name is the framework in a report's words.
func (f Framework) Name() string {
	switch f {
	case PyTorch:
		return "PyTorch"
	case JAX:
		return "JAX/XLA"
	case TensorRT:
		return "TensorRT"
	case RAPIDS:
		return "RAPIDS (cuDF)"
	case CuPy:
		return "CuPy"
	case OpenACC:
		return "OpenACC"
	case OpenMP:
		return "OpenMP offload"
	case MPI:
		return "MPI + CUDA"
	case QUDA:
		return "QUDA"
	case CUDA:
		return "CUDA"
	}
	return "unknown framework"
}

// Uses reports whether the program uses f, as its framework or beside it.
func (p Program) Uses(f Framework) bool {
	if p.Framework == f {
		return true
	}
	for _, a := range p.Also {
		if a == f {
			return true
		}
	}
	return false
}

// IsTraced reports whether the export holds f's trace tables with rows.
func (p Program) IsTraced(f Framework) bool {
	for _, a := range p.Traced {
		if a == f {
			return true
		}
	}
	return false
}

// IsPython reports whether the program runs under CPython.
func (p Program) IsPython() bool { return p.Language == Python }

// Summary is the program in a few words for a report's header:
// "OpenACC (C/C++/Fortran) + MPI".
func (p Program) Summary() string {
	var b strings.Builder
	b.WriteString(p.Framework.Name())
	if p.Language != "" && p.Language != UnknownLanguage {
		b.WriteString(" (" + p.Language + ")")
	}
	for _, a := range p.Also {
		b.WriteString(" + " + strings.TrimSuffix(a.Name(), " + CUDA"))
	}
	return b.String()
}

// Why is the evidence in one line.
func (p Program) Why() string { return strings.Join(p.Evidence, "; ") }
