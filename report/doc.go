// Package report renders an analysed trace: a plain terminal table and the
// versioned JSON contract (nsyssync/v1) that CI scripts and other tools
// read.
package report

import (
	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
)

// Analysis is what the renderers show: one trace, its syncs and its sites.
type Analysis struct {
	Trace *trace.Trace
	Sites []classify.Site
}

// New groups the trace's syncs into sites and wraps both for rendering.
func New(t *trace.Trace) *Analysis {
	return &Analysis{Trace: t, Sites: classify.Sites(t)}
}

// siteOf maps each sync index to its site's id.
func (a *Analysis) siteOf() map[int]string {
	out := map[int]string{}
	for _, s := range a.Sites {
		for _, i := range s.Syncs {
			out[i] = s.ID
		}
	}
	return out
}

// GPUName names the GPU(s) the trace ran on.
func (a *Analysis) GPUName() string {
	gpus := a.Trace.UsedGPUs()
	if len(gpus) == 0 {
		return ""
	}
	name := gpus[0].Name
	same := 0
	for _, g := range gpus {
		if g.Name == name {
			same++
		}
	}
	if len(gpus) > 1 && same == len(gpus) {
		return itoa(len(gpus)) + "x " + name
	}
	return name
}
