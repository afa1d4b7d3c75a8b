package actors

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/lifecycle"
	"github.com/ringactor/ringactor/supervision"
)

// KernelActor is the Proto.Actor that owns one ring kernel. It is a child of
// the orchestrator, which supervises it. Its mailbox feeds the kernel's input
// ring; lifecycle commands drive the state machine of package lifecycle and
// the control block's gate and terminate flag; the kernel's loop runs on a
// goroutine of its current incarnation, and a handler panic fails the actor
// so that its supervisor restarts it with a fresh handler.
//
// Other actors talk to it with ordinary Proto.Actor messages: a value of the
// kernel's message type (Send, or RequestFuture for the reply), a
// lifecycle.Command (answered with a lifecycle.Reply).
type KernelActor interface {
	actor.Actor
	// Kernel returns the id of the kernel the actor owns.
	Kernel() string
}

type kernelActor[Req, Resp any] struct {
	k *kernel[Req, Resp]
}

// kernelFault tells the actor its loop stopped on a failure.
type kernelFault struct{ err error }

// loopExited tells the actor its loop returned after a terminate.
type loopExited struct{}

// lifecycleRequest is the runtime's lifecycle command, answered through done.
type lifecycleRequest struct {
	event lifecycle.Event
	done  chan lifecycle.Reply
}

func (a *kernelActor[Req, Resp]) Kernel() string { return a.k.def.id }

// Receive implements actor.Actor.
func (a *kernelActor[Req, Resp]) Receive(c actor.Context) {
	k := a.k
	switch m := c.Message().(type) {
	case *actor.Started:
		k.onStarted(c)
	case *actor.Restarting:
		k.cb.Restarts.Store(k.cb.Restarts.Load() + 1)
	case *actor.Stopping:
		k.onStopping()
	case *actor.Stopped:
		// The actor has left the process registry: its PID is a dead
		// letter now. A termination that stopped it ends here, so that
		// whoever waits for it finds the PID gone.
		k.end(lifecycle.Reply{From: lifecycle.Active, To: lifecycle.Terminated})
	case *kernelFault:
		k.onLoopEnd(c, m.err)
	case *loopExited:
		k.onLoopEnd(c, nil)
	case *lifecycleRequest:
		k.apply(c, m.event, func(r lifecycle.Reply) { m.done <- r })
	case *lifecycle.Command:
		k.applyCommand(c, m.Event)
	case lifecycle.Command:
		k.applyCommand(c, m.Event)
	case actor.SystemMessage, actor.AutoReceiveMessage:
	default:
		// A message of the kernel's type never gets here (the mailbox admits
		// it); anything else is the wrong type for this kernel.
		err := &WrongMessageTypeError{Kernel: k.def.id, Role: "message", Want: reflect.TypeFor[Req](), Got: reflect.TypeOf(m)}
		if c.Sender() != nil {
			c.Respond(err)
		} else {
			k.rt.logger.Warn("ringactor: message of the wrong type", "kernel", k.def.id, "error", err)
		}
	}
}

// onStarted starts the loop of a new incarnation: the first one after
// launch, or one after a supervisor restart (Failed → Restart → Active; the
// gate stays as it was, so messages queued behind the failure go on).
func (k *kernel[Req, Resp]) onStarted(c actor.Context) {
	k.mu.Lock()
	k.self = c.Self()
	if k.st == lifecycle.Failed {
		next, _ := lifecycle.Transition(k.st, lifecycle.Restart)
		k.setState(next)
	}
	finished := k.st == lifecycle.Terminated && k.cb.TerminatedAck.Load() != 0
	k.mu.Unlock()
	if finished {
		return // a restart that arrived after the termination finished
	}
	k.startLoop(c)
}

