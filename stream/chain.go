package stream

import (
	"fmt"
	"runtime/debug"
	"time"
)

// Operator chaining: a stage whose only input is one instance of a stage
// (one edge, from a stage of parallelism 1, into a stage of parallelism 1)
// runs on that upstream instance's loop instead of a ring kernel of its
// own. Its upstream's emitter hands it each element, watermark, end of
// stream and end of packet by function call, in the order a packet would
// have carried them, so the stage sees exactly what it would have seen
// through a ring: per-upstream order, the same watermarks between the same
// elements, one outcome per element (its own: a chained stage's failure or
// panic is its element's, never its upstream's), and backpressure (while
// it waits on its own downstream, its upstream's loop waits with it). What
// goes away is the packet between the two and the hand-off to another
// goroutine. Flink chains operators the same way.
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

// link is a chained stage instance as its upstream's emitter sees it: what
// a packet would carry, by function call, on the upstream's loop.
type link[T any] interface {
	// push hands over one element.
	push(v T)
	// senderWM is the upstream's watermark after the elements so far.
	senderWM(from int32, wm int64)
	// senderEnd is the upstream's end of stream.
	senderEnd(from int32)
	// packetEnd is the end of the upstream's packet: flush.
	packetEnd()
	// tick is a timer packet reaching the chain's loop: run the due timers.
	tick(now time.Time)
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

// push handles one element handed over by the upstream's emitter: its
// outcome is the instance's own (a panic is recovered here).
func (in *instance[In, Out]) push(v In) {
	in.stats.in.Add(1) // at once: a stage blocked on this element shows it
	in.gotItems = true
	if in.wmDirty {
		in.wmDirty = false
		in.advance()
	}
	defer func() {
		if pv := recover(); pv != nil {
			in.failed(pv, fmt.Errorf("%w: %v\n%s", ErrPanic, pv, debug.Stack()))
		}
	}()
	if in.outcome(in.f.Element(&in.c, v, in.out)) {
		in.pendDone++
	}
}

// packetEnd ends the upstream's packet: Flush (when elements came), then
// the instance's outputs are flushed.
func (in *instance[In, Out]) packetEnd() {
	if in.wmDirty {
		in.wmDirty = false
		in.advance()
	}
	in.endPacket(in.gotItems)
	in.gotItems = false
}

// tick runs the instance's due timers, then those of the stages chained to
// it; the end of the head's packet flushes what they emitted.
func (in *instance[In, Out]) tick(now time.Time) {
	if in.done {
		return
	}
	if in.wmDirty {
		in.wmDirty = false
		in.advance()
	}
	in.runTimers(now)
	in.out.tick(now)
	for _, x := range in.extra {
		x.tick(now)
	}
}

// tick passes a timer packet on to the chained instances this emitter feeds.
func (e *Emitter[T]) tick(now time.Time) {
	for _, l := range e.links {
		l.tick(now)
	}
}
