package classify

import (
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/trace"
)

// nativeWants numbers every Native signature of the table, so a frame's
// symbol is searched for all of them once per distinct symbol rather than
// once per sync and rule.
var nativeWants = func() map[string]int {
	m := map[string]int{}
	for _, r := range Rules {
		for _, w := range r.Native {
			if _, ok := m[w]; !ok {
				m[w] = len(m)
			}
		}
	}
	return m
}()

// symbolIndex remembers which native signatures each symbol contains.
type symbolIndex map[string][]int

// wants returns the signatures a symbol contains, by number.
func (ix symbolIndex) wants(sym string) []int {
	if w, ok := ix[sym]; ok {
		return w
	}
	var w []int
	for want, n := range nativeWants {
		if strings.Contains(sym, want) {
			w = append(w, n)
		}
	}
	ix[sym] = w
	return w
}

// nativeMatches gives, for each native signature, the innermost of the
// frames that contains it (-1: none), in buf; nil when there are no
// frames, which reads as no signature matched.
func (ix symbolIndex) nativeMatches(buf []int, frames []trace.Frame) []int {
	if len(frames) == 0 {
		return nil
	}
	if cap(buf) < len(nativeWants) {
		buf = make([]int, len(nativeWants))
	}
	first := buf[:len(nativeWants)]
	for i := range first {
		first[i] = -1
	}
	for j, fr := range frames {
		for _, w := range ix.wants(fr.Symbol) {
			if first[w] < 0 {
				first[w] = j
			}
		}
	}
	return first
}

// appendNativeKey names the native facts the rules read: which signatures
// matched, in which frame.
func appendNativeKey(b []byte, frames []trace.Frame, first []int) []byte {
	for w, j := range first {
		if j >= 0 {
			b = strconv.AppendInt(b, int64(w), 10)
			b = append(b, '=')
			b = append(b, frames[j].Symbol...)
			b = append(b, 0)
		}
	}
	return b
}
