package actors

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// replier is where the outcome of one message goes when it is not the
// requester of a direct, typed Request: a requester at the end of a chain of
// kernels, or a Proto.Actor sender.
type replier interface {
	fail(err error)
}

// typedReplier is a replier that can take a reply of type R.
type typedReplier[R any] interface {
	replier
	succeed(R)
}

// waiter is one requester waiting for its reply. Its channel has room for
// the one outcome, so the kernel never blocks delivering it.
//
// A waiter is reused from request to request (0 allocations per Request);
// each request arms it with a new generation. Its state word holds the
// generation and the request's phase (pending, answered, cancelled), and the
// side that moves it out of pending with a compare-and-swap — the kernel
// delivering the outcome, or the requester or its context's watch giving up
// — is the one that signals the channel. So a reply and a cancellation race
// safely, every request has exactly one outcome, and a kernel that answers a
// request its requester gave up on (its slot still names the waiter) finds a
// generation that is no longer pending and leaves the waiter alone, even
// while it serves another request.
type waiter[R any] struct {
	ch    chan struct{}
	state atomic.Uint64 // generation<<2 | phase
	resp  R
	err   error
}

// Phases of a waiter's request (the low two bits of its state).
const (
	waitPending   = 0
	waitAnswered  = 1
	waitCancelled = 2
	waitPhaseBits = 2
	waitPhaseMask = 1<<waitPhaseBits - 1
)

func newWaiter[R any]() *waiter[R] { return &waiter[R]{ch: make(chan struct{}, 1)} }

// arm starts a request on w and returns its generation. Only the requester
// that holds w calls it, before the request is admitted.
func (w *waiter[R]) arm() uint64 {
	gen := w.state.Load()>>waitPhaseBits + 1
	w.state.Store(gen << waitPhaseBits)
	return gen
}

// deliver is the kernel's side: the outcome of request gen goes to the
// requester unless it gave up.
func (w *waiter[R]) deliver(gen uint64, r R, err error) {
	if !w.state.CompareAndSwap(gen<<waitPhaseBits, gen<<waitPhaseBits|waitAnswered) {
		return // the requester gave up: its context ended
	}
	w.resp, w.err = r, err
	w.ch <- struct{}{}
}

// cancel gives request gen up, unless its outcome was claimed first. The
// caller signals the channel (a context's watch) or returns at once (the
// requester itself) when it reports true.
func (w *waiter[R]) cancel(gen uint64) bool {
	return w.state.CompareAndSwap(gen<<waitPhaseBits, gen<<waitPhaseBits|waitCancelled)
}

// cancelled reports, after the channel was signalled, whether the signal is
// a cancellation (by a context's watch) rather than the kernel's answer.
func (w *waiter[R]) cancelled() bool { return w.state.Load()&waitPhaseMask == waitCancelled }

// take returns the outcome after the channel was signalled and clears the
// waiter for reuse.
func (w *waiter[R]) take() (R, error) {
	var zero R
	r, err := w.resp, w.err
	w.resp, w.err = zero, nil
	return r, err
}

// waiterReplier is the reply target of a request at the head of a chain: the
// last kernel's outcome goes to the requester's waiter, armed as gen.
type waiterReplier[R any] struct {
	w   *waiter[R]
	gen uint64
}

func (r waiterReplier[R]) succeed(v R) { r.w.deliver(r.gen, v, nil) }

func (r waiterReplier[R]) fail(err error) {
	var zero R
	r.w.deliver(r.gen, zero, err)
}

// pidReplier answers a Proto.Actor sender: the reply value, or the error
// itself as the message.
type pidReplier struct {
	root *actor.RootContext
	pid  *actor.PID
}

func (p pidReplier) fail(err error) { p.root.Send(p.pid, err) }

// succeedAny answers with any reply value; every kernel's reply type fits.
func (p pidReplier) succeedAny(v any) { p.root.Send(p.pid, v) }

// anyReplier is a replier that takes a reply of any type.
type anyReplier interface {
	replier
	succeedAny(any)
}

// output is one item of a kernel's receive stream.
type output[R any] struct {
	id   uint64
	resp R
	err  error
}

// funcReplier delivers the outcome of a message admitted with Kernel.Go.
type funcReplier[R any] func(R, error)

func (f funcReplier[R]) succeed(r R) { f(r, nil) }

func (f funcReplier[R]) fail(err error) {
	var zero R
	f(zero, err)
}
