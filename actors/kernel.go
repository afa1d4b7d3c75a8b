package actors

import (
	"context"
	"fmt"
	"reflect"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/lifecycle"
	"github.com/ringactor/ringactor/messages"
	"github.com/ringactor/ringactor/supervision"
	"github.com/ringactor/ringactor/telemetry"
)

// epoch anchors the monotonic timestamps of slots.
var (
	epoch     = time.Now()
	epochUnix = epoch.UnixNano()
)

func monoNow() int64 { return int64(time.Since(epoch)) }

// slot is one message in a kernel's input ring or overflow.
type slot[Req, Resp any] struct {
	id    uint64
	enq   int64           // admission time, monoNow
	ctx   context.Context // the requester's context, or the kernel's for a Send
	msg   Req
	fwd   error         // set when an upstream kernel forwards a failure: skip the handler
	w     *waiter[Resp] // a direct, typed requester
	reply replier       // any other reply target
}

// anyKernel is what the runtime's registry holds: a kernel of any types.
type anyKernel interface {
	kernelID() string
	messageType() reflect.Type
	replyType() reflect.Type
	terminalType() reflect.Type
	state() lifecycle.State
	launch(ctx context.Context) error
	pid() *actor.PID
	stats() telemetry.KernelStats
	done() <-chan struct{}
	abort()
}

// inbox is a kernel that takes messages of type T from another kernel or a
// requester at the head of a chain.
type inbox[T any] interface {
	anyKernel
	forward(ctx, hctx context.Context, msg T, id uint64, enq int64, fwd error, reply replier) error
	checkMessage(msg T) error
}

// kernel is the state of one ring kernel shared by its actor, its loop and
// its senders: rings, control block, admission, delivery.
type kernel[Req, Resp any] struct {
	def     *KernelDef[Req, Resp]
	rt      *Runtime
	cb      *ring.ControlBlock
	wake    *ring.Signal
	in      *ring.Ring[slot[Req, Resp]]
	out     chan output[Resp]
	down    inbox[Resp]
	term    reflect.Type
	nilable bool
	ctx     context.Context // the kernel's lifetime; cancelled by abort
	cancel  context.CancelFunc
	ended   chan struct{} // closed when the kernel is terminated and drained
	waiters sync.Pool

	mu       sync.Mutex // admission: the producer side of in, overflow, state
	st       lifecycle.State
	overflow queue[slot[Req, Resp]]
	space    chan struct{} // closed when room frees for blocked senders
	self     *actor.PID

	stA       atomic.Uint32 // copy of st for lock-free reads
	ovLen     atomic.Int64  // overflow.len() for the loop's cheap check
	blocked   atomic.Bool   // senders wait for room (space != nil)
	rejectAll atomic.Bool   // draining answers drainCause instead of handling
	// drainCause is what a rejecting drain answers (ErrTerminated, joined
	// with the last fault after a supervisor gave up); written before
	// rejectAll is set, read after it is seen.
	drainCause error

	// where the current incarnation runs (a device kernel's backend, or
	// PlacementCPU); nil before the first start
	placement atomic.Pointer[string]

	// firstHandler is the handler launch built for the first incarnation
	// (nil for a device kernel); the actor takes it at its first start.
	firstHandler Handler[Req, Resp]

	// owned by the actor goroutine
	loopRunning bool
	// devHeld is a message a device pump took from the ring but could not
	// yet submit (the device's input ring was full); the next incarnation
	// submits it first.
	devHeld     *slot[Req, Resp]
	loopDone    chan struct{}
	lastFault   error
	terminators []func(lifecycle.Reply)
}

func newKernel[Req, Resp any](rt *Runtime, def *KernelDef[Req, Resp]) *kernel[Req, Resp] {
	k := &kernel[Req, Resp]{def: def, rt: rt, cb: ring.NewControlBlock(), wake: ring.NewSignal(), ended: make(chan struct{})}
	k.ctx, k.cancel = context.WithCancel(context.Background())
	k.waiters.New = func() any { return newWaiter[Resp]() }
	k.term = reflect.TypeFor[Resp]()
	switch reflect.TypeFor[Req]().Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		k.nilable = true
	}
	return k
}

