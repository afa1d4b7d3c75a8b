package stream

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"time"

	"github.com/ringactor/ringactor/actors"
)

// Funcs are a stage's functions. Element is required; the others are
// optional. All of them run on the instance's ring-kernel loop, one at a
// time, so they may use the state their factory closed over without locks.
// An error (or a panic) in Element is that element's outcome; an error in
// another function is reported like an element's (a *StageError).
type Funcs[In, Out any] struct {
	// Element handles one input element and emits zero or more outputs.
	Element func(c *Context, v In, out *Emitter[Out]) error
	// Timer handles a processing-time timer set with Context.SetTimer.
	Timer func(c *Context, t Timer, out *Emitter[Out]) error
	// Watermark is called once each time the instance's event-time
	// watermark advances (the minimum over its inputs), before it is passed
	// downstream; the last call, when every input has ended, has
	// math.MaxInt64 (the final watermark). It is called with math.MaxInt64
	// twice only when an input's own watermark reached math.MaxInt64 before
	// the end: the second call is the final one (no element can follow).
	Watermark func(c *Context, wm int64, out *Emitter[Out]) error
	// Flush is called after each packet of input elements (a natural point
	// to flush a writer).
	Flush func(c *Context, out *Emitter[Out]) error
	// Drain is called once, when every input has ended (Graph.Drain), after
	// the final watermark: emit what the stage still holds.
	Drain func(c *Context, out *Emitter[Out]) error

	// watermarkFrom, when set, is the lowest watermark Watermark has work
	// at (the window stage's next window end): below it, and before the
	// final watermark, Watermark is not called.
	watermarkFrom func() int64
	// elementRef, when set, is Element by reference (the window stage's:
	// no copy of the element per call); it may emit only to side outputs.
	elementRef func(c *Context, v *In) error
	// run, when set, handles a run of elements in one call (the window
	// stage's), as elementRef would each of them: it sets *at to the index
	// of the element it is at before it handles it, and returns len(vs)
	// when all of them were handled, or the index of the first one that
	// was not and that element's error (nil when it is a side output's
	// failed send, for outcome to find). Elements before the returned index
	// were handled. Before each element it takes the marks in front of it
	// (ms.below: the quiet ones, applied by ms.settle before anything
	// reads the watermark, and before it returns); it returns the
	// element's index, not handled, when one of them is not quiet (the
	// instance applies it).
	run func(c *Context, vs []In, ms *runMarks, at *int) (int, error)
	// endItems, when set, is called after a packet's elements, before its
	// array goes back to the pool (the window stage's AddBatch).
	endItems func() error
}

// StageOption configures a stage.
type StageOption func(*stageOptions)

type stageOptions struct {
	par int
}

// Parallelism runs n instances of the stage (default 1), each a ring kernel
// with its own state. Route elements to them with Connect's router.
func Parallelism(n int) StageOption { return func(o *stageOptions) { o.par = n } }

// Stage is a declared stage: an Inlet of In and an Outlet of Out.
type Stage[In, Out any] struct {
	n        *node
	newFuncs func() Funcs[In, Out]
	insts    []*instance[In, Out]
	pool     *bufPool[In] // the graph's pool of In (poolOf)
	timeOf   func(Out) int64
	lateness int64
	sides    []func(i int) output // side outputs: their emitter of instance i
	// inPlace handles a packet of a MapInPlace stage whole, when it can
	// (false: element by element); took: its array went on downstream
	inPlace func(in *instance[In, Out], p packet[In]) (handled, took bool)
}

