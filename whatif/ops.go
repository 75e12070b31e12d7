package whatif

import (
	"sort"

	"github.com/nsyssync/nsyssync/trace"
)

// FloatCall returns the call that a GPU op of process pid which started at
// start, with no launch call in the graph (its call is not traced, or
// falls outside the region), floats after: the last call of its process
// that started at or before it; -1 when none. The op moves with that
// call. The simulator used to take the last call of any process: on every
// fixture and shared-corpus export its results are the same either way.
func (h *Host) FloatCall(start int64, pid trace.GlobalPid) int32 {
	k := int32(sort.Search(len(h.Calls), func(i int) bool { return h.Calls[i].Start > start })) - 1
	for ; k >= 0 && h.Threads[h.Calls[k].Thread].Pid != pid; k-- {
	}
	return k
}
