package actors

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/lifecycle"
	"github.com/ringactor/ringactor/telemetry"
)

// Kernel is a typed handle on a launched ring kernel: the fastest way to
// talk to it (no lookup, no type check per message).
type Kernel[Req, Resp any] struct {
	k  *kernel[Req, Resp]
	rt *Runtime
}

// Launch registers def in rt and launches it in one step, returning a typed
// handle. The kernel starts with its gate closed: messages sent to it queue
// until Activate (a Request whose context ends meanwhile says so, matching
// ErrNotActive), unless Activated() is given, which activates it before
// Launch returns.
func Launch[Req, Resp any](ctx context.Context, rt *Runtime, def *KernelDef[Req, Resp], opts ...LaunchOption) (*Kernel[Req, Resp], error) {
	var lc launchConfig
	for _, o := range opts {
		if o != nil {
			o(&lc)
		}
	}
	h, err := launch(ctx, rt, def)
	if err != nil || !lc.activate {
		return h, err
	}
	if err := h.Activate(ctx); err != nil {
		// Nobody holds the handle yet: the kernel goes, so that a retry
		// can launch the same id.
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), launchCleanupTimeout)
		defer cancel()
		return nil, errors.Join(err, h.Terminate(tctx))
	}
	return h, nil
}

// launchCleanupTimeout bounds the termination of a kernel that Launch
// launched but could not activate.
const launchCleanupTimeout = 10 * time.Second

// LaunchOption configures Launch.
type LaunchOption func(*launchConfig)

// launchConfig is what the LaunchOptions of a Launch set.
type launchConfig struct {
	activate bool
}

// Activated makes Launch activate the kernel (open its gate) before it
// returns, as Launch followed by Activate does: its handle takes and handles
// messages at once. When the activation fails, the kernel is terminated and
// Launch returns the error.
func Activated() LaunchOption { return func(c *launchConfig) { c.activate = true } }

// launch is Launch without its options.
func launch[Req, Resp any](ctx context.Context, rt *Runtime, def *KernelDef[Req, Resp]) (*Kernel[Req, Resp], error) {
	ak, err := rt.register(def)
	if err != nil {
		return nil, err
	}
	if err := ak.launch(ctx); err != nil {
		rt.mu.Lock()
		if cur, ok := rt.kernels.Load(def.ID()); ok && cur == ak {
			rt.kernels.Delete(def.ID())
		}
		rt.mu.Unlock()
		return nil, err
	}
	return &Kernel[Req, Resp]{k: ak.(*kernel[Req, Resp]), rt: rt}, nil
}

// Lookup returns a typed handle on the kernel with the given id, or a
// WrongMessageTypeError when its types are not Req and Resp.
func Lookup[Req, Resp any](rt *Runtime, id string) (*Kernel[Req, Resp], error) {
	ak, err := rt.lookup(id)
	if err != nil {
		return nil, err
	}
	k, ok := ak.(*kernel[Req, Resp])
	if !ok {
		return nil, typeMismatch(ak, reflect.TypeFor[Req](), reflect.TypeFor[Resp]())
	}
	return &Kernel[Req, Resp]{k: k, rt: rt}, nil
}

func typeMismatch(ak anyKernel, req, resp reflect.Type) error {
	if ak.messageType() != req {
		return &WrongMessageTypeError{Kernel: ak.kernelID(), Role: "message", Want: ak.messageType(), Got: req}
	}
	return &WrongMessageTypeError{Kernel: ak.kernelID(), Role: "reply", Want: ak.replyType(), Got: resp}
}

// ID returns the kernel's id.
func (h *Kernel[Req, Resp]) ID() string { return h.k.def.id }

// PID returns the kernel actor's PID, for Proto.Actor senders.
func (h *Kernel[Req, Resp]) PID() *actor.PID { return h.k.pid() }

// Request sends msg and waits for the reply of the kernel — of the last
// kernel of the chain when the kernel routes downstream, whose reply type
// must then be Resp (else a *WrongMessageTypeError of role RoleChainReply
// naming both types; actors.Request takes any tail type). A failed handler
// gives a *gpu.ExecutionError naming the stage that failed; ctx bounds both
// the wait for room and the wait for the reply.
func (h *Kernel[Req, Resp]) Request(ctx context.Context, msg Req) (Resp, error) {
	if h.k.down == nil {
		if h.rt.spans {
			return h.k.tracedRequest(ctx, msg)
		}
		return h.k.request(ctx, msg)
	}
	if err := h.checkChainReply(); err != nil {
		var zero Resp
		return zero, err
	}
	return chainRequest[Resp](ctx, h.k, h.k.def.id, msg)
}