func (k *kernel[Req, Resp]) kernelID() string           { return k.def.id }
func (k *kernel[Req, Resp]) messageType() reflect.Type  { return reflect.TypeFor[Req]() }
func (k *kernel[Req, Resp]) replyType() reflect.Type    { return reflect.TypeFor[Resp]() }
func (k *kernel[Req, Resp]) terminalType() reflect.Type { return k.term }
func (k *kernel[Req, Resp]) state() lifecycle.State     { return lifecycle.State(k.stA.Load()) }
func (k *kernel[Req, Resp]) done() <-chan struct{}      { return k.ended }
func (k *kernel[Req, Resp]) abort()                     { k.cancel() }

func (k *kernel[Req, Resp]) pid() *actor.PID {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.self
}

// setState records the lifecycle state; the caller holds mu.
func (k *kernel[Req, Resp]) setState(s lifecycle.State) {
	k.st = s
	k.stA.Store(uint32(s))
}

// launch allocates the rings, resolves the downstream kernel and spawns the
// kernel actor under the orchestrator; the loop starts with its gate closed.
// The transition is checked before anything is replaced, under the admission
// lock, so a second or concurrent Launch fails with ErrInvalidTransition and
// changes nothing.
func (k *kernel[Req, Resp]) launch(ctx context.Context) error {
	if _, err := messages.IDOf[Req](); err != nil {
		return kernelErr(k.def.id, err)
	}
	if _, err := messages.IDOf[Resp](); err != nil {
		return kernelErr(k.def.id, err)
	}
	if err := ctx.Err(); err != nil {
		return kernelErr(k.def.id, err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	next, err := lifecycle.Transition(k.st, lifecycle.Launch)
	if err != nil {
		return kernelErr(k.def.id, err)
	}
	down, term := k.down, k.term
	if k.def.downstream != "" {
		d, err := k.rt.lookup(k.def.downstream)
		if err != nil {
			return kernelErr(k.def.id, fmt.Errorf("downstream: %w", err))
		}
		in, ok := d.(inbox[Resp])
		if !ok {
			return &WrongMessageTypeError{Kernel: d.kernelID(), Role: "message", Want: d.messageType(), Got: reflect.TypeFor[Resp]()}
		}
		down, term = in, in.terminalType()
	}
	in, err := ring.NewRing[slot[Req, Resp]](k.def.capacity)
	if err != nil {
		return kernelErr(k.def.id, err)
	}
	// The first incarnation's handler is built now, so a factory that
	// returns nil (or panics) is refused at launch, not at the first message.
	var first Handler[Req, Resp]
	if k.def.device == 0 {
		if first, err = k.buildHandler(); err != nil {
			return kernelErr(k.def.id, err)
		}
	}
	k.in, k.out, k.down, k.term, k.firstHandler = in, make(chan output[Resp], k.def.outCap), down, term, first
	k.setState(next)
	// Spawning runs no code of this kernel's actor synchronously (Started is
	// delivered on the actor's own goroutine), so it may happen under mu.
	pid, err := k.rt.orch.spawn(ctx, k.def.id, k.props())
	if err != nil {
		k.setState(lifecycle.Created)
		return kernelErr(k.def.id, err)
	}
	k.self = pid
	return nil
}

// buildHandler runs the handler factory, turning a nil handler or a panic
// into ErrInvalidKernel.
func (k *kernel[Req, Resp]) buildHandler() (h Handler[Req, Resp], err error) {
	defer func() {
		if p := recover(); p != nil {
			h, err = nil, fmt.Errorf("%w: the handler factory panicked: %v", ErrInvalidKernel, p)
		}
	}()
	if h = k.def.newHandler(); h == nil {
		return nil, fmt.Errorf("%w: the handler factory returned a nil handler", ErrInvalidKernel)
	}
	return h, nil
}

// props are the kernel actor's Proto.Actor properties: its producer and the
// mailbox whose user messages feed the ring.
func (k *kernel[Req, Resp]) props() *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor { return &kernelActor[Req, Resp]{k: k} },
		actor.WithMailbox(k.mailbox()))
}

