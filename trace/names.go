package trace

import (
	"strconv"
	"strings"
)

// CallKind says what a CUDA API call of interest does (one byte, beside
// the flags of a Call).
type CallKind uint8

// The calls the inventory reads.
const (
	CallOther       CallKind = iota
	CallStreamSync           // cudaStreamSynchronize, cuStreamSynchronize
	CallEventSync            // cudaEventSynchronize, cuEventSynchronize
	CallContextSync          // cudaDeviceSynchronize, cudaThreadSynchronize, cuCtxSynchronize
	CallMemcpy               // cudaMemcpy*, cuMemcpy*
	CallMemset               // cudaMemset*, cuMemset*
	CallFree                 // cudaFree, cudaFreeHost, cudaFreeArray, cuMemFree, cuMemFreeHost
)

// NormalizeName strips the CUPTI callback-id suffix of runtime API names
// (cudaStreamSynchronize_v3020 → cudaStreamSynchronize). Driver API names
// are kept: their _v2 is part of the real symbol (cuMemcpyDtoH_v2).
func NormalizeName(raw string) string {
	if strings.HasPrefix(raw, "cuda") {
		return trimVersion(raw)
	}
	return raw
}

// trimVersion drops one trailing "_v" and digits (cudaMalloc_v3020 →
// cudaMalloc). Written out rather than a regexp: the estimator asks for
// names in every window it models.
func trimVersion(s string) string {
	i := strings.LastIndex(s, "_v")
	if i < 0 || i+2 == len(s) {
		return s
	}
	for j := i + 2; j < len(s); j++ {
		if s[j] < '0' || s[j] > '9' {
			return s
		}
	}
	return s[:i]
}

// baseName drops every version or per-thread suffix, for matching only.
func baseName(name string) string {
	b := NormalizeName(name)
	if strings.HasSuffix(b, "_ptds") || strings.HasSuffix(b, "_ptsz") {
		b = b[:len(b)-len("_ptds")]
	}
	return trimVersion(b)
}

// ClassifyName says which kind of call an API name is. It accepts raw or
// normalised names, runtime or driver.
func ClassifyName(name string) CallKind {
	b := baseName(name)
	switch b {
	case "cudaStreamSynchronize", "cuStreamSynchronize":
		return CallStreamSync
	case "cudaEventSynchronize", "cuEventSynchronize":
		return CallEventSync
	case "cudaDeviceSynchronize", "cudaThreadSynchronize", "cuCtxSynchronize":
		return CallContextSync
	case "cudaFree", "cudaFreeHost", "cudaFreeArray", "cudaFreeMipmappedArray",
		"cuMemFree", "cuMemFreeHost", "cuArrayDestroy", "cuMipmappedArrayDestroy":
		return CallFree
	}
	switch {
	case strings.HasPrefix(b, "cudaMemcpy") || strings.HasPrefix(b, "cuMemcpy"):
		return CallMemcpy
	case strings.HasPrefix(b, "cudaMemset") || strings.HasPrefix(b, "cuMemset"):
		return CallMemset
	}
	return CallOther
}

// isAsyncName reports whether a memcpy/memset API is the Async variant.
func isAsyncName(name string) bool {
	return strings.Contains(baseName(name), "Async")
}

// isPeerName reports copies between devices (cudaMemcpyPeer, cuMemcpyPeer).
func isPeerName(name string) bool {
	b := baseName(name)
	return strings.Contains(b, "Peer") || strings.HasPrefix(b, "cuMemcpyDtoD") || strings.HasPrefix(b, "cuMemcpyAtoA")
}

// directionFromName guesses a copy's direction from its API name, for
// exports without the memcpy activity table.
func directionFromName(name string) CopyKind {
	b := baseName(name)
	switch {
	case strings.Contains(b, "DtoH"), strings.Contains(b, "AtoH"), strings.HasSuffix(b, "FromSymbol"), strings.Contains(b, "FromSymbolAsync"):
		return CopyDtoH
	case strings.Contains(b, "HtoD"), strings.Contains(b, "HtoA"), strings.HasSuffix(b, "ToSymbol"), strings.Contains(b, "ToSymbolAsync"):
		return CopyHtoD
	case strings.Contains(b, "DtoD"), strings.Contains(b, "Peer"):
		return CopyDtoD
	}
	return CopyUnknown
}

func (k CallKind) String() string {
	switch k {
	case CallStreamSync:
		return "stream-sync"
	case CallEventSync:
		return "event-sync"
	case CallContextSync:
		return "context-sync"
	case CallMemcpy:
		return "memcpy"
	case CallMemset:
		return "memset"
	case CallFree:
		return "free"
	}
	return "other"
}

// String names a memory kind: pageable, pinned, device, managed, unknown.
func (k MemKind) String() string {
	switch k {
	case MemPageable:
		return "pageable"
	case MemPinned:
		return "pinned"
	case MemDevice:
		return "device"
	case MemManaged:
		return "managed"
	case MemUnknown:
		return "unknown"
	}
	return "kind" + strconv.FormatInt(int64(k), 10)
}