// NewStage declares a stage. newFuncs runs once per instance, at Start
// before anything is launched: the state it creates belongs to that
// instance for the graph's life (a panic in a stage function fails only the
// element that caused it; the state is kept). A newFuncs that panics, or
// returns Funcs without Element, fails Start with ErrInvalidGraph (and, for
// a panic, ErrPanic) before any kernel is launched.
func NewStage[In, Out any](g *Graph, name string, newFuncs func() Funcs[In, Out], opts ...StageOption) *Stage[In, Out] {
	o := stageOptions{par: 1}
	for _, opt := range opts {
		opt(&o)
	}
	s := &Stage[In, Out]{n: &node{name: name, par: o.par, needsInput: true, loop: true}, newFuncs: newFuncs}
	s.pool = poolOf[In](g)
	g.add(s.n)
	if newFuncs == nil {
		g.mu.Lock()
		g.fail(fmt.Errorf("%w: stage %q has no functions", ErrInvalidGraph, name))
		g.mu.Unlock()
	}
	for i := 0; i < o.par && i <= MaxParallelism; i++ {
		st := &instStats{}
		st.wm.Store(math.MinInt64)
		s.n.stats = append(s.n.stats, st)
		s.n.drained = append(s.n.drained, make(chan struct{}))
		in := &instance[In, Out]{s: s, idx: i, stats: st, out: newEmitter[Out](g, st)}
		in.out.fire = in.fireTimer
		s.insts = append(s.insts, in)
	}
	s.n.prepare = s.prepare
	s.n.launch = s.launch
	s.n.stop = s.stop
	s.n.depth = func(i int) int64 {
		if k := s.insts[i].k; k != nil {
			return k.Telemetry().Depth
		}
		return 0
	}
	return s
}

// FlatMap declares a stateless stage that emits zero or more outputs per input.
func FlatMap[In, Out any](g *Graph, name string, fn func(v In, out *Emitter[Out]) error, opts ...StageOption) *Stage[In, Out] {
	var f func() Funcs[In, Out]
	if fn != nil {
		f = func() Funcs[In, Out] {
			return Funcs[In, Out]{Element: func(_ *Context, v In, out *Emitter[Out]) error { return fn(v, out) }}
		}
	}
	return NewStage(g, name, f, opts...)
}

// Map declares a stateless stage that emits one output per input.
func Map[In, Out any](g *Graph, name string, fn func(In) (Out, error), opts ...StageOption) *Stage[In, Out] {
	var f func() Funcs[In, Out]
	if fn != nil {
		f = func() Funcs[In, Out] {
			return Funcs[In, Out]{Element: func(_ *Context, v In, out *Emitter[Out]) error {
				r, err := fn(v)
				if err == nil {
					out.Emit(r)
				}
				return err
			}}
		}
	}
	return NewStage(g, name, f, opts...)
}

// EventTime makes the stage's output carry event time: ts(v) is each output
// element's time, and the output's watermark is the largest ts so far minus
// lateness (the allowed out-of-orderness, ≥ 0). The watermark travels with
// the elements; downstream, an element is late when the watermark before it
// has passed its time. Watermarks from the stage's inputs are not passed on.
func (s *Stage[In, Out]) EventTime(ts func(Out) int64, lateness int64) *Stage[In, Out] {
	g := s.n.g
	if ts == nil || lateness < 0 {
		g.mu.Lock()
		g.fail(fmt.Errorf("%w: stage %q: event time needs a function and a lateness ≥ 0", ErrInvalidGraph, s.n.name))
		g.mu.Unlock()
		return s
	}
	s.timeOf, s.lateness = ts, lateness
	for _, in := range s.insts {
		in.out.timeOf, in.out.timesOf, in.out.lateness = ts, nil, lateness
	}
	return s
}

// EventTimes is EventTime with the event times read a run of elements at a
// time: times writes the time of each vs[i] into ts[i] (len(ts) ==
// len(vs)), one call where EventTime calls its function per element. It
// pays where the stage hands whole packets on (MapInPlace): the loop over
// a packet's times is then in times, without a call per element. The
// watermarks are EventTime's, between the same elements.
func (s *Stage[In, Out]) EventTimes(times func(vs []Out, ts []int64), lateness int64) *Stage[In, Out] {
	if times == nil {
		return s.EventTime(nil, lateness)
	}
	one := func(v Out) int64 { // (a flag for the stage; each emitter reads its own)
		var ts [1]int64
		times([]Out{v}, ts[:])
		return ts[0]
	}
	if s.EventTime(one, lateness); s.timeOf == nil {
		return s // (invalid: the graph has failed)
	}
	for _, in := range s.insts {
		in.out.setTimes(times)
	}
	return s
}