// acceptErr says why the kernel takes no message now; the caller holds mu.
func (k *kernel[Req, Resp]) acceptErr() error {
	switch k.st {
	case lifecycle.Created:
		return kernelErr(k.def.id, ErrNotLaunched)
	case lifecycle.Terminated:
		return kernelErr(k.def.id, ErrTerminated)
	}
	return nil
}

// admit puts s into the ring, or behind it into the overflow, applying the
// backpressure policy when both are full. wait says whether the sender may be
// made to wait: a message posted to the kernel's PID may not (it would stall
// the sending actor or a remote endpoint reader), so under Block it is
// rejected with ErrRingFull when ring and overflow are full, never queued
// without bound.
func (k *kernel[Req, Resp]) admit(ctx context.Context, s slot[Req, Resp], wait bool) error {
	for {
		k.mu.Lock()
		if err := k.acceptErr(); err != nil {
			k.mu.Unlock()
			return err
		}
		if k.overflow.len() == 0 && k.in.TryPush(s) {
			k.mu.Unlock()
			k.wake.Notify()
			return nil
		}
		if k.overflow.len() < k.def.overflow {
			k.overflow.push(s)
			k.ovLen.Store(int64(k.overflow.len()))
			k.mu.Unlock()
			k.wake.Notify()
			return nil
		}
		switch {
		case k.def.policy == Reject, k.def.policy == Block && !wait:
			k.cb.Dropped.Add(1)
			k.mu.Unlock()
			return &BackpressureError{Kernel: k.def.id, MessageID: s.id, Policy: k.def.policy, Err: ErrRingFull}
		case k.def.policy == DropOldest:
			var old slot[Req, Resp]
			if k.overflow.len() > 0 {
				old = k.overflow.pop()
				k.overflow.push(s)
			} else {
				old = s
			}
			k.cb.Dropped.Add(1)
			k.mu.Unlock()
			// The evicted message (the new one when there is no overflow to
			// evict from) gets ErrDropped as its outcome, like any other.
			if !wait {
				ctx = expired // a PID sender cannot wait for room either
			}
			k.deliverEvicted(ctx, &old, &BackpressureError{Kernel: k.def.id, MessageID: old.id, Policy: DropOldest, Err: ErrDropped})
			return nil
		}
		ch := k.space
		if ch == nil {
			ch = make(chan struct{})
			k.space = ch
		}
		// Announce the wait, then look at the ring once more: the loop pops
		// without the lock, and either it sees blocked (and wakes us when it
		// refills) or we see the slot it freed (both sides are sequentially
		// consistent atomics), so no wake-up is lost.
		k.blocked.Store(true)
		if k.in.Free() > 0 {
			k.mu.Unlock()
			continue
		}
		k.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return kernelErr(k.def.id, ctx.Err())
		}
	}
}

// wakeSenders releases senders blocked on a full kernel; the caller holds mu.
func (k *kernel[Req, Resp]) wakeSenders() {
	if k.space != nil {
		close(k.space)
		k.space = nil
		k.blocked.Store(false)
	}
}

// refill moves overflow into the ring. Called by the loop, which is the
// ring's consumer; holding mu makes it the producer for the moment.
func (k *kernel[Req, Resp]) refill() {
	k.mu.Lock()
	for k.overflow.len() > 0 && k.in.TryPush(k.overflow.front()) {
		k.overflow.pop()
	}
	k.ovLen.Store(int64(k.overflow.len()))
	if k.overflow.len() < k.def.overflow || k.in.Free() > 0 {
		k.wakeSenders()
	}
	k.mu.Unlock()
}

