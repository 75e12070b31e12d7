package estimate

import (
	"github.com/nsyssync/nsyssync/trace"
	"github.com/nsyssync/nsyssync/whatif"
)

// The host-side rules of the model (hand-offs between threads, the
// thread's typical gap between launches, the host code cut around a
// removed sync) are package whatif's, shared with the GPU replay.

// addSyncHostCode measures, for each sync, the host time of the code that
// issues it (whatif.Host.HostCode, the typical gaps by globalTid) and
// keeps it where the sync-free rewrite keeps work on the host.
func (m *model) addSyncHostCode(typicalByTid map[trace.GlobalTid]int64) {
	for i, cut := range m.host.HostCode(typicalByTid) {
		m.syncs[i].cutBefore, m.syncs[i].cutAfter = cut.Before, cut.After
	}
	m.keepRewriteHostCode()
}

// keepRewriteHostCode zeroes the host code of syncs whose sync-free
// rewrite keeps work on the host (whatif.KeepsHostCode): a cross-stream
// wait (the rewrite has a cost), an asynchronous host-to-device copy (a
// call of the sync keeps its ops).
func (m *model) keepRewriteHostCode() {
	for i := range m.syncs {
		ss := &m.syncs[i]
		copies := false
		for _, c := range ss.calls {
			copies = copies || m.calls[c].keepOps
		}
		if whatif.KeepsHostCode(ss.extraCost > 0, copies) {
			ss.cutBefore, ss.cutAfter = 0, 0
		}
	}
}