// Name is the stage's name.
func (s *Stage[In, Out]) Name() string { return s.n.name }

func (s *Stage[In, Out]) outNode() *node { return s.n }
func (s *Stage[In, Out]) inNode() *node  { return s.n }

func (s *Stage[In, Out]) emitters() []*Emitter[Out] {
	out := make([]*Emitter[Out], len(s.insts))
	for i, in := range s.insts {
		out[i] = in.out
	}
	return out
}

func (s *Stage[In, Out]) targets(from int32) []*target[In] {
	ts := make([]*target[In], len(s.insts))
	for i, in := range s.insts {
		ts[i] = &target[In]{k: in.k, from: from, pool: s.pool, stats: in.stats, name: s.n.name, inst: i}
		if s.n.chained {
			ts[i].direct = in
		}
	}
	return ts
}

// prepare builds each instance's functions (Start runs it for every stage
// before it launches anything): a factory that panics or returns no
// Element is a build error.
func (s *Stage[In, Out]) prepare() error {
	for _, in := range s.insts {
		f, err := s.build(in.idx)
		if err != nil {
			return err
		}
		in.f = f
		if f.Watermark != nil {
			// One closure for every watermark (advance), rather than one
			// allocated per call.
			in.wmCall = func() error { return in.f.Watermark(&in.c, in.wmArg, in.out) }
		}
	}
	return nil
}

// build runs the stage's factory for instance i, turning a panic or a
// missing Element into ErrInvalidGraph.
func (s *Stage[In, Out]) build(i int) (f Funcs[In, Out], err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: stage %q[%d]: the factory panicked (%w): %v", ErrInvalidGraph, s.n.name, i, ErrPanic, p)
		}
	}()
	f = s.newFuncs()
	if f.Element == nil {
		return f, fmt.Errorf("%w: stage %q[%d]: the factory returned Funcs without Element", ErrInvalidGraph, s.n.name, i)
	}
	return f, nil
}

// launch launches each instance's ring kernel (prepare has built its
// functions).
func (s *Stage[In, Out]) launch(ctx context.Context) error {
	if err := registerPacket[In](); err != nil {
		return err
	}
	g := s.n.g
	for _, in := range s.insts {
		in.init(g)
		if s.n.chained {
			continue // it runs on its upstream's loop
		}
		// Every packet is a request with its own reply callback
		// (RequestAsync): the kernel's receive stream, where outcomes of
		// messages sent without one go, stays empty, and its buffer need
		// not be the default's (some 24 KB a kernel).
		kopts := []actors.KernelOption{actors.WithCapacity(g.cfg.capacity), actors.WithOutputCapacity(1)}
		if g.cfg.wait != nil {
			kopts = append(kopts, actors.WithWaitStrategy(*g.cfg.wait))
		}
		def := actors.NewKernel(g.kernelID(s.n, in.idx), func() actors.Handler[packet[In], ack] { return in.handle }, kopts...)
		k, err := actors.Launch(ctx, g.rt, def)
		if err != nil {
			return err
		}
		in.k = k
		if err := k.Activate(ctx); err != nil {
			return errors.Join(err, k.Terminate(context.WithoutCancel(ctx)))
		}
	}
	return nil
}

