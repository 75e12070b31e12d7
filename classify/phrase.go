package classify

import (
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/program"
	"github.com/nsyssync/nsyssync/trace"
)

// dialect is the vocabulary a fix is written in: the detected program's
// (package program).
type dialect int

const (
	dTorch   dialect = iota // PyTorch from Python, and Python frames of an unknown framework
	dCUDA                   // CUDA C/C++ (TensorRT too), and what no evidence names
	dMPI                    // CUDA with MPI
	dOpenACC                // OpenACC directives
	dOpenMP                 // OpenMP target offload
	dCuPy                   // CuPy
	dJAX                    // JAX/XLA
	dRAPIDS                 // RAPIDS cuDF
)

// dialect is the vocabulary of o.Program, or of the program detected
// from t.
func (o Options) dialect(t *trace.Trace) dialect { return dialectOf(o.program(t), t) }

// program is o.Program, or the program detected from t.
func (o Options) program(t *trace.Trace) program.Program {
	if o.Program != nil {
		return *o.Program
	}
	return program.Detect(t)
}

// dialectOf picks the vocabulary of a program.
func dialectOf(p program.Program, t *trace.Trace) dialect {
	switch p.Framework {
	case program.PyTorch:
		if p.IsPython() {
			return dTorch
		}
		return dCUDA
	case program.OpenACC:
		return dOpenACC
	case program.OpenMP:
		return dOpenMP
	case program.CuPy:
		return dCuPy
	case program.JAX:
		return dJAX
	case program.RAPIDS:
		return dRAPIDS
	case program.MPI:
		return dMPI
	case program.Unknown:
		if t.Evidence.PythonFrames || t.Evidence.PythonSamples {
			return dTorch
		}
	}
	return dCUDA
}

// topic is what a fix is about, whatever its words.
type topic int

const (
	tOther topic = iota
	tDeviceSync
	tStreamSync
	tEventSync
	tFree
	tFreeHost
	tHtoD
	tDtoH
	tDtoHPinned
	tScalar
	tBranch
	tShape
	tLog
	tMemset
)

// topicOf reads a verdict's topic from its category and the sync's calls.
func topicOf(v *Verdict, s *trace.Sync) topic {
	last := trace.CallOther
	freeHost := false
	for _, c := range s.Calls() {
		if c.Kind != trace.CallOther {
			last = c.Kind
		}
		freeHost = freeHost || strings.Contains(c.Name, "FreeHost")
	}
	cp := s.Copy
	switch v.Category {
	case CatExplicitSync:
		return tDeviceSync
	case CatStreamSync:
		return tStreamSync
	case CatEventSync:
		return tEventSync
	case CatMemory:
		if freeHost {
			return tFreeHost
		}
		return tFree
	case CatHostToDevice:
		return tHtoD
	case CatLogging:
		return tLog
	case CatControlFlow:
		return tBranch
	case CatDynamicShape:
		return tShape
	}
	switch {
	case cp != nil && cp.Memset:
		return tMemset
	case cp != nil && cp.Direction == trace.CopyDtoH && cp.Bytes > 0 && cp.Bytes <= maxScalarBytes:
		return tScalar
	case cp != nil && cp.Direction == trace.CopyDtoH && cp.DstKind == trace.MemPinned:
		return tDtoHPinned
	case cp != nil && cp.Direction == trace.CopyDtoH:
		return tDtoH
	case cp != nil && cp.Direction == trace.CopyHtoD:
		return tHtoD
	case freeHost:
		return tFreeHost
	}
	switch last {
	case trace.CallContextSync:
		return tDeviceSync
	case trace.CallStreamSync:
		return tStreamSync
	case trace.CallEventSync:
		return tEventSync
	case trace.CallFree:
		return tFree
	case trace.CallMemset:
		return tMemset
	}
	return tOther
}

// phrase writes the fix of a sync's verdict in the program's words. The
// PyTorch rules keep their own text in the PyTorch dialect; elsewhere the
// fix is rebuilt from what the sync is (topicOf). A verdict without a fix
// gets one that says what to look at, and a free of pinned host memory
// never gets the advice of a device free.
func phrase(d dialect, v *Verdict, s *trace.Sync) string {
	tp := topicOf(v, s)
	if d == dTorch && v.Fix != "" && tp != tFreeHost {
		return v.Fix
	}
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(baseText[tp], "{call}", callText(s)))
	if text := dialectText(d, tp); text != "" {
		b.WriteString(" " + text)
	}
	if tp == tOther || tp == tMemset || (v.Fix == "" && v.Rule == "") {
		b.WriteString(" " + lookAt(s))
	}
	return b.String()
}

// callText names the sync's calls: "`cuMemcpyDtoHAsync_v2` + `cuStreamSynchronize`".
func callText(s *trace.Sync) string {
	var parts []string
	for _, c := range s.Calls() {
		n := "`" + shownName(c.Name) + "`"
		if len(parts) == 0 || parts[len(parts)-1] != n {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return "This call"
	}
	return strings.Join(parts, " + ")
}

// lookAt says what to look at where no rewrite is known: the stream, and
// for a copy or memset what the GPU ran just before it.
func lookAt(s *trace.Sync) string {
	where := "in the timeline"
	if s.Stream >= 0 {
		where = "on stream " + strconv.FormatInt(int64(s.Stream), 10) + " in the timeline"
	}
	text := "Look at it " + where + ": what the GPU was running while the host waited, and whether the host reads anything the GPU produced before it goes on."
	if s.Copy != nil {
		if before := s.AppendGPUBefore(nil); len(before) > 0 {
			text += " Just before it the GPU ran " + shownName(before[len(before)-1].Name) + "."
		}
	}
	return text
}
