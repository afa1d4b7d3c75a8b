package stream

import (
	"context"
	"fmt"
)

// node is what the graph knows of a source, stage or sink, whatever its
// element types.
type node struct {
	g          *Graph
	name       string
	index      int
	par        int     // parallel instances
	succ       []*node // nodes its edges lead to
	preds      []*node // nodes whose edges lead to it
	senders    int     // upstream instances feeding each of its instances
	needsInput bool    // a stage or sink: Start refuses it without an input edge
	loop       bool    // a stage: its instances run on ring-kernel loops (a source has none)
	sink       bool    // a sink (ToFunc, ToChan): a stage whose output goes nowhere
	newChain   bool    // StartChain: never chained to its upstream
	chained    bool    // decided at Start: its one instance runs on its upstream's loop

	prepare     func() error                    // build its instances' functions (before any launch)
	launch      func(ctx context.Context) error // launch and activate its kernels
	bind        []func()                        // wire its outgoing edges (after every launch)
	stop        func(ctx context.Context) error // terminate its kernels
	drainSource func(ctx context.Context) error // a source: stop taking elements, send the end of stream
	closeSource func()                          // a source: stop taking elements (Stop)
	drained     []chan struct{}                 // closed when an instance has forwarded the end of stream
	stats       []*instStats
	depth       func(i int) int64 // packets queued at instance i
}

// reaches reports whether to is n or can be reached from n.
func (n *node) reaches(to *node) bool {
	seen := map[*node]bool{}
	var walk func(*node) bool
	walk = func(x *node) bool {
		if x == to {
			return true
		}
		if seen[x] {
			return false
		}
		seen[x] = true
		for _, s := range x.succ {
			if walk(s) {
				return true
			}
		}
		return false
	}
	return walk(n)
}

// Outlet is a node's typed output: a source, a stage's main output, or a
// side output. Connect joins it to an Inlet of the same element type, so a
// type mismatch between an edge's ends does not compile.
type Outlet[T any] interface {
	outNode() *node
	emitters() []*Emitter[T]
}

// Inlet is a node's typed input: a stage or a sink.
type Inlet[T any] interface {
	inNode() *node
	targets(from int32) []*target[T]
}

// Connect adds an edge from an outlet to an inlet. Without a router each
// element goes to one instance of the inlet's stage, in turn (RoundRobin);
// Broadcast sends it to every instance and KeyBy to the instance its key
// hashes to. Several edges may leave one outlet (each gets every element)
// and several may enter one inlet (a fan-in: each upstream instance's order
// is kept, watermarks merge by their minimum). An edge that would close a
// cycle is refused with ErrCycle, one between two graphs with
// ErrForeignNode; the error is also kept for Start.
func Connect[T any](from Outlet[T], to Inlet[T], r ...Router[T]) error {
	f, t := from.outNode(), to.inNode()
	g := f.g
	if g == nil {
		return fmt.Errorf("%w: the outlet was not declared in a graph", ErrInvalidGraph)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case t.g != g:
		return g.fail(fmt.Errorf("%w: %q → %q", ErrForeignNode, f.name, t.name))
	case g.phase != building:
		return g.fail(fmt.Errorf("%w: cannot connect %q → %q", ErrStarted, f.name, t.name))
	case len(r) > 1:
		return g.fail(fmt.Errorf("%w: %q → %q: more than one router", ErrInvalidGraph, f.name, t.name))
	case t.reaches(f):
		return g.fail(fmt.Errorf("%w: %q → %q", ErrCycle, f.name, t.name))
	}
	var route Router[T] = RoundRobin[T]()
	if len(r) == 1 && r[0] != nil {
		route = r[0]
	}
	base := int32(t.senders)
	t.senders += f.par
	f.succ = append(f.succ, t)
	t.preds = append(t.preds, f)
	f.bind = append(f.bind, func() {
		for u, e := range from.emitters() {
			ts := to.targets(base + int32(u))
			for _, t := range ts {
				if t.direct != nil {
					t.direct.chainTo(e.fire)
				}
			}
			e.edges = append(e.edges, &edgeOut[T]{route: route, targets: ts})
			e.bound()
		}
	})
	return nil
}
