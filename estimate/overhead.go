package estimate

import (
	"fmt"

	"github.com/nsyssync/nsyssync/whatif"
)

// ProfilerOverheads is the profiler's host time per traced call by kind
// of call (whatif.OverheadKind): in a calibration profile, measured (0:
// unknown); in a run's Constants, what was taken off the host time before
// each call of that kind (0: nothing).
type ProfilerOverheads struct {
	LaunchNs    int64 `json:"profiler_overhead_launch_ns"`
	AsyncCopyNs int64 `json:"profiler_overhead_async_copy_ns"`
	SyncNs      int64 `json:"profiler_overhead_sync_ns"`
	OtherNs     int64 `json:"profiler_overhead_other_ns"`
}

// ByKind indexes the overheads by whatif.OverheadKind.
func (p ProfilerOverheads) ByKind() whatif.Overheads {
	return whatif.Overheads{whatif.OverheadLaunch: p.LaunchNs, whatif.OverheadAsyncCopy: p.AsyncCopyNs,
		whatif.OverheadSync: p.SyncNs, whatif.OverheadOther: p.OtherNs}
}

// ByKindOr is ByKind with flat for every kind the profile lacks (a flat
// profile, one of `scripts/profiler_overhead.py --workload loop`, holds
// none).
func (p ProfilerOverheads) ByKindOr(flat int64) whatif.Overheads {
	o := p.ByKind()
	for k, v := range o {
		if v <= 0 {
			o[k] = flat
		}
	}
	return o
}

// ProfilerOverheadsOf is ByKind's inverse: the overheads by kind as a
// profile's fields.
func ProfilerOverheadsOf(o whatif.Overheads) ProfilerOverheads {
	return ProfilerOverheads{LaunchNs: o[whatif.OverheadLaunch], AsyncCopyNs: o[whatif.OverheadAsyncCopy],
		SyncNs: o[whatif.OverheadSync], OtherNs: o[whatif.OverheadOther]}
}

// overheadKey is the JSON name of kind k's overhead, its key in
// Constants.Sources.
func overheadKey(k whatif.OverheadKind) string { return "profiler_overhead_" + k.String() + "_ns" }

// profilerOverhead picks the flat per-call profiler overhead and says
// where it came from.
func (o Options) profilerOverhead() (int64, string) {
	switch {
	case o.ProfilerOverheadNs < 0:
		return 0, "none"
	case o.ProfilerOverheadNs > 0:
		return o.ProfilerOverheadNs, "option"
	case o.Calibration != nil && o.Calibration.ProfilerOverheadNs > 0:
		return o.Calibration.ProfilerOverheadNs, "calibration: " + o.Calibration.Source
	}
	return DefaultCalibration().ProfilerOverheadNs, "default"
}

// setProfilerOverheads fills c's profiler overheads, flat and per kind,
// and their sources. Per kind: the option (flat), else the calibration's
// value for the kind, else its flat value, else, with
// Options.InferProfilerOverhead, the trace's gaps (c.inferred; too few
// gaps: the default), else, with Options.LaunchProfilerOverhead, the
// trace's launches (c.fromLaunches; too few launches: the default), else
// the default, whose source then says what the gaps would have given.
// The flat value is the launches' where they are asked for and give one,
// and neither the option nor a calibration gives one; else the flat
// default's source says what the launches would have given.
func (c *Constants) setProfilerOverheads(opt Options) {
	inferred, lo := &c.inferred, c.fromLaunches
	flat, src := opt.profilerOverhead()
	c.ProfilerOverheadNs, c.Sources["profiler_overhead_ns"] = flat, src
	if src == "default" && !opt.InferProfilerOverhead && lo.Ok {
		if opt.LaunchProfilerOverhead {
			c.ProfilerOverheadNs, c.Sources["profiler_overhead_ns"] = lo.Ns, lo.Source()
		} else {
			c.Sources["profiler_overhead_ns"] = fmt.Sprintf("default (the launches would give %d ns: %s)", lo.Ns, lo.Source())
		}
	}
	var cal whatif.Overheads
	if opt.Calibration != nil {
		cal = opt.Calibration.ProfilerOverheads.ByKind()
	}
	var out whatif.Overheads
	for k := range out {
		kind := whatif.OverheadKind(k)
		v, s := flat, src
		switch {
		case opt.ProfilerOverheadNs != 0:
		case cal[k] > 0:
			v, s = cal[k], "calibration: "+opt.Calibration.Source
		case src != "default":
		case opt.InferProfilerOverhead:
			v, s = inferred[k].Ns, inferred[k].Source()
		case opt.LaunchProfilerOverhead && lo.Ok:
			v, s = lo.Ns, lo.Source()
		default:
			s = fmt.Sprintf("default (inferred, not used: %d ns from the %s)", inferred[k].Ns, inferred[k].Source())
			if !inferred[k].Ok {
				s = "default"
			}
		}
		out[k] = v
		c.Sources[overheadKey(kind)] = s
	}
	c.ProfilerOverheads = ProfilerOverheadsOf(out)
}
