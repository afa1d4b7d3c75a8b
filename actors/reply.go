package actors

import (
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
type waiter[R any] struct {
	ch   chan struct{}
	resp R
	err  error
}

func newWaiter[R any]() *waiter[R] { return &waiter[R]{ch: make(chan struct{}, 1)} }

func (w *waiter[R]) succeed(r R) {
	w.resp = r
	w.ch <- struct{}{}
}

func (w *waiter[R]) fail(err error) {
	w.err = err
	w.ch <- struct{}{}
}

// take returns the outcome and clears the waiter for reuse.
func (w *waiter[R]) take() (R, error) {
	var zero R
	r, err := w.resp, w.err
	w.resp, w.err = zero, nil
	return r, err
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