// checkChainReply returns a *WrongMessageTypeError (role "chain reply")
// when the kernel routes downstream and its chain's last kernel does not
// reply Resp.
func (h *Kernel[Req, Resp]) checkChainReply() error {
	if h.k.down == nil || h.k.term == reflect.TypeFor[Resp]() {
		return nil
	}
	return &WrongMessageTypeError{Kernel: h.k.def.id, Role: RoleChainReply, Want: h.k.term, Got: reflect.TypeFor[Resp]()}
}

// RequestAsync admits msg and returns without waiting for its reply: done is called
// exactly once, with the reply or the error, from the kernel's loop (so it
// must not block; hand slow work to another goroutine). Admission waits under
// ctx for room like Request; ctx is also the handler's context. When RequestAsync
// returns an error the message was not admitted and done is not called.
// Messages admitted by one goroutine are handled in the order they were
// admitted, so RequestAsync pipelines many requests to one kernel without giving up
// ordering. For a kernel that routes downstream, done gets the reply of the
// chain's last kernel (from that kernel's loop), as Request does; a chain
// whose last kernel does not reply Resp is refused like Request.
func (h *Kernel[Req, Resp]) RequestAsync(ctx context.Context, msg Req, done func(Resp, error)) error {
	if err := h.checkChainReply(); err != nil {
		return err
	}
	if done == nil {
		return kernelErr(h.k.def.id, fmt.Errorf("%w: nil done callback", ErrNilMessage))
	}
	return h.k.goAsync(ctx, msg, funcReplier[Resp](done))
}

// Send admits msg without waiting for its reply, which goes downstream or to
// the receive stream; it waits (under ctx) only for room. It returns the
// message id, which the receive stream's errors carry.
func (h *Kernel[Req, Resp]) Send(ctx context.Context, msg Req) (uint64, error) {
	if h.rt.spans {
		return h.k.tracedSend(ctx, msg)
	}
	return h.k.send(ctx, msg)
}

// Receive returns the next reply on the kernel's receive stream (replies of
// sent messages), or its error. After the kernel is terminated and the stream
// is empty it returns ErrEndOfStream (which matches ErrTerminated too). A
// message the terminate did not run has an error outcome that matches
// ErrTerminated as well, so a reader that drains the stream stops at
// ErrEndOfStream: every sent message's outcome is then a reply, an error
// read before it, or a count in the kernel's Dropped.
func (h *Kernel[Req, Resp]) Receive(ctx context.Context) (Resp, error) {
	r, _, err := h.k.receive(ctx)
	return r, err
}

// Activate opens the kernel's gate.
func (h *Kernel[Req, Resp]) Activate(ctx context.Context) error {
	return h.rt.command(ctx, h.k.def.id, lifecycle.Activate)
}

// Deactivate closes the kernel's gate.
func (h *Kernel[Req, Resp]) Deactivate(ctx context.Context) error {
	return h.rt.command(ctx, h.k.def.id, lifecycle.Deactivate)
}

// Reactivate opens the kernel's gate again.
func (h *Kernel[Req, Resp]) Reactivate(ctx context.Context) error {
	return h.rt.command(ctx, h.k.def.id, lifecycle.Reactivate)
}

// Terminate drains and stops the kernel (see Runtime.Terminate).
func (h *Kernel[Req, Resp]) Terminate(ctx context.Context) error {
	return h.rt.Terminate(ctx, h.k.def.id)
}

// State returns the kernel's lifecycle state.
func (h *Kernel[Req, Resp]) State() lifecycle.State { return h.k.state() }

// Telemetry returns the kernel's counters.
func (h *Kernel[Req, Resp]) Telemetry() telemetry.KernelStats { return h.k.stats() }

