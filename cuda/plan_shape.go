package cuda

import "github.com/nsyssync/nsyssync/trace"

// coverOp is a recorded kernel of another stream that was running when
// an op started: the op's recorded duration until it ended, ns, may be
// time the op waited for its SMs.
type coverOp struct {
	op int
	ns int64
}

// shapeIndex returns the Plan.Shapes index of an op's footprint (0: none).
func (b *planBuilder) shapeIndex(op *trace.Op) int32 {
	s, ok := shapeOf(op)
	if !ok {
		return 0
	}
	if i, ok := b.shapeIdx[s]; ok {
		return i
	}
	i := int32(len(b.shapes))
	b.shapes = append(b.shapes, s)
	b.shapeIdx[s] = i
	return i
}

// findCovers finds, for each kernel with a footprint, the kernel with a
// footprint on another stream of the same process and device that had
// started before it and was still running when it started, the one that
// ended last. Kernels of one stream never overlap, and those of
// different processes share a GPU only in turns, so neither covers.
func (b *planBuilder) findCovers() map[int]coverOp {
	out := map[int]coverOp{}
	var running []int // kernels with a footprint that may still run
	for oi := range b.ops {
		op := &b.ops[oi]
		if _, ok := shapeOf(op); !ok {
			continue
		}
		live := running[:0]
		best := -1
		for _, k := range running {
			y := &b.ops[k]
			if y.End <= op.Start {
				continue
			}
			live = append(live, k)
			if y.GlobalPid == op.GlobalPid && y.Device == op.Device && y.Stream != op.Stream && y.Start < op.Start &&
				(best < 0 || y.End > b.ops[best].End) {
				best = k
			}
		}
		running = append(live, oi)
		if best >= 0 {
			out[oi] = coverOp{op: best, ns: min(b.ops[best].End, op.End) - op.Start}
		}
	}
	return out
}
