package stream

import (
	"context"
	"fmt"
	"math"

	"github.com/ringactor/ringactor/actors"
)

// Emitter is a stage's output: Emit sends an element to the stage's
// downstream instances. It packs elements into packets (DefaultBatch at
// most) and sends a packet when it is full and at the end of every packet
// its own stage handles; a send waits while the downstream ring is full —
// that wait is the graph's backpressure. An emitter belongs to one stage
// instance and is used from its loop only.
type Emitter[T any] struct {
	g     *Graph
	stats *instStats
	edges []*edgeOut[T]
	one   *target[T] // the only target when one edge leads to one instance (the fast path of Emit)
	fire  func()     // fires a timer on this emitter's loop (a stage's; nil for a source)
	dst   []int
	outN  uint64          // emitted since the last flush (published to stats there)
	batch int             // the graph's batch size
	ctx   context.Context // what sends wait under (nil: the graph's)
	err   error           // the first failed send since the last take

	// the element Next handed out, until the next call (commit)
	open    open
	scratch T // where it lies when not in a packet

	// event time assigned on this output (EventTime), and its watermark
	timeOf   func(T) int64
	timesOf  func(vs []T, ts []int64) // EventTimes' function (timeOf calls it for one element)
	times    []int64                  // timesOf's output
	oneV     [1]T                     // timeOf's input to timesOf
	lateness int64
	wm       int64
	wmPend   bool // wm is not yet in the pending packets (placeWM)
}

// edgeOut is one edge leaving an emitter.
type edgeOut[T any] struct {
	route   Router[T]
	targets []*target[T]
	rr      uint64
}

// target is one downstream instance as one sender sees it: its kernel, the
// sender's index among its inputs, and the packet being filled.
type target[T any] struct {
	k     *actors.Kernel[packet[T], ack]
	from  int32
	pool  *bufPool[T]
	stats *instStats // the receiver's
	name  string     // the receiver's stage
	inst  int
	pend  packet[T] // the packet being filled; its items are in items
	items []T       // the elements of pend, in the pooled array pend.buf
	// direct is the receiving instance when it is chained to this sender:
	// it gets the packets by function call (k is nil).
	direct link[T]
}

func newEmitter[T any](g *Graph, st *instStats) *Emitter[T] {
	return &Emitter[T]{g: g, stats: st, wm: math.MinInt64, batch: g.cfg.batch}
}

// Emit sends v downstream. A failure (the graph is stopping) is returned as
// the outcome of the element being handled; the stage need not check it.
func (e *Emitter[T]) Emit(v T) {
	if e.open != openNone {
		e.commit()
	}
	if e.err != nil {
		return
	}
	e.outN++
	if e.wmPend {
		e.placeWM()
	}
	if t := e.one; t != nil { // one edge to one instance: every router picks it
		if t.pend.buf == nil {
			t.pend.buf = t.pool.get()
			t.items = *t.pend.buf
		}
		t.items = append(t.items, v)
		if len(t.items) >= e.batch {
			e.full(t)
		}
	} else {
		for _, ed := range e.edges {
			if len(ed.targets) == 1 {
				e.add(ed.targets[0], v)
				continue
			}
			e.dst = ed.route.route(ed, v, len(ed.targets), e.dst[:0])
			for _, i := range e.dst {
				e.add(ed.targets[i], v)
			}
		}
	}
	if e.timeOf != nil {
		ts := e.timeOf(v)
		if ts >= math.MinInt64+e.lateness && ts-e.lateness > e.wm {
			e.advance(ts - e.lateness)
		}
	}
}

// EmitAll sends vs downstream in order, as Emit would each of them, with
// less work per element where it can: to one downstream instance, without
// event time on this output, the elements are copied into the packets in
// bulk. It does not keep vs.
func (e *Emitter[T]) EmitAll(vs ...T) {
	if e.open != openNone {
		e.commit()
	}
	t := e.one
	if t == nil || e.timeOf != nil {
		for i := range vs {
			e.Emit(vs[i])
		}
		return
	}
	if e.wmPend && len(vs) > 0 {
		e.placeWM()
	}
	for len(vs) > 0 && e.err == nil {
		if t.pend.buf == nil {
			t.pend.buf = t.pool.get()
			t.items = *t.pend.buf
		}
		n := min(len(vs), e.batch-len(t.items))
		t.items = append(t.items, vs[:n]...)
		e.outN += uint64(n)
		vs = vs[n:]
		if len(t.items) >= e.batch {
			e.full(t)
		}
	}
}

// bound records the edges' targets once they are all bound: one target is
// Emit's fast path.
func (e *Emitter[T]) bound() {
	e.one = nil
	if len(e.edges) == 1 && len(e.edges[0].targets) == 1 {
		e.one = e.edges[0].targets[0]
	}
}

// add appends v to t's pending packet, sending it when full.
func (e *Emitter[T]) add(t *target[T], v T) {
	if t.pend.buf == nil {
		t.pend.buf = t.pool.get()
		t.items = *t.pend.buf
	}
	t.items = append(t.items, v)
	if len(t.items) >= e.batch {
		e.full(t)
	}
}

// full sends t's full packet.
func (e *Emitter[T]) full(t *target[T]) {
	if err := e.send(t); err != nil && e.err == nil {
		e.err = err
	}
}

// advance moves this output's watermark to wm: every downstream instance
// sees it after the elements emitted so far. It is placed in the pending
// packets when the next element is emitted or the packets are sent, so a
// run of advances with no element between them costs one mark (the last).
func (e *Emitter[T]) advance(wm int64) {
	if e.open != openNone {
		e.commit() // the mark goes after the element Next handed out
	}
	e.wm = wm
	e.wmPend = true
}