// ready reports whether the loop has a message to take.
func (k *kernel[Req, Resp]) ready() bool { return !k.in.Empty() || k.ovLen.Load() != 0 }

// poll takes one message and handles it; the loop's unit of work.
func (k *kernel[Req, Resp]) poll(h Handler[Req, Resp], draining bool) (bool, error) {
	s, ok := k.next()
	if !ok {
		return false, nil
	}
	return true, k.handle(h, &s, draining)
}

// next takes the oldest admitted message, refilling the ring from the
// overflow (and waking blocked senders) as it goes.
func (k *kernel[Req, Resp]) next() (slot[Req, Resp], bool) {
	s, ok := k.in.TryPop()
	if !ok {
		if k.ovLen.Load() == 0 {
			return s, false
		}
		k.refill()
		if s, ok = k.in.TryPop(); !ok {
			return s, false
		}
	} else if k.ovLen.Load() != 0 || k.blocked.Load() {
		k.refill()
	}
	return s, true
}

// handle runs the handler on one message and delivers its outcome. It
// returns a fault when the decider wants the kernel restarted.
func (k *kernel[Req, Resp]) handle(h Handler[Req, Resp], s *slot[Req, Resp], draining bool) error {
	var zero Resp
	if err := k.screen(s, draining); err != nil {
		k.finish(s, zero, err, false)
		return nil
	}
	resp, ee := k.invoke(h, s)
	if ee == nil {
		k.finish(s, resp, nil, false)
		return nil
	}
	k.finish(s, zero, ee, true)
	if draining || k.def.decider(ee) == supervision.Resume {
		return nil
	}
	return ee
}

// screen says why a message must not run, or nil: a failure forwarded from
// upstream, a drain that rejects, a requester that gave up, a kernel aborted
// by a Terminate whose context ended. The CPU loop and the device pump both
// screen every message with it.
func (k *kernel[Req, Resp]) screen(s *slot[Req, Resp], draining bool) error {
	switch {
	case s.fwd != nil:
		return s.fwd
	case draining && k.rejectAll.Load():
		return kernelErr(k.def.id, k.drainCause)
	case draining && k.def.drain == DrainReject:
		return kernelErr(k.def.id, ErrTerminated)
	}
	if err := s.ctx.Err(); err != nil { // the requester gave up before its turn
		if s.ctx == k.ctx {
			// Not a requester's context but the kernel's own: a Terminate
			// whose context ended aborted the kernel. The message did not run.
			err = fmt.Errorf("%w: not handled (the terminate's context ended before its turn: %w)", ErrTerminated, err)
		}
		return kernelErr(k.def.id, err)
	}
	return nil
}

// invoke calls the handler, turning an error or a panic into an ExecutionError.
func (k *kernel[Req, Resp]) invoke(h Handler[Req, Resp], s *slot[Req, Resp]) (resp Resp, ee *gpu.ExecutionError) {
	defer func() {
		if p := recover(); p != nil {
			ee = &gpu.ExecutionError{Kernel: k.def.id, MessageID: s.id, Err: fmt.Errorf("panic: %v", p), Panic: p, Stack: debug.Stack()}
		}
	}()
	resp, err := h(s.ctx, s.msg)
	if err != nil {
		return resp, &gpu.ExecutionError{Kernel: k.def.id, MessageID: s.id, Err: err}
	}
	return resp, nil
}

// finish records one handled message and delivers its outcome.
func (k *kernel[Req, Resp]) finish(s *slot[Req, Resp], resp Resp, err error, failed bool) {
	now := monoNow()
	k.cb.RecordMessage(time.Duration(now-s.enq), failed, epochUnix+now)
	k.deliver(s, resp, err)
}

