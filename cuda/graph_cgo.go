//go:build cgo

package cuda

/*
#include "nsd_cuda.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// streamGraph is a stream's graph of one spin node, instantiated: a
// recorded graph launch is replayed as a launch of it, so that the
// driver's and the GPU's cost of launching a graph (its latency, and
// what follows its end on the stream) are measured, not modelled.
type streamGraph struct {
	graph C.CUgraph
	node  C.CUgraphNode
	exec  C.CUgraphExec
}

// newGraphs makes one graph per stream. A graph that fails to
// instantiate is destroyed by release.
func (s *cudaSession) newGraphs() error {
	d := s.g.drv
	for range s.streams {
		var g streamGraph
		r := C.nsd_graph_new(d.c, s.g.spinFn, &g.graph, &g.node, &g.exec)
		s.graphs = append(s.graphs, g)
		if err := d.check(r, "cuGraphInstantiate(spin)"); err != nil {
			return err
		}
	}
	return nil
}

func (s *cudaSession) graph(stream int, ns int64, stamp int) error {
	if stream < 0 || stream >= len(s.graphs) {
		return fmt.Errorf("graph launch on stream %d: the session has %d graphs", stream, len(s.graphs))
	}
	var stamps C.ulonglong
	if stamp >= 0 && stamp < s.nStamps {
		stamps = C.ulonglong(uintptr(unsafe.Add(s.stamps, 16*stamp)))
	}
	g := &s.graphs[stream]
	d := s.g.drv
	return d.check(C.nsd_graph_launch(d.c, s.g.spinFn, g.exec, g.node, s.streams[stream], C.ulonglong(max(ns, 0)), stamps), "cuGraphLaunch")
}

// releaseGraphs destroys the session's graphs (after the work queued on
// them is done).
func (s *cudaSession) releaseGraphs() error {
	d := s.g.drv
	var err error
	for _, g := range s.graphs {
		if g.exec != nil {
			err = errors.Join(err, d.check(C.nsd_graph_exec_destroy(d.c, g.exec), "cuGraphExecDestroy"))
		}
		if g.graph != nil {
			err = errors.Join(err, d.check(C.nsd_graph_destroy(d.c, g.graph), "cuGraphDestroy"))
		}
	}
	s.graphs = nil
	return err
}
