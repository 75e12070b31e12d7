package trace

import "math"

// payload is the low 32 bits of an op's keys.
func (nb *neighbourIndex) payload(cur *neighbourCursor, op *gpuOp) uint64 {
	if p, ok := inlinePayload(op); ok {
		return p
	}
	d := opDesc{kind: op.kind, name: op.name, bytes: op.bytes, copy: normDirection(CopyKind(op.copyKind))}
	if i, ok := cur.descs[d]; ok {
		return descFlag | descTable | uint64(i)
	}
	nb.descMu.Lock()
	i, ok := nb.descIx[d]
	if !ok {
		i = uint32(len(nb.descs))
		nb.descs = append(nb.descs, d)
		nb.descIx[d] = i
	}
	nb.descMu.Unlock()
	if cur.descs == nil {
		cur.descs = map[opDesc]uint32{}
	}
	cur.descs[d] = i
	return descFlag | descTable | uint64(i)
}

// inlinePayload is the payload of an op that needs no table, so that the
// order of ops of equal correlation id does not depend on the scan: a
// kernel's name id below 2^31, or descFlag with the kind (bits 28-29), a
// copy's normalised direction (bits 24-27) and the bytes (below 2^24).
// Larger values go through descs (descFlag|descTable and the index).
func inlinePayload(op *gpuOp) (uint64, bool) {
	if op.kind == GPUKernel {
		return uint64(op.name), op.name >= 0 && op.name < descFlag
	}
	ck := int64(normDirection(CopyKind(op.copyKind)))
	if op.bytes < 0 || op.bytes >= 1<<24 || ck < 0 || ck >= 16 {
		return 0, false
	}
	return descFlag | uint64(op.kind-GPUMemcpy)<<28 | uint64(ck)<<24 | uint64(op.bytes), true
}

// desc decodes a payload with descFlag set.
func (nb *neighbourIndex) desc(p uint64) opDesc {
	if p&descTable != 0 {
		return nb.descs[p&(descTable-1)]
	}
	return opDesc{kind: GPUMemcpy + GPUOpKind(p>>28&3), copy: CopyKind(p >> 24 & 15), bytes: int64(p & (1<<24 - 1))}
}

// copyName is the Name of a copy of direction k.
func copyName(k CopyKind) string {
	switch normDirection(k) {
	case CopyHtoD:
		return "[memcpy HtoD]"
	case CopyDtoH:
		return "[memcpy DtoH]"
	case CopyDtoD:
		return "[memcpy DtoD]"
	case CopyHtoH:
		return "[memcpy HtoH]"
	case CopyPtoP:
		return "[memcpy PtoP]"
	}
	return "[memcpy]"
}

// finish resolves the kept ops' names and gives each member sync its
// ops, shared with the syncs whose ops are the same at the same
// distances. The syncs have no detail yet (the scan runs before the
// frames and ranges are attached).
func (nb *neighbourIndex) finish(syncs []Sync, lookup func(map[int64]bool) (map[int64]string, error)) error {
	for _, cur := range nb.cursors { // the scan is over
		nb.flush(&cur.before, 0, MaxGPUBefore)
		nb.flush(&cur.after, MaxGPUBefore, MaxGPUAfter)
	}
	nb.cursors = nil
	type slotKey [nSlots]uint64
	distinct := map[slotKey]int32{}
	var lists []slotKey
	which := make([]int32, len(nb.member)) // index in lists, -1 for none
	names := map[int64]bool{}
	for m := range nb.member {
		var k slotKey
		for j := range k {
			k[j] = ^nb.slots[m*nSlots+j] // empty: noSlot; the scan is over
		}
		if k[0] == noSlot && k[MaxGPUBefore] == noSlot {
			which[m] = -1
			continue
		}
		i, ok := distinct[k]
		if !ok {
			i = int32(len(lists))
			distinct[k] = i
			lists = append(lists, k)
			for _, key := range k {
				if key == noSlot {
					continue
				}
				p := key & math.MaxUint32
				if p&descFlag == 0 {
					names[int64(p)] = true
				} else if d := nb.desc(p); d.kind == GPUKernel && d.name >= 0 {
					names[d.name] = true
				}
			}
		}
		which[m] = i
	}
	nb.slots = nil
	strs, err := lookup(names)
	if err != nil {
		return err
	}
	ref := func(key uint64) GPUOpRef {
		p := key & math.MaxUint32
		op := GPUOpRef{CorrelationID: int64(key >> 32), Kind: GPUKernel}
		if p&descFlag == 0 {
			op.Name = strs[int64(p)]
			return op
		}
		d := nb.desc(p)
		op.Kind, op.Bytes = d.kind, d.bytes
		switch d.kind {
		case GPUKernel:
			op.Name = strs[d.name]
		case GPUMemcpy:
			op.Name, op.Copy = copyName(d.copy), d.copy
		case GPUMemset:
			op.Name = "[memset]"
		case GPUGraph:
			op.Name = "[graph]"
		}
		return op
	}
	details := make([]*syncDetail, len(lists))
	for i, k := range lists {
		g := &gpuNeighbours{}
		for j := MaxGPUBefore - 1; j >= 0; j-- { // farthest first: launch order
			if k[j] != noSlot {
				g.before = append(g.before, ref(k[j]))
			}
		}
		for j := MaxGPUBefore; j < nSlots; j++ {
			if k[j] != noSlot {
				g.after = append(g.after, ref(k[j]))
			}
		}
		details[i] = &syncDetail{gpu: g, shared: true}
	}
	for m, i := range which {
		if i >= 0 {
			syncs[nb.member[m]].detail = details[i]
		}
	}
	return nil
}