// Request sends msg to the kernel with the given id and waits for its reply
// of type Resp (the reply of the last kernel of a chain). Resp comes first
// so that Req is inferred: actors.Request[Sum](ctx, rt, "add", pair).
func Request[Resp, Req any](ctx context.Context, rt *Runtime, id string, msg Req) (Resp, error) {
	var zero Resp
	ak, err := rt.lookup(id)
	if err != nil {
		return zero, err
	}
	if k, ok := ak.(*kernel[Req, Resp]); ok && k.down == nil {
		return k.request(ctx, msg)
	}
	in, ok := ak.(inbox[Req])
	if !ok || ak.terminalType() != reflect.TypeFor[Resp]() {
		if !ok {
			return zero, &WrongMessageTypeError{Kernel: id, Role: "message", Want: ak.messageType(), Got: reflect.TypeFor[Req]()}
		}
		return zero, &WrongMessageTypeError{Kernel: id, Role: "reply", Want: ak.terminalType(), Got: reflect.TypeFor[Resp]()}
	}
	return chainRequest[Resp](ctx, in, id, msg)
}

// chainRequest sends msg into the head of a chain and waits for the reply of
// its last kernel.
func chainRequest[Resp, Req any](ctx context.Context, in inbox[Req], id string, msg Req) (Resp, error) {
	var zero Resp
	if err := ctx.Err(); err != nil {
		return zero, kernelErr(id, err)
	}
	if err := in.checkMessage(msg); err != nil {
		return zero, err
	}
	w := newWaiter[Resp]()
	gen := w.arm()
	if err := in.forward(ctx, ctx, msg, nextID(), stampAtAdmission, nil, waiterReplier[Resp]{w: w, gen: gen}); err != nil {
		return zero, err
	}
	var o reply[Resp]
	select {
	case o = <-w.ch:
	case <-ctx.Done():
		if w.end(gen) {
			return zero, waitErr(id, in.state(), ctx.Err())
		}
		o = <-w.ch // the last kernel claimed the outcome first: it is on its way
	}
	return o.resp, o.err
}

// RequestAsync admits msg into the kernel with the given id and returns
// without waiting: done is called exactly once with the reply of type Resp
// (the reply of the last kernel of a chain) or the error, from the loop of
// the kernel that answers, so it must not block. It is the asynchronous
// Request, for any chain's tail type: messages admitted by one goroutine
// keep their order through the chain. When it returns an error the message
// was not admitted and done is not called.
func RequestAsync[Resp, Req any](ctx context.Context, rt *Runtime, id string, msg Req, done func(Resp, error)) error {
	ak, err := rt.lookup(id)
	if err != nil {
		return err
	}
	in, ok := ak.(inbox[Req])
	if !ok {
		return &WrongMessageTypeError{Kernel: id, Role: "message", Want: ak.messageType(), Got: reflect.TypeFor[Req]()}
	}
	if ak.terminalType() != reflect.TypeFor[Resp]() {
		return &WrongMessageTypeError{Kernel: id, Role: "reply", Want: ak.terminalType(), Got: reflect.TypeFor[Resp]()}
	}
	if done == nil {
		return kernelErr(id, fmt.Errorf("%w: nil done callback", ErrNilMessage))
	}
	if err := in.checkMessage(msg); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return kernelErr(id, err)
	}
	return in.forward(ctx, ctx, msg, nextID(), stampAtAdmission, nil, funcReplier[Resp](done))
}

// Send admits msg into the kernel with the given id without waiting for its
// reply, and returns the message id.
func Send[Req any](ctx context.Context, rt *Runtime, id string, msg Req) (uint64, error) {
	ak, err := rt.lookup(id)
	if err != nil {
		return 0, err
	}
	in, ok := ak.(inbox[Req])
	if !ok {
		return 0, &WrongMessageTypeError{Kernel: id, Role: "message", Want: ak.messageType(), Got: reflect.TypeFor[Req]()}
	}
	if err := in.checkMessage(msg); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, kernelErr(id, err)
	}
	mid := nextID()
	return mid, in.forward(ctx, nil, msg, mid, stampAtAdmission, nil, nil)
}

// Receive returns the next reply on the receive stream of the kernel with
// the given id (see Kernel.Receive: ErrEndOfStream at the end).
func Receive[Resp any](ctx context.Context, rt *Runtime, id string) (Resp, error) {
	var zero Resp
	ak, err := rt.lookup(id)
	if err != nil {
		return zero, err
	}
	src, ok := ak.(interface {
		receive(context.Context) (Resp, uint64, error)
	})
	if !ok {
		return zero, &WrongMessageTypeError{Kernel: id, Role: "reply", Want: ak.replyType(), Got: reflect.TypeFor[Resp]()}
	}
	r, _, err := src.receive(ctx)
	return r, err
}