// stop ends the instances' timers and terminates their kernels.
func (s *Stage[In, Out]) stop(ctx context.Context) error {
	var errs []error
	for _, in := range s.insts {
		if in.c.timers != nil {
			in.c.timers.stop()
		}
		if in.k != nil {
			if err := in.k.Terminate(ctx); err != nil && !errors.Is(err, actors.ErrTerminated) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// instance is one parallel instance of a stage: the state its ring kernel's
// handler works on.
type instance[In, Out any] struct {
	s     *Stage[In, Out]
	idx   int
	k     *actors.Kernel[packet[In], ack]
	stats *instStats
	out   *Emitter[Out]
	f     Funcs[In, Out]
	c     Context

	// inputs' watermarks and ends, by sender index
	inWM      []int64
	ended     []bool
	left      int // senders that have not ended
	done      bool
	finalSent bool     // the final watermark has been delivered
	extra     []output // side outputs
	extraErr  []*error // their failures (output.failure)

	// chained (runs on its upstream's loop): how to fire its timers there
	upFire func()
	// in a run function (Funcs.run): the index in the run of the element
	// being handled, for elements' recover; -1 outside one
	at int
	// Watermark's call for hook, and its watermark argument
	wmCall func() error
	wmArg  int64
	// the marks of the packet a run function is given (runs)
	rm runMarks
}

// output is what an instance does with its side outputs' emitters.
type output interface {
	advance(wm int64)
	flush() error
	end() error
	take() error
	failure() *error // where take's error is kept (outcome's cheap check)
	tick(now time.Time)
}

// init prepares the instance (its functions built) before its kernel
// launches.
func (in *instance[In, Out]) init(g *Graph) {
	s := in.s
	in.c = Context{stage: s.n.name, instance: in.idx, par: s.n.par, wm: math.MinInt64, ctx: g.ctx, stats: in.stats}
	in.c.timers = &timers{fire: in.fireTimer}
	in.inWM = make([]int64, s.n.senders)
	for i := range in.inWM {
		in.inWM[i] = math.MinInt64
	}
	in.ended = make([]bool, s.n.senders)
	in.left = s.n.senders
	in.rm.apply, in.rm.pend = in.quietWM, math.MinInt64
	in.extra, in.extraErr = in.extra[:0], in.extraErr[:0]
	for _, side := range s.sides {
		x := side(in.idx)
		in.extra = append(in.extra, x)
		in.extraErr = append(in.extraErr, x.failure())
	}
}

// handle is the instance's ring-kernel handler: one packet.
func (in *instance[In, Out]) handle(_ context.Context, p packet[In]) (ack, error) {
	if in.done {
		// Only a timer can come after the end (each sender ends once).
		return ack{}, nil
	}
	mi, done := 0, uint64(0)
	whole, took := false, false
	if in.s.inPlace != nil {
		whole, took = in.s.inPlace(in, p)
	}
	if whole {
		mi = len(p.marks) // a MapInPlace packet, handled whole
		if took {
			p.buf = nil // (the array went on downstream)
		}
	} else {
		for i := 0; i < len(p.items); {
			i, mi = in.elements(p, i, mi, &done)
		}
		if in.f.endItems != nil {
			in.hook("add", in.f.endItems)
		}
		in.stats.done.Add(done)
	}
	for ; mi < len(p.marks); mi++ {
		in.senderWM(p.from, p.marks[mi].wm)
	}
	if p.buf != nil {
		in.s.pool.put(p.buf)
	}
	items := len(p.items) > 0
	switch p.ctl {
	case ctlTimer:
		in.tick(time.Now())
	case ctlEOS:
		if items {
			// The sender's last elements came with its end: the packet
			// ends (Flush, outputs flushed) before the instance's input does.
			in.endPacket(true)
			items = false
		}
		in.senderEnd(p.from)
	}
	in.endPacket(items)
	return ack{}, nil
}

// runTimers runs the instance's due timers.
func (in *instance[In, Out]) runTimers(now time.Time) {
	in.c.timers.due(now, func(t Timer) {
		if in.f.Timer != nil {
			in.hook("timer", func() error { return in.f.Timer(&in.c, t, in.out) })
		}
	})
}

// endPacket ends a packet the instance has handled (items: it held
// elements): Flush, the counts and watermark published, every output
// flushed.
func (in *instance[In, Out]) endPacket(items bool) {
	if in.f.Flush != nil && items {
		in.hook("flush", func() error { return in.f.Flush(&in.c, in.out) })
	}
	in.publish()
	if err := in.out.flush(); err != nil {
		in.report(0, nil, err)
	}
	in.out.take()
	for _, x := range in.extra {
		if err := x.flush(); err != nil {
			in.report(0, nil, err)
		}
		x.take()
	}
}

// publish makes the instance's watermark visible to Stats.
func (in *instance[In, Out]) publish() {
	if in.s.timeOf == nil {
		in.stats.wm.Store(in.c.wm)
	}
}

// elements runs Element on p's elements from i (and applies the
// watermarks between them, from mark mi) until the end of the packet or a
// panic, which fails that element; it returns where to go on. An element's
// error or panic is its outcome; done counts the others.
func (in *instance[In, Out]) elements(p packet[In], i, mi int, done *uint64) (next, nextMark int) {
	in.at = -1 // in a run: the index in it of the element being handled
	defer func() {
		if pv := recover(); pv != nil {
			if at := in.at; at >= 0 { // the run's elements before it were handled
				*done += uint64(at)
				i += at
			}
			if in.f.run != nil {
				in.rm.settle()
				mi = in.rm.next // and the marks before it applied
				in.rm.marks = nil
			}
			in.failed(pv, fmt.Errorf("%w: %v\n%s", ErrPanic, pv, debug.Stack()))
			next, nextMark = i+1, mi
		}
	}()
	if in.f.run != nil {
		in.runs(p, &i, &mi, done, &in.at)
		return i, mi
	}
	for ; i < len(p.items); i++ {
		for mi < len(p.marks) && int(p.marks[mi].pos) <= i {
			in.senderWM(p.from, p.marks[mi].wm)
			mi++
		}
		var err error
		if ref := in.f.elementRef; ref != nil {
			err = ref(&in.c, &p.items[i])
		} else {
			err = in.f.Element(&in.c, p.items[i], in.out)
		}
		if err == nil && in.out.err == nil && in.out.open == openNone && len(in.extraErr) == 0 {
			*done++ // (outcome's common case, without the call)
			continue
		}
		if in.outcome(err) {
			*done++
		}
	}
	return i, mi
}

// runs is elements for a stage with a run function: the elements up to
// the next mark that is not quiet (runMarks) go to it in one call. *i and
// *mi are kept up to date, and *at is the index in the run of the element
// being handled (-1: not in a run), for elements' recover to find the
// element that panicked.
func (in *instance[In, Out]) runs(p packet[In], i, mi *int, done *uint64, at *int) {
	rm := &in.rm // rm.next is *mi while it runs (elements' recover reads it)
	rm.marks, rm.next, rm.from = p.marks, *mi, p.from
	for *i < len(p.items) {
		for rm.next < len(p.marks) && int(p.marks[rm.next].pos) <= *i {
			in.senderWM(p.from, p.marks[rm.next].wm)
			rm.next++
		}
		if !in.clean() {
			// A failure is pending (a send of Watermark's): the next
			// element's outcome, as elements would make it.
			var err error
			if ref := in.f.elementRef; ref != nil {
				err = ref(&in.c, &p.items[*i])
			} else {
				err = in.f.Element(&in.c, p.items[*i], in.out)
			}
			if in.outcome(err) {
				*done++
			}
			*i++
			continue
		}
		end := len(p.items)
		rm.base, rm.one = *i, in.canQuiet(p.from)
		*at = 0
		n, err := in.f.run(&in.c, p.items[*i:end], rm, at)
		*at = -1
		*done += uint64(n)
		*i += n
		if *i < end && (rm.next >= len(p.marks) || int(p.marks[rm.next].pos) > *i) {
			// (else the run stopped in front of a mark that is not quiet)
			if in.outcome(err) {
				*done++
			}
			*i++
		}
	}
	*mi = rm.next
	rm.marks = nil
}

// clean reports whether no send of the instance's outputs has failed since
// the last outcome.
func (in *instance[In, Out]) clean() bool {
	if in.out.err != nil || in.out.open != openNone {
		return false
	}
	for _, p := range in.extraErr {
		if *p != nil {
			return false
		}
	}
	return true
}

// outcome accounts for an element whose function returned err (or whose
// emits failed) and reports whether it was handled.
func (in *instance[In, Out]) outcome(err error) bool {
	if in.out.open != openNone {
		in.out.commit() // (the element Next handed out is sent now: its send's failure is this element's)
	}
	if err == nil && in.out.err == nil {
		ok := true
		for _, p := range in.extraErr {
			ok = ok && *p == nil
		}
		if ok {
			return true // (the common case, without a call per side output)
		}
	}
	if in.out.err != nil && err == nil {
		err = in.out.err
	}
	in.out.err = nil
	for _, x := range in.extra {
		if eerr := x.take(); err == nil {
			err = eerr
		}
	}
	if err != nil {
		in.failed(nil, err)
		return false
	}
	return true
}

// failed accounts for an element whose outcome is err.
func (in *instance[In, Out]) failed(pv any, err error) {
	in.out.take()
	for _, x := range in.extra {
		x.take()
	}
	in.stats.failed.Add(1)
	in.report(1, pv, err)
}

// hook runs one of the optional functions, reporting its error or panic.
func (in *instance[In, Out]) hook(what string, f func() error) {
	var pv any
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				pv = p
				err = fmt.Errorf("%w: %v\n%s", ErrPanic, p, debug.Stack())
			}
		}()
		return f()
	}()
	if err != nil {
		in.report(0, pv, fmt.Errorf("%s: %w", what, err))
	}
}

