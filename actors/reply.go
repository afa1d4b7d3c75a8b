package actors

import (
	"errors"
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

// waiter is one requester waiting for its reply. Its channel carries the
// one outcome and has room for it, so the kernel never blocks delivering
// it; a parked requester receives it straight into its own frame.
//
// A waiter is reused from request to request (0 allocations per Request).
// Its state word is the generation of the request it waits for: a request
// takes the current one (a load), and whoever ends that request moves the
// word to the next generation with a compare-and-swap — the kernel
// delivering the outcome, or the requester or its context's watch giving up
// — and only that side sends the outcome on the channel. So a reply and a
// cancellation race safely, every request has exactly one outcome, the
// waiter is ready for its next request without another store, and a kernel
// that answers a request its requester gave up on (its slot still names
// the waiter) finds the generation moved on and leaves the waiter alone,
// even while it serves another request.
type waiter[R any] struct {
	ch    chan reply[R]
	state atomic.Uint64 // the generation of the pending request
}

// reply is the outcome of one request on its waiter's channel.
type reply[R any] struct {
	resp R
	err  error // errWatchCancelled: a context's watch ended the request
}

// errWatchCancelled is the outcome a context's watch leaves in a waiter; the
// requester answers its context's error instead.
var errWatchCancelled = errors.New("ringactor: cancelled by the context's watch")

func newWaiter[R any]() *waiter[R] { return &waiter[R]{ch: make(chan reply[R], 1)} }

// arm returns the generation of the request w is about to wait for. Only the
// requester that holds w calls it, before the request is admitted.
func (w *waiter[R]) arm() uint64 { return w.state.Load() }

// end moves request gen to its end, and reports whether this caller did it
// (and so owns the outcome) rather than the other side.
func (w *waiter[R]) end(gen uint64) bool { return w.state.CompareAndSwap(gen, gen+1) }

// deliver is the kernel's side: the outcome of request gen goes to the
// requester unless it gave up.
func (w *waiter[R]) deliver(gen uint64, r R, err error) {
	if !w.end(gen) {
		return // the requester gave up: its context ended
	}
	w.ch <- reply[R]{resp: r, err: err}
}

// watchCancel is a context's watch ending request gen, unless its outcome
// was claimed first; it signals the requester.
func (w *waiter[R]) watchCancel(gen uint64) {
	if w.end(gen) {
		w.ch <- reply[R]{err: errWatchCancelled} // room for it: the channel's one outcome
	}
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