// placeWM puts the output's watermark after the pending elements of every
// target.
func (e *Emitter[T]) placeWM() {
	e.wmPend = false
	wm := e.wm
	for _, ed := range e.edges {
		for _, t := range ed.targets {
			pos := int32(len(t.items))
			if n := len(t.pend.marks); n > 0 && t.pend.marks[n-1].pos == pos {
				t.pend.marks[n-1].wm = wm
				continue
			}
			t.pend.marks = append(t.pend.marks, mark{pos: pos, wm: wm})
		}
	}
}

// setTimes makes times (Stage.EventTimes) this output's event time: per
// element (timeOf) through a run of one in the emitter's own arrays.
func (e *Emitter[T]) setTimes(times func(vs []T, ts []int64)) {
	e.timesOf = times
	e.timeOf = func(v T) int64 {
		e.oneV[0] = v
		if cap(e.times) == 0 {
			e.times = make([]int64, 1, e.batch)
		}
		ts := e.times[:1]
		times(e.oneV[:], ts)
		var zero T
		e.oneV[0] = zero
		return ts[0]
	}
}

// Watermark is the watermark of this output.
func (e *Emitter[T]) Watermark() int64 {
	if e.open != openNone {
		e.commit()
	}
	return e.wm
}

// failure is where the failure of the sends since the last take is kept.
func (e *Emitter[T]) failure() *error { return &e.err }

// take returns and clears the failure of the sends since the last take.
func (e *Emitter[T]) take() error {
	if e.open != openNone {
		e.commit()
	}
	err := e.err
	e.err = nil
	return err
}

// flush sends every pending packet.
func (e *Emitter[T]) flush() error {
	e.settle()
	var first error
	for _, ed := range e.edges {
		for _, t := range ed.targets {
			if t.pend.buf != nil || len(t.pend.marks) > 0 {
				if err := e.send(t); err != nil && first == nil {
					first = err
				}
			}
		}
	}
	return first
}

// settle places the pending watermark and publishes the counts.
func (e *Emitter[T]) settle() {
	if e.open != openNone {
		e.commit()
	}
	if e.wmPend {
		e.placeWM()
	}
	if e.outN != 0 {
		e.stats.out.Add(e.outN)
		e.outN = 0
	}
	if e.timeOf != nil {
		e.stats.wm.Store(e.wm)
	}
}

// end sends every downstream instance the end of this sender's stream, in
// the packet pending for it (one packet carries the last elements, the
// last watermark and the end).
func (e *Emitter[T]) end() error {
	e.settle()
	var first error
	for _, ed := range e.edges {
		for _, t := range ed.targets {
			t.pend.ctl = ctlEOS
			if err := e.send(t); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// send admits t's pending packet into its kernel, waiting for room. Once
// admitted its elements are counted in the receiver's input; when the
// packet then fails as a whole (the graph is stopping), its elements are
// failed there.
func (e *Emitter[T]) send(t *target[T]) error {
	p := t.pend
	t.pend = packet[T]{}
	p.from = t.from
	if p.buf != nil {
		p.items = t.items
		*p.buf = t.items // the array may have grown
	}
	t.items = nil
	n := len(p.items)
	g := e.g
	st := t.stats
	if t.direct != nil { // chained: handled now, on this loop
		st.in.Add(uint64(n))
		t.direct.deliver(p)
		if t.pend.marks == nil {
			t.pend.marks = p.marks[:0] // handled: the array serves again
		}
		return nil
	}
	admit := e.ctx
	if admit == nil {
		admit = g.ctx
	}
	err := t.k.RequestAsyncWithin(admit, g.ctx, p, func(_ ack, err error) {
		if err != nil {
			failPacket(g, t.name, t.inst, st, n, err)
		}
	})
	if err != nil {
		// Not admitted: the failure is the outcome of the emitting element
		// (or of the source's Send), not of the receiver's input.
		t.pool.put(p.buf)
		if g.ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", ErrStopped, err)
		}
		return fmt.Errorf("stream: emit to %q[%d]: %w", t.name, t.inst, err)
	}
	st.in.Add(uint64(n))
	return nil
}

// failPacket accounts for a packet none of whose elements was handled.
func failPacket(g *Graph, stage string, inst int, st *instStats, n int, err error) {
	if n == 0 {
		return
	}
	st.failed.Add(uint64(n))
	if g.ctx.Err() != nil {
		err = fmt.Errorf("%w: %w", ErrStopped, err)
	}
	g.report(&StageError{Stage: stage, Instance: inst, Elements: n, Err: err})
}

// Context is what a stage function knows of where it runs: its stage and
// instance, the instance's event-time watermark, and its timers.
type Context struct {
	stage    string
	instance int
	par      int
	wm       int64
	final    bool // every input has ended: wm is the final watermark
	stats    *instStats
	ctx      context.Context
	timers   *timers
}

// Stage is the stage's name.
func (c *Context) Stage() string { return c.stage }

// Instance is this instance's index, 0 ≤ Instance < Parallelism.
func (c *Context) Instance() int { return c.instance }

// Parallelism is how many instances the stage has.
func (c *Context) Parallelism() int { return c.par }

// Watermark is the instance's event-time watermark: the minimum of its
// inputs' (math.MinInt64 before any, math.MaxInt64 once they have all ended).
func (c *Context) Watermark() int64 { return c.wm }

// Context is the graph's context, cancelled when it stops.
func (c *Context) Context() context.Context { return c.ctx }