// startLoop runs a fresh handler on a new loop goroutine. The handler's
// factory runs here, so a panicking factory fails the actor like a handler.
func (k *kernel[Req, Resp]) startLoop(c actor.Context) {
	if k.def.prog != nil {
		var ring *cuda.RingKernel
		var backend *cuda.Backend
		var err error
		switch dev := k.firstDevice; {
		case dev != nil:
			k.firstDevice = nil
			ring, backend, err = dev.ring, dev.backend, dev.why
		case k.offDevice != nil:
			// Its device faulted: it stays on its fallback rather than
			// carry a fault that may be its own to another device.
			err = k.offDevice
		default:
			ring, backend, err = k.def.prog.launch(k.rt, k.def.pin, k.def.mailboxCap)
		}
		if err == nil {
			k.startDeviceLoop(c, ring, backend)
			return
		}
		k.setPlacement(PlacementCPU, err)
	}
	h := k.firstHandler
	k.firstHandler = nil
	restart := h == nil
	if restart {
		h = k.newHandler()
	}
	if h == nil {
		// A factory that built a handler at launch returned nil at a restart:
		// fail this incarnation; the supervisor decides what follows.
		panic(fmt.Errorf("ringactor: kernel %q: %w: the handler factory returned a nil handler", k.def.id, ErrInvalidKernel))
	}
	if k.persist != nil {
		k.startStateLoop(c, h, restart)
		return
	}
	loop := &ring.Loop{
		Control: k.cb, Wake: k.wake, Wait: k.def.wait,
		Poll:  func(draining bool) (bool, error) { return k.poll(h, draining) },
		Ready: k.ready,
	}
	if held := k.devHeld; len(held) > 0 {
		// A device incarnation left messages it had taken but not
		// answered; this CPU incarnation handles them first, in order.
		k.devHeld = nil
		poll, ready := loop.Poll, loop.Ready
		loop.Poll = func(draining bool) (bool, error) {
			if len(held) > 0 {
				s := held[0]
				held = held[1:]
				err := k.handle(h, s, draining)
				k.endBatch()
				return true, err
			}
			return poll(draining)
		}
		loop.Ready = func() bool { return len(held) > 0 || ready() }
	}
	k.spawnLoop(c, loop.Run)
}

// spawnLoop runs an incarnation's loop on a goroutine of its own and tells
// the actor how it ended: a fault, or an exit after a terminate.
func (k *kernel[Req, Resp]) spawnLoop(c actor.Context, run func() error) {
	k.loopRunning = true
	done := make(chan struct{})
	k.loopDone = done
	self, root := c.Self(), k.rt.system.Root
	go func() {
		err := run()
		close(done)
		if err != nil {
			root.Send(self, &kernelFault{err: err})
			return
		}
		root.Send(self, &loopExited{})
	}()
	k.wake.Notify()
}

// onLoopEnd handles the loop's exit: the end of a termination, or a fault
// that fails the actor so its supervisor decides (restart, stop, …).
func (k *kernel[Req, Resp]) onLoopEnd(c actor.Context, fault error) {
	k.loopRunning = false
	k.mu.Lock()
	if k.st == lifecycle.Terminated {
		k.mu.Unlock()
		if fault != nil || !k.drained() {
			k.startLoop(c) // a fault raced the terminate: drain with a fresh loop
			return
		}
		k.finishTermination(c)
		return
	}
	k.mu.Unlock()
	var moved *deviceMoved
	if errors.As(fault, &moved) {
		// The device failed under this kernel: the next incarnation runs
		// the fallback, with the queued messages (no supervisor restart:
		// nothing of the kernel's own failed).
		k.offDevice = moved
		k.startLoop(c)
		return
	}
	k.mu.Lock()
	if next, err := lifecycle.Transition(k.st, lifecycle.Fault); err == nil {
		k.setState(next)
	}
	k.mu.Unlock()
	k.lastFault = fault
	// Proto.Actor escalates to the orchestrator's supervisor strategy, which
	// follows this kernel's own decider.
	directive := k.def.decider(fault)
	if errors.Is(fault, ErrStateConflict) {
		// Another writer owns the State: a restart would only restore
		// its State under this kernel's id. The kernel stops; its
		// queued messages get the conflict.
		directive = supervision.Stop
	}
	panic(&supervision.Directed{Err: fault, Directive: directive})
}

// drained reports whether nothing is left in the ring or the overflow.
func (k *kernel[Req, Resp]) drained() bool { return k.in.Empty() && k.ovLen.Load() == 0 }

// applyCommand applies a lifecycle.Command that an actor sent to the kernel's
// PID. The reply goes to the sender captured now: a Terminate is answered
// later, when the drain ends, while the actor handles another message.
func (k *kernel[Req, Resp]) applyCommand(c actor.Context, ev lifecycle.Event) {
	sender := c.Sender()
	root := k.rt.system.Root
	k.apply(c, ev, func(r lifecycle.Reply) {
		if sender != nil {
			root.Send(sender, &r)
		}
	})
}

