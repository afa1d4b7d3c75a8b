package stream

import (
	"fmt"
	"time"
)

// Operator chaining: a stage whose only input is one instance of a stage
// (one edge, from a stage of parallelism 1, into a stage of parallelism 1)
// runs on that upstream instance's loop instead of a ring kernel of its
// own. Its upstream's emitter hands it the same packets it would have sent
// to its ring (elements, the watermarks between them, the end of stream),
// by function call, so the stage sees exactly what it would have seen
// through a ring: per-upstream order, the same watermarks between the same
// elements, Flush after each packet, one outcome per element (its own: a
// chained stage's failure or panic is its element's, never its
// upstream's), and backpressure (while it waits on its own downstream, its
// upstream's loop waits with it). What goes away is the ring between the
// two, the reply and the hand-off to another goroutine with its wake-up.
// Flink chains operators the same way.
//
// Chaining is the default; WithChaining(false) turns it off for a graph,
// Stage.StartChain for one stage (which then runs on a loop of its own, so that
// it works in parallel with its upstream; stages after it may chain to it).

// WithChaining turns operator chaining on (the default) or off: with it on,
// a stage fed by one edge from one instance of a stage runs on that
// instance's loop (see Stage.StartChain); with it off, every stage instance has a
// ring kernel of its own.
func WithChaining(on bool) Option { return func(c *config) { c.noChain = !on } }

// StartChain makes the stage run on ring-kernel loops of its own even where
// it could be chained to its upstream: it then works in parallel with its
// upstream (a pipeline stage boundary, worth it where both do enough work
// per element to keep a core busy), at the cost of the packets between
// them. Stages after it may still chain to it. Call it before Start.
func (s *Stage[In, Out]) StartChain() *Stage[In, Out] {
	g := s.n.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.phase != building {
		g.fail(fmt.Errorf("%w: cannot change %q", ErrStarted, s.n.name))
		return s
	}
	s.n.newChain = true
	return s
}

// link is a chained stage instance as its upstream's emitter sees it.
type link[T any] interface {
	// deliver hands over a packet, by function call on the upstream's loop:
	// the instance handles it at once, as its kernel would have.
	deliver(p packet[T])
	// chainTo records how to fire a timer on the upstream's loop.
	chainTo(fire func())
}

// chain decides which nodes run on their upstream's loop.
func (g *Graph) chain(order []*node) {
	for _, n := range order {
		n.chained = false
		if g.cfg.noChain || !n.loop || n.newChain || n.par != 1 || n.senders != 1 || len(n.preds) != 1 {
			continue
		}
		if up := n.preds[0]; up.loop && up.par == 1 {
			n.chained = true
		}
	}
}

// deliver handles a packet from the upstream the instance is chained to.
func (in *instance[In, Out]) deliver(p packet[In]) { _, _ = in.handle(in.c.ctx, p) }

// fireTimer asks for a timer packet on the loop the instance runs on: its
// own kernel's, or (chained) its upstream's.
func (in *instance[In, Out]) fireTimer() {
	if up := in.upFire; up != nil {
		up()
		return
	}
	g := in.s.n.g
	_ = in.k.RequestAsync(g.ctx, packet[In]{from: -1, ctl: ctlTimer}, func(ack, error) {})
}

// chainTo records that the instance runs on the loop of the emitter that
// feeds it: its timers fire there.
func (in *instance[In, Out]) chainTo(fire func()) { in.upFire = fire }

// tick runs the instance's due timers, then passes the timer packet on to
// the stages chained to it.
func (in *instance[In, Out]) tick(now time.Time) {
	in.runTimers(now)
	in.out.tick(now)
	for _, x := range in.extra {
		x.tick(now)
	}
}

// tick sends each chained instance this emitter feeds a timer packet (with
// what is pending for it).
func (e *Emitter[T]) tick(time.Time) {
	if e.open != openNone {
		e.commit()
	}
	if e.wmPend {
		e.placeWM()
	}
	for _, ed := range e.edges {
		for _, t := range ed.targets {
			if t.direct != nil {
				t.pend.ctl = ctlTimer
				_ = e.send(t)
			}
		}
	}
}