func (in *instance[In, Out]) report(n int, pv any, err error) {
	in.s.n.g.report(&StageError{Stage: in.s.n.name, Instance: in.idx, Elements: n, Panic: pv, Err: err})
}

// senderWM records sender from's watermark and advances the instance's.
func (in *instance[In, Out]) senderWM(from int32, wm int64) {
	if from < 0 || int(from) >= len(in.inWM) || wm <= in.inWM[from] {
		return
	}
	in.inWM[from] = wm
	in.advance()
}

// advance recomputes the instance's watermark (the minimum over the senders
// that have not ended) and, when it has grown, fires Watermark and passes
// it on.
func (in *instance[In, Out]) advance() {
	wm := int64(math.MaxInt64)
	for i, w := range in.inWM {
		if !in.ended[i] {
			wm = min(wm, w)
		}
	}
	if wm < in.c.wm || (wm == in.c.wm && (!in.c.final || in.finalSent)) {
		return // (the final watermark is delivered once even when a real one was already math.MaxInt64)
	}
	in.finalSent = in.c.final
	in.c.wm = wm
	if in.f.Watermark != nil && (in.f.watermarkFrom == nil || in.c.final || wm >= in.f.watermarkFrom()) {
		in.wmArg = wm
		in.hook("watermark", in.wmCall)
	}
	if in.c.final {
		// The final watermark is not passed on as a mark: the end of
		// stream that follows carries it, and each downstream instance
		// delivers it once, when its own inputs have all ended.
		return
	}
	if in.s.timeOf == nil {
		in.out.advance(wm)
	}
	for _, x := range in.extra {
		x.advance(wm)
	}
}

// senderEnd records that sender from has ended; after the last one the
// instance drains and ends its own output.
func (in *instance[In, Out]) senderEnd(from int32) {
	if from < 0 || int(from) >= len(in.ended) || in.ended[from] {
		return
	}
	in.ended[from] = true
	in.left--
	if in.left > 0 {
		in.advance()
		return
	}
	in.c.final = true
	in.advance() // to math.MaxInt64: the final watermark
	if in.f.Drain != nil {
		in.hook("drain", func() error { return in.f.Drain(&in.c, in.out) })
	}
	in.done = true
	in.publish()
	if err := in.out.end(); err != nil {
		in.report(0, nil, err)
	}
	for _, x := range in.extra {
		if err := x.end(); err != nil {
			in.report(0, nil, err)
		}
	}
	close(in.s.n.drained[in.idx])
}
