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

// symbolIndex remembers which native signatures each symbol contains:
// by the symbol's text, or for a symbol longer than maxNameBytes by its
// bytes (nameRef), so that looking it up costs no hashing of its length.
type symbolIndex struct {
	short map[string][]int
	long  map[nameRef][]int
}

func newSymbolIndex() symbolIndex {
	return symbolIndex{short: map[string][]int{}, long: map[nameRef][]int{}}
}

// wants returns the signatures a symbol contains, by number.
func (ix symbolIndex) wants(sym string) []int {
	if len(sym) > maxNameBytes {
		r := refOf(sym)
		w, ok := ix.long[r]
		if !ok {
			w = signaturesIn(sym)
			ix.long[r] = w
		}
		return w
	}
	w, ok := ix.short[sym]
	if !ok {
		w = signaturesIn(sym)
		ix.short[sym] = w
	}
	return w
}

// signaturesIn lists the native signatures sym contains, by number.
func signaturesIn(sym string) []int {
	var w []int
	for want, n := range nativeWants {
		if strings.Contains(sym, want) {
			w = append(w, n)
		}
	}
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
// matched, in which frame (its symbol in key form: names.key).
func appendNativeKey(b []byte, nm *names, frames []trace.Frame, first []int) []byte {
	for w, j := range first {
		if j >= 0 {
			b = strconv.AppendInt(b, int64(w), 10)
			b = append(b, '=')
			b = append(b, nm.key(frames[j].Symbol)...)
			b = append(b, 0)
		}
	}
	return b
}
