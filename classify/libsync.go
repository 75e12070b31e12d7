package classify

import (
	"fmt"
	"strings"

	"github.com/nsyssync/nsyssync/program"
	"github.com/nsyssync/nsyssync/trace"
)

// libWait is a native library that made an explicit sync, and how the
// trace shows it.
type libWait struct {
	lib   string // "thrust", "libcudf", "QUDA", "cuBLAS"…
	where string // the library's function or range, "" when unknown
	why   string // the evidence
}

// nativeLibs are the modules (native frames and CPU samples) and symbol
// prefixes of libraries that synchronize inside their own calls.
var nativeLibs = []struct{ sub, lib string }{
	{"libcudf", "libcudf"}, {"libquda", "QUDA"}, {"libcublas", "cuBLAS"}, {"libcudnn", "cuDNN"},
	{"libcufft", "cuFFT"}, {"libcusparse", "cuSPARSE"}, {"libcusolver", "cuSOLVER"}, {"libnccl", "NCCL"},
	{"thrust::", "thrust"}, {"cudf::", "libcudf"}, {"quda::", "QUDA"},
}

// libraryDomains are the NVTX domains a library annotates its own
// functions in.
var libraryDomains = map[string]string{"libcudf": "libcudf"}

// nativeLib names the library of the innermost frame past CUDA's own.
func nativeLib(frames []trace.Frame) (string, string, bool) {
	i := userStart(frames)
	if i >= len(frames) {
		return "", "", false
	}
	f := frames[i]
	for _, l := range nativeLibs {
		if strings.Contains(f.Module, l.sub) || strings.Contains(f.Symbol, l.sub) {
			return l.lib, f.Symbol, true
		}
	}
	return "", "", false
}

// libraryOfSync says which library made explicit sync s, from what the
// trace shows, strongest first: the innermost native frame past CUDA's
// own (a backtrace, or a CPU sample inside the wait) in a library; the
// innermost NVTX range in a library's domain; a runtime stream
// synchronize right after a thrust kernel (thrust synchronizes the stream
// when an algorithm ends); a driver-API synchronize in a program that
// uses QUDA, whose CUDA layer synchronizes through the driver API.
func libraryOfSync(s *trace.Sync, quda bool) (libWait, bool) {
	if lib, fn, ok := nativeLib(s.Native()); ok {
		return libWait{lib, fn, "its native backtrace enters the CUDA API from " + lib}, true
	}
	for _, st := range s.Samples() {
		if lib, fn, ok := nativeLib(st); ok {
			return libWait{lib, fn, "CPU samples inside the wait show it called from " + lib}, true
		}
	}
	r := s.NVTX()
	for k := len(r) - 1; k >= 0; k-- {
		if lib, ok := libraryDomains[r[k].Domain]; ok {
			return libWait{lib, r[k].Name, fmt.Sprintf("it runs inside %s's NVTX range `%s`", lib, shownName(r[k].Name))}, true
		}
	}
	calls := s.Calls()
	if len(calls) != 1 {
		return libWait{}, false
	}
	name := calls[0].Name
	if before := s.GPUBefore(); len(before) > 0 && strings.HasPrefix(name, "cudaStreamSynchronize") &&
		strings.Contains(before[len(before)-1].Name, "thrust::") {
		return libWait{"thrust", "", "it follows a thrust kernel on its stream (" + templateHead(before[len(before)-1].Name) +
			"): thrust synchronizes the stream when an algorithm ends"}, true
	}
	if quda && !strings.HasPrefix(name, "cuda") {
		return libWait{"QUDA", "", "a driver-API synchronize (" + name + ") in a program that uses QUDA, whose CUDA layer synchronizes through the driver API"}, true
	}
	return libWait{}, false
}

// librarySite lowers to unknown a site of explicit syncs that a library
// makes inside its own calls (libraryOfSync, for every sync, one
// library), unless its verdict is true or decided: the library waits for
// its own work, and the program removes that wait only through its call
// into the library. The site names the library (Location.Library), its
// evidence says how the trace shows it, and its fix is phrased at the
// program's call.
func librarySite(site *Site, t *trace.Trace, p program.Program) {
	if !site.Phase.Counted() || site.Dependency == DepTrue || site.Decided() || site.HostRead != "" || len(site.Syncs) == 0 {
		return
	}
	quda := p.Uses(program.QUDA)
	var w libWait
	for k, i := range site.Syncs {
		s := &t.Syncs[i]
		if s.Kind != trace.Explicit || s.Copy != nil {
			return
		}
		lw, ok := libraryOfSync(s, quda)
		if !ok || k > 0 && lw.lib != w.lib {
			return
		}
		if k == 0 {
			w = lw
		}
	}
	site.Dependency = DepUnknown
	site.Location.Library = w.lib
	if w.where != "" {
		site.Location.Library += ":" + shownName(w.where)
	}
	ev := "made inside " + w.lib + ": " + w.why
	site.Evidence = append([]string{ev}, site.Evidence...)
	if len(site.Evidence) > maxSiteEvidence {
		site.Evidence = site.Evidence[:maxSiteEvidence]
	}
	site.Fix = libraryFix(w, p)
}

// libraryFix says what the program can do about a library's own wait: at
// its call into the library.
func libraryFix(w libWait, p program.Program) string {
	head := fmt.Sprintf("This wait is made inside %s, not by the program's own code: the library waits for its own work, "+
		"and the program cannot remove it directly. ", w.lib)
	switch w.lib {
	case "thrust":
		if p.Framework == program.CuPy {
			return head + "CuPy's `sort`, `argsort`, `lexsort` and `partition` run thrust algorithms, which end with this wait: " +
				"sort less often or on more data at once (one `argsort` over a stacked array rather than one per row), and keep the result on the GPU."
		}
		return head + "A thrust algorithm with the default execution policy synchronizes its stream when it ends: " +
			"where the host does not read the result at once, use `thrust::cuda::par_nosync.on(stream)` (Thrust 1.16 and later) and wait only where the host reads it."
	case "libcudf":
		return head + "libcudf waits inside its operations" + rangeText(w.where) + ", typically to size an output or read a count before it returns" +
			": call the operation less often or on more data at once (one groupby or join over all keys rather than one per chunk), and keep the data in cuDF between operations."
	case "QUDA":
		return head + "QUDA synchronizes inside its solvers, reductions and autotuning: look at the program's calls into QUDA's API " +
			"(functions such as `loadGaugeQuda`, `dslashQuda` or `invertQuda`) that make these waits; keep tuned parameters across runs (`QUDA_RESOURCE_PATH`) so that autotuning does not rerun, and call QUDA with more work at once. " +
			"Profile with `--cudabacktrace=all` and `-s cpu` to see the QUDA function."
	}
	return head + "Look at the program's call into " + w.lib + " that makes it: an option that avoids the wait, or calling it less often."
}

// templateHead shortens a demangled kernel name to its template's head:
// "thrust::cuda_cub::core::_kernel_agent<…>".
func templateHead(name string) string {
	name = strings.TrimPrefix(name, "void ")
	if i := strings.IndexByte(name, '<'); i > 0 {
		return shownName(name[:i]) + "<…>"
	}
	return shownName(name)
}

// rangeText names a library's range in a sentence: " (`aggregate`)".
func rangeText(where string) string {
	if where == "" {
		return ""
	}
	return " (`" + shownName(where) + "`)"
}
