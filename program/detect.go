package program

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// order is Framework's order of precedence: the first with evidence is
// the program's framework, the others it uses beside it.
var order = []Framework{PyTorch, JAX, TensorRT, RAPIDS, CuPy, OpenACC, OpenMP, MPI, QUDA}

// marker is a name that only one framework puts in an export.
type marker struct {
	fw   Framework
	sub  string         // a substring of a string, module or file …
	re   *regexp.Regexp // … or a whole kernel name
	what string         // what it is, for the evidence
}

// stringMarkers are found in the export's strings (kernel, symbol,
// library, NVTX and thread names).
var stringMarkers = []marker{
	{fw: PyTorch, sub: "at::native::", what: "kernels at::native::…"},
	{fw: PyTorch, sub: "at::cuda::", what: "symbols at::cuda::…"},
	{fw: PyTorch, sub: "c10::cuda::", what: "symbols c10::cuda::…"},
	{fw: PyTorch, sub: "libtorch", what: "library libtorch"},
	{fw: PyTorch, sub: "nvfuser_", what: "nvFuser kernels nvfuser_…"},
	{fw: JAX, sub: "jax::", what: "kernels jax::…"},
	{fw: JAX, sub: "xla::", what: "symbols xla::…"},
	{fw: JAX, sub: "jaxlib", what: "library jaxlib"},
	{fw: JAX, sub: "xla_extension", what: "library xla_extension"},
	{fw: JAX, sub: "XlaModule:", what: "NVTX ranges XlaModule:… (XLA)"},
	{fw: JAX, sub: "XlaCompile:", what: "NVTX ranges XlaCompile:… (XLA)"},
	{fw: TensorRT, sub: "nvinfer", what: "library nvinfer (TensorRT)"},
	{fw: TensorRT, sub: "tensorrt", what: "TensorRT names"},
	{fw: RAPIDS, sub: "cudf::", what: "kernels cudf::…"},
	{fw: RAPIDS, sub: "libcudf", what: "library libcudf"},
	{fw: RAPIDS, sub: "rmm::", what: "symbols rmm::…"},
	{fw: CuPy, sub: "cupy_", what: "kernels cupy_…"},
	{fw: CuPy, sub: "cupy/", what: "files cupy/…"},
	{fw: OpenACC, sub: "__pgi_uacc_", what: "NVHPC OpenACC runtime kernels __pgi_uacc_…"},
	{fw: OpenACC, re: regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*_[0-9]+_gpu(__red)?$`), what: "NVHPC OpenACC kernels FUNC_LINE_gpu"},
	{fw: OpenMP, re: regexp.MustCompile(`^nvkernel_[A-Za-z0-9_]+_F[0-9]+L[0-9]+_[0-9]+$`), what: "NVHPC OpenMP target kernels nvkernel_…"},
	{fw: OpenMP, sub: "__omp_offloading_", what: "OpenMP target kernels __omp_offloading_…"},
	{fw: OpenMP, sub: "libomptarget", what: "library libomptarget"},
	// Not "libmpi": libtorch links it for torch.distributed, and a
	// library list names it without the program calling MPI.
	{fw: MPI, sub: "MPI_Init", what: "MPI_Init"},
	// QUDA's kernels and functions live in namespace quda: mangled
	// (_ZN4quda…) where the export has no demangled names.
	{fw: QUDA, sub: "_ZN4quda", what: "kernels quda::… (mangled _ZN4quda…)"},
	{fw: QUDA, sub: "quda::", what: "kernels quda::…"},
	{fw: QUDA, sub: "libquda", what: "library libquda"},
}

// domainMarkers are NVTX domains (exact names).
var domainMarkers = map[string]Framework{
	"TensorRT": TensorRT, "libcudf": RAPIDS, "cudf_python": RAPIDS, "cuml": RAPIDS,
	"MPI": MPI, "JAX": JAX, "XLA": JAX,
}

// tableMarkers are the nsys trace tables of a programming model.
var tableMarkers = []struct {
	prefix string
	fw     Framework
	what   string
}{
	{"CUPTI_ACTIVITY_KIND_OPENACC_", OpenACC, "OpenACC trace tables (-t openacc)"},
	{"CUPTI_ACTIVITY_KIND_OPENMP", OpenMP, "OpenMP trace tables (-t openmp)"},
	{"OPENMP_EVENT_KIND_", OpenMP, "OpenMP trace tables (-t openmp)"},
	{"MPI_", MPI, "MPI trace tables (-t mpi)"},
}

// frameMarkers are found in Python frames' files and native frames'
// modules and symbols.
var frameMarkers = []marker{
	{fw: PyTorch, sub: "torch/", what: "Python frames in torch/"},
	{fw: PyTorch, sub: "libtorch", what: "native frames in libtorch"},
	{fw: PyTorch, sub: "THPVariable_", what: "native frames THPVariable_…"},
	{fw: JAX, sub: "jax/", what: "Python frames in jax/"},
	{fw: JAX, sub: "jaxlib", what: "frames in jaxlib"},
	{fw: TensorRT, sub: "tensorrt", what: "frames in tensorrt"},
	{fw: TensorRT, sub: "libnvinfer", what: "native frames in libnvinfer"},
	{fw: RAPIDS, sub: "cudf/", what: "Python frames in cudf/"},
	{fw: RAPIDS, sub: "libcudf", what: "native frames in libcudf"},
	{fw: CuPy, sub: "cupy/", what: "frames in cupy/"},
	{fw: CuPy, sub: "cupy_backends/", what: "frames in cupy_backends/"},
	{fw: OpenACC, sub: "libacc", what: "native frames in the OpenACC runtime (libacc…)"},
	{fw: OpenMP, sub: "libomptarget", what: "native frames in libomptarget"},
	{fw: MPI, sub: "libmpi", what: "native frames in libmpi"},
	{fw: QUDA, sub: "libquda", what: "native frames in libquda"},
}

// maxFrameSyncs bounds how many syncs' frames Detect reads.
const maxFrameSyncs = 5000

// maxEvidencePer is how many facts of each framework the evidence keeps.
const maxEvidencePer = 2

// Detect tells what program the trace profiled, from t.Hints, its
// processes and threads and the frames of its first syncs.
func Detect(t *trace.Trace) Program {
	found := map[Framework][]string{}
	note := func(fw Framework, what string) {
		if !slices.Contains(found[fw], what) {
			found[fw] = append(found[fw], what)
		}
	}
	var traced []Framework
	for _, name := range t.Hints.Tables {
		for _, m := range tableMarkers {
			if strings.HasPrefix(name, m.prefix) {
				note(m.fw, m.what)
				if !slices.Contains(traced, m.fw) {
					traced = append(traced, m.fw)
				}
			}
		}
	}
	for _, d := range t.Hints.Domains {
		if fw, ok := domainMarkers[d]; ok {
			note(fw, fmt.Sprintf("NVTX domain %q", d))
		}
	}
	for _, s := range t.Hints.Strings {
		for i := range stringMarkers {
			if m := &stringMarkers[i]; m.matches(s) {
				note(m.fw, m.what)
			}
		}
	}
	python, pyWhy := pythonEvidence(t)
	for i := range t.Syncs {
		if i >= maxFrameSyncs {
			break
		}
		s := &t.Syncs[i]
		for _, f := range s.Python() {
			for j := range frameMarkers {
				if m := &frameMarkers[j]; m.matches(f.File) {
					note(m.fw, m.what)
				}
			}
		}
		for _, f := range s.Native() {
			for j := range frameMarkers {
				if m := &frameMarkers[j]; m.matches(f.Module) || m.matches(f.Symbol) {
					note(m.fw, m.what)
				}
			}
		}
	}
	p := Program{Framework: Unknown, Language: UnknownLanguage, Traced: sortFrameworks(traced)}
	for _, fw := range order {
		if len(found[fw]) == 0 {
			continue
		}
		if p.Framework == Unknown {
			p.Framework = fw
		} else {
			p.Also = append(p.Also, fw)
		}
		ev := found[fw]
		if len(ev) > maxEvidencePer {
			ev = ev[:maxEvidencePer]
		}
		p.Evidence = append(p.Evidence, ev...)
	}
	switch {
	case python:
		p.Language = Python
		p.Evidence = append(p.Evidence, pyWhy)
	case p.Framework == OpenACC || p.Framework == OpenMP:
		p.Language = Native
	case p.Framework == Unknown || p.Framework == MPI || p.Framework == TensorRT || p.Framework == QUDA:
		if why := nativeProcess(t); why != "" {
			p.Language = CPP
			p.Evidence = append(p.Evidence, why)
		}
	case p.Framework == PyTorch || p.Framework == CuPy || p.Framework == JAX || p.Framework == RAPIDS:
		// A C++ program on these (libtorch, an nvFuser test) runs a
		// binary by its path; without one the Python API is the usual.
		if why := nativeProcess(t); strings.Contains(why, "/") {
			p.Language = CPP
			p.Evidence = append(p.Evidence, why)
		} else {
			p.Language = Python
			p.Evidence = append(p.Evidence, "the Python API (no native binary named)")
		}
	}
	if p.Framework == Unknown && p.Language != Python {
		// CUDA calls, no framework's names and no interpreter: a CUDA
		// program of its own.
		p.Framework = CUDA
		if p.Language == UnknownLanguage {
			p.Language = CPP
		}
		p.Evidence = append(p.Evidence, cudaEvidence(t))
	}
	if p.Framework == MPI && p.Language == UnknownLanguage {
		p.Language = CPP
	}
	if len(p.Evidence) == 0 {
		p.Evidence = []string{"no framework's names in the export"}
	}
	return p
}

func (m *marker) matches(s string) bool {
	if m.re != nil {
		return m.re.MatchString(s)
	}
	return strings.Contains(s, m.sub)
}

// pythonEvidence tells whether the program runs under CPython: Python
// backtraces, or a process or thread of the CUDA calls named python.
func pythonEvidence(t *trace.Trace) (bool, string) {
	if t.Evidence.PythonFrames || t.Evidence.PythonMarks {
		return true, "Python backtraces"
	}
	if t.Evidence.PythonSamples {
		return true, "Python periodic samples"
	}
	for _, p := range sortedProcesses(t) {
		if isInterpreter(p) {
			return true, "process " + p
		}
	}
	for _, th := range t.Threads {
		if strings.Contains(strings.ToLower(th.Name), "python") {
			return true, "thread " + th.Name
		}
	}
	for i := range t.Syncs {
		if i >= maxFrameSyncs {
			break
		}
		for _, f := range t.Syncs[i].Native() {
			if strings.Contains(f.Module, "libpython") {
				return true, "native frames in libpython"
			}
		}
	}
	return false, ""
}

// nativeProcess names the process of the CUDA calls when it has a name
// that is not an interpreter's ("process ./heat").
func nativeProcess(t *trace.Trace) string {
	for _, p := range sortedProcesses(t) {
		if !isInterpreter(p) {
			return "process " + p
		}
	}
	return ""
}

// isInterpreter reports whether a process name is CPython's or a Python
// tool's (pytest, ipython, jupyter).
func isInterpreter(name string) bool {
	n := strings.ToLower(name)
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		n = n[i+1:]
	}
	return strings.Contains(n, "python") || strings.HasPrefix(n, "pytest") || strings.HasPrefix(n, "jupyter")
}

func sortedProcesses(t *trace.Trace) []string {
	var out []string
	for _, p := range t.Processes {
		if p.Name != "" {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// cudaEvidence says why a program is plain CUDA: its kernels carry no
// framework's names.
func cudaEvidence(t *trace.Trace) string {
	if !t.Evidence.GPUActivity {
		return "CUDA calls, no framework's names and no interpreter"
	}
	return "no framework's kernel or library names, no interpreter"
}

func sortFrameworks(fws []Framework) []Framework {
	slices.SortFunc(fws, func(a, b Framework) int { return slices.Index(order, a) - slices.Index(order, b) })
	return fws
}