// apply applies a lifecycle event and answers with the transition. Fault and
// Restart are the kernel's own events (its loop failed, its supervisor
// restarted it): from outside they are refused with ErrInternalEvent. A
// Terminate of a terminated kernel is answered when the termination under
// way ends (at once when it has).
func (k *kernel[Req, Resp]) apply(c actor.Context, ev lifecycle.Event, reply func(lifecycle.Reply)) {
	k.mu.Lock()
	from := k.st
	if ev == lifecycle.Fault || ev == lifecycle.Restart {
		k.mu.Unlock()
		reply(lifecycle.Reply{From: from, To: from, Err: kernelErr(k.def.id, &InternalEventError{Event: ev})})
		return
	}
	if ev == lifecycle.Terminate && from == lifecycle.Terminated {
		// A terminate is under way (its drain goes on, even after its
		// caller gave up) or done: this one waits for the same end.
		k.mu.Unlock()
		select {
		case <-k.ended:
			reply(lifecycle.Reply{From: from, To: from})
		default:
			k.terminators = append(k.terminators, func(r lifecycle.Reply) {
				r.From = from
				reply(r)
			})
		}
		return
	}
	next, err := lifecycle.Transition(from, ev)
	if err != nil {
		k.mu.Unlock()
		reply(lifecycle.Reply{From: from, To: from, Err: kernelErr(k.def.id, err)})
		return
	}
	k.setState(next)
	switch ev {
	case lifecycle.Activate, lifecycle.Reactivate:
		k.cb.Open()
	case lifecycle.Deactivate:
		k.cb.Close()
	case lifecycle.Terminate:
		k.wakeSenders() // blocked senders retry and find the kernel terminated
		k.mu.Unlock()
		k.terminators = append(k.terminators, func(r lifecycle.Reply) {
			r.From = from
			reply(r)
		})
		k.cb.Terminate.Store(1)
		k.wake.Notify()
		if !k.loopRunning { // failed and waiting for its restart: drain now
			k.startLoop(c)
		}
		return
	}
	k.mu.Unlock()
	k.wake.Notify()
	reply(lifecycle.Reply{From: from, To: next})
}

// finishTermination releases the kernel once its loop has drained it: it
// stops the actor, and the kernel ends (every Terminate is answered) when
// the actor has stopped.
func (k *kernel[Req, Resp]) finishTermination(c actor.Context) {
	select {
	case <-k.ended:
		return
	default:
	}
	c.Stop(c.Self())
}

// onStopping runs when the actor stops for another reason than a terminate:
// its supervisor gave up on it, or the actor system is shutting down. Every
// queued message is answered with ErrTerminated (joined with the last fault).
func (k *kernel[Req, Resp]) onStopping() {
	k.mu.Lock()
	if k.st == lifecycle.Terminated && k.cb.TerminatedAck.Load() != 0 {
		k.mu.Unlock()
		return
	}
	k.setState(lifecycle.Terminated)
	k.wakeSenders()
	k.mu.Unlock()
	k.drainCause = ErrTerminated
	if k.lastFault != nil {
		k.drainCause = fmt.Errorf("%w after a failure: %w", ErrTerminated, k.lastFault)
	}
	k.rejectAll.Store(true)
	k.cb.Terminate.Store(1)
	if k.loopRunning {
		// Shutting down under a running loop: it drains, rejecting, and
		// gives up on a receive stream nobody reads.
		k.cancel()
		k.wake.Notify()
		<-k.loopDone
	} else { // no loop: this goroutine is the ring's consumer now
		for _, s := range k.devHeld {
			k.handle(nil, s, true) // rejecting: the handler is never called
		}
		k.devHeld = nil
		k.endBatch()
		for found := true; found; {
			found, _ = k.poll(nil, true) // rejecting: the handler is never called
		}
		k.cb.TerminatedAck.Store(1)
	}
	k.loopRunning = false
	k.end(lifecycle.Reply{From: lifecycle.Failed, To: lifecycle.Terminated, Err: k.lastFault})
}

// end marks the kernel ended and answers every Terminate waiting for it.
func (k *kernel[Req, Resp]) end(r lifecycle.Reply) {
	select {
	case <-k.ended:
	default:
		k.unwatchAll() // before the end is seen: a Terminate that returns leaves no watch
		close(k.ended)
	}
	for _, t := range k.terminators {
		t(r)
	}
	k.terminators = nil
}