// deliver is the reply pump: the outcome goes to the direct requester, down
// the chain, to a reply target, or to the receive stream.
func (k *kernel[Req, Resp]) deliver(s *slot[Req, Resp], resp Resp, err error) {
	switch {
	case s.w != nil:
		if err != nil {
			s.w.fail(err)
		} else {
			s.w.succeed(resp)
		}
	case k.down != nil:
		hctx := s.ctx
		if hctx == k.ctx {
			hctx = nil // a Send: the downstream kernel's own context
		}
		if ferr := k.down.forward(k.ctx, hctx, resp, s.id, s.enq, err, s.reply); ferr != nil {
			k.deliverLocal(s, fmt.Errorf("forwarding to %q: %w", k.def.downstream, ferr))
		}
	case s.reply != nil:
		if err != nil {
			s.reply.fail(err)
			return
		}
		switch r := s.reply.(type) {
		case typedReplier[Resp]:
			r.succeed(resp)
		case anyReplier:
			r.succeedAny(resp)
		default:
			r.fail(&WrongMessageTypeError{Kernel: k.def.id, Role: "reply", Want: k.term, Got: reflect.TypeFor[Resp]()})
		}
	default:
		k.emit(output[Resp]{id: s.id, resp: resp, err: err})
	}
}

// deliverLocal reports an error to the message's own reply target, or to
// this kernel's receive stream when it has none.
func (k *kernel[Req, Resp]) deliverLocal(s *slot[Req, Resp], err error) {
	if s.reply != nil {
		s.reply.fail(err)
		return
	}
	k.emit(output[Resp]{id: s.id, err: err})
}

// emit appends to the receive stream, waiting for a reader while it is full.
// Only an aborted kernel (its runtime closed without readers) gives up, and
// counts the lost output as dropped.
func (k *kernel[Req, Resp]) emit(o output[Resp]) {
	if !k.emitWithin(context.Background(), o) {
		k.cb.Dropped.Add(1)
	}
}

// emitWithin appends to the receive stream, waiting for a reader while it is
// full, until the kernel is aborted or ctx ends. It reports whether the
// output was delivered.
func (k *kernel[Req, Resp]) emitWithin(ctx context.Context, o output[Resp]) bool {
	select {
	case k.out <- o:
		return true
	default:
	}
	select {
	case k.out <- o:
		return true
	case <-k.ctx.Done():
	case <-ctx.Done():
	}
	return false
}

// expired is a context that has already ended: waiting under it never waits.
var expired = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// deliverEvicted delivers the ErrDropped outcome of a message evicted at
// admission: to the message's own target, or to the receive stream, where
// the evicting sender waits for room no longer than its context allows. An
// outcome that finds no room in time is lost; its message is counted in
// Dropped already.
func (k *kernel[Req, Resp]) deliverEvicted(ctx context.Context, s *slot[Req, Resp], err error) {
	var zero Resp
	if s.w == nil && k.down == nil && s.reply == nil {
		k.emitWithin(ctx, output[Resp]{id: s.id, err: err})
		return
	}
	k.deliver(s, zero, err)
}

// forward admits a message from an upstream kernel (or a chain requester),
// waiting under ctx for room: backpressure travels up the chain. hctx is the
// context its handler sees (nil: this kernel's own).
func (k *kernel[Req, Resp]) forward(ctx, hctx context.Context, msg Req, id uint64, enq int64, fwd error, reply replier) error {
	if hctx == nil {
		hctx = k.ctx
	}
	return k.admit(ctx, slot[Req, Resp]{id: id, enq: enq, ctx: hctx, msg: msg, fwd: fwd, reply: reply}, true)
}

// checkMessage rejects nil messages.
func (k *kernel[Req, Resp]) checkMessage(msg Req) error {
	if k.nilable && reflect.ValueOf(&msg).Elem().IsNil() {
		return kernelErr(k.def.id, ErrNilMessage)
	}
	return nil
}

