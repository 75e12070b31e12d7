package classify

// Basis is the kind of evidence a verdict rests on: what matched the
// deciding rule's signature.
type Basis string

// Bases, strongest first.
const (
	// BasisSource: the program's own line said what the value read back
	// is for (Python frames and the program's file).
	BasisSource Basis = "source"
	// BasisBacktrace: Python frames of torch or native frames named the
	// operation.
	BasisBacktrace Basis = "backtrace"
	// BasisSamples: native frames of the CPU samples taken inside the
	// site's syncs (nsys's default capture) named the operation. Decided
	// like aten ranges, since a frame such as THPVariable_item names it as
	// well; below a backtrace, since it is the site's majority stack, not
	// one of each sync's own.
	BasisSamples Basis = "samples"
	// BasisNVTX: aten op ranges (--pytorch=autograd-nvtx) named it, or the
	// ops that ran just before.
	BasisNVTX Basis = "nvtx"
	// BasisKernels: the GPU ops enqueued on the sync's stream just before
	// and after it (a lean capture's kernel names): what computed the
	// value read and what used it. Not decided: a kernel names an
	// operation, not the program's use of its result.
	BasisKernels Basis = "kernels"
	// BasisLines: a read without frames of its own took the verdict every
	// place of the program's files that can make such a read agrees on
	// (leanmatch.go): the program's lines, but not the one line that read.
	// Not decided.
	BasisLines Basis = "lines"
	// BasisPattern: the call pattern alone — the API sequence, the copy's
	// direction, size and host memory — with no frame, line or op range.
	BasisPattern Basis = "pattern"
	// BasisNone: no rule matched (the verdict is unknown).
	BasisNone Basis = "none"
)

// rank orders bases from the weakest (0) up.
func (b Basis) rank() int {
	switch b {
	case BasisPattern:
		return 1
	case BasisLines:
		return 2
	case BasisKernels:
		return 3
	case BasisNVTX:
		return 4
	case BasisSamples:
		return 5
	case BasisBacktrace:
		return 6
	case BasisSource:
		return 7
	}
	return 0
}

// Decided reports whether the evidence names the operation (frames, the
// program's line, aten ranges): a verdict on that basis is decided. One
// from the call pattern alone is only likely — a lean capture's cudaFree
// or pageable copy may be what it looks like, or not.
func (b Basis) Decided() bool { return b.rank() >= BasisNVTX.rank() }

// weaker returns the weaker of two bases.
func weaker(a, b Basis) Basis {
	if b.rank() < a.rank() {
		return b
	}
	return a
}

// Likely reports whether the site's verdict is a dependency (true or
// false) that the call pattern alone suggests: a weaker claim than one
// its syncs' frames, lines or aten ranges decide. Reports say "likely
// false", and the CI gate does not count such sites unless asked.
func (s *Site) Likely() bool {
	return s.Dependency != DepUnknown && !s.Basis.Decided()
}

// Decided reports whether the site's dependency is known and every one
// of its syncs' verdicts rests on decided evidence (Basis.Decided).
func (s *Site) Decided() bool {
	return s.Dependency != DepUnknown && s.Basis.Decided()
}
