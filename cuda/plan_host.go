package cuda

import (
	"github.com/nsyssync/nsyssync/trace"
	"github.com/nsyssync/nsyssync/whatif"
)

// Host-side rules of a plan: package whatif's, shared with the simulator
// (package estimate), so that the replay and the simulator differ only in
// what the replay measures: the GPU and the driver. Where the two still
// take a rule differently, the replay passes its own option (the median
// of an even count: the mean of the two middles), as docs/replay.md says.

// hostCode measures, for each removed sync, how much the host gaps before
// its first call and after its last exceed the thread's typical gap
// between two launches, at most one typical gap on each side
// (whatif.Host.HostCode), and gives every sync of a group the group's
// median (whatif.ShareCut).
func (b *planBuilder) hostCode() map[int]whatif.Cut {
	if b.opt.KeepHostCode || len(b.removed) == 0 {
		return nil
	}
	byTid := map[trace.GlobalTid][]int64{}
	b.host.LaunchGaps(nil, byTid)
	raw := b.host.HostCode(whatif.TypicalGaps(byTid, whatif.MeanOfMiddles))
	groups := map[int][]int{}
	for si, g := range b.removed {
		groups[g] = append(groups[g], si)
	}
	out := map[int]whatif.Cut{}
	for _, syncs := range groups {
		var before, after []int64
		for _, si := range syncs {
			before, after = append(before, raw[si].Before), append(after, raw[si].After)
		}
		shared := whatif.ShareCut(before, after, whatif.MeanOfMiddles)
		for _, si := range syncs {
			out[si] = shared
		}
	}
	return out
}