// request sends msg and waits for its reply: the direct, typed path.
func (k *kernel[Req, Resp]) request(ctx context.Context, msg Req) (Resp, error) {
	var zero Resp
	if err := k.checkMessage(msg); err != nil {
		return zero, err
	}
	if err := ctx.Err(); err != nil {
		return zero, kernelErr(k.def.id, err)
	}
	w := k.waiters.Get().(*waiter[Resp])
	s := slot[Req, Resp]{id: nextID(), enq: monoNow(), ctx: ctx, msg: msg, w: w}
	if err := k.admit(ctx, s, true); err != nil {
		k.waiters.Put(w)
		return zero, err
	}
	select {
	case <-w.ch:
		resp, err := w.take()
		k.waiters.Put(w)
		return resp, err
	case <-ctx.Done():
		// The kernel still owns w and will deliver into it; it is not reused.
		return zero, kernelErr(k.def.id, ctx.Err())
	}
}

// goAsync admits msg with reply as its reply target.
func (k *kernel[Req, Resp]) goAsync(ctx context.Context, msg Req, reply replier) error {
	if err := k.checkMessage(msg); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return kernelErr(k.def.id, err)
	}
	return k.admit(ctx, slot[Req, Resp]{id: nextID(), enq: monoNow(), ctx: ctx, msg: msg, reply: reply}, true)
}

// send admits msg without waiting for its reply, which goes downstream or
// to the receive stream. It returns the message id.
func (k *kernel[Req, Resp]) send(ctx context.Context, msg Req) (uint64, error) {
	if err := k.checkMessage(msg); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, kernelErr(k.def.id, err)
	}
	id := nextID()
	return id, k.admit(ctx, slot[Req, Resp]{id: id, enq: monoNow(), ctx: k.ctx, msg: msg}, true)
}

// receive takes the next item of the receive stream.
func (k *kernel[Req, Resp]) receive(ctx context.Context) (Resp, uint64, error) {
	var zero Resp
	if k.state() == lifecycle.Created { // launch publishes out before the state
		return zero, 0, kernelErr(k.def.id, ErrNotLaunched)
	}
	select {
	case o := <-k.out:
		return o.resp, o.id, o.err
	default:
	}
	select {
	case o := <-k.out:
		return o.resp, o.id, o.err
	case <-ctx.Done():
		return zero, 0, kernelErr(k.def.id, ctx.Err())
	case <-k.ended:
		select { // an output emitted just before the end
		case o := <-k.out:
			return o.resp, o.id, o.err
		default:
			return zero, 0, kernelErr(k.def.id, ErrTerminated)
		}
	}
}

// stats reads the kernel's counters for observers.
func (k *kernel[Req, Resp]) stats() telemetry.KernelStats {
	s := k.cb.Snapshot()
	depth := k.ovLen.Load()
	var capacity int
	var mem int64
	k.mu.Lock()
	in := k.in
	k.mu.Unlock()
	if in != nil {
		depth += int64(in.Len())
		capacity = in.Cap()
		mem = int64(capacity)*int64(reflect.TypeFor[slot[Req, Resp]]().Size()) + int64(reflect.TypeFor[ring.ControlBlock]().Size())
	}
	backend := PlacementCPU
	if p := k.placement.Load(); p != nil {
		backend = *p
	}
	return telemetry.KernelStats{
		Kernel: k.def.id, Backend: backend, State: k.state().String(),
		Processed: s.Processed, Dropped: s.Dropped, Errors: s.Errors, Restarts: s.Restarts,
		Depth: depth, Capacity: capacity, MemoryBytes: mem,
		LatencyMin: s.LatencyMin, LatencyAvg: s.LatencyAvg, LatencyMax: s.LatencyMax,
		LastActivity: s.LastActivity,
	}
}

// nextID returns a new message id, unique in the process.
func nextID() uint64 { return messages.NextID() }
