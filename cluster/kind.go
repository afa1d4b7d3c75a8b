package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/messages"
)

// Defaults of a Kind.
const (
	// DefaultHandlerTimeout bounds one message's handling by an activation's
	// kernel.
	DefaultHandlerTimeout = 5 * time.Second
	// activationTimeout bounds launching, activating and terminating an
	// activation's kernel.
	activationTimeout = 5 * time.Second
)

// Kind is a cluster kind backed by a ring-kernel declaration: each activated
// identity runs its own ring kernel, with a fresh handler from the factory.
// Register the same kinds (same names, types and message registrations) on
// every member that should host them.
type Kind struct {
	name           string
	idleTimeout    time.Duration
	handlerTimeout time.Duration
	// producer makes the grain actor of one activation on member m.
	producer func(m *Member) actor.Producer
	// prepare, if set, runs when member m starts (a device kind compiles
	// its program there).
	prepare func(m *Member) error
}

// NewKind declares a cluster kind named name whose activations run a ring
// kernel with the handler newHandler returns (called at every start or
// restart of the kernel, so its state is per identity) and the kernel
// options opts. Req and Resp must be registered message types
// (messages.Register) for the kind to be reachable from other members.
func NewKind[Req, Resp any](name string, newHandler func() actors.Handler[Req, Resp], opts ...actors.KernelOption) *Kind {
	k := &Kind{name: name, handlerTimeout: DefaultHandlerTimeout}
	k.producer = func(m *Member) actor.Producer {
		return func() actor.Actor {
			return &grain[Req, Resp]{kind: k, member: m, newDef: func(id string) (*actors.KernelDef[Req, Resp], error) {
				return actors.NewKernel(id, newHandler, opts...), nil
			}}
		}
	}
	return k
}

// Name returns the kind's name.
func (k *Kind) Name() string { return k.name }

// WithIdleTimeout makes an activation passivate (terminating its kernel)
// after d without messages; 0, the default, keeps it until its member
// shuts down. It returns k.
func (k *Kind) WithIdleTimeout(d time.Duration) *Kind {
	k.idleTimeout = d
	return k
}

// WithHandlerTimeout bounds the handling of one message by an activation's
// kernel (default DefaultHandlerTimeout). It returns k.
func (k *Kind) WithHandlerTimeout(d time.Duration) *Kind {
	if d > 0 {
		k.handlerTimeout = d
	}
	return k
}

// build makes the Proto.Actor cluster kind for member m.
func (k *Kind) build(m *Member) *pcluster.Kind {
	return pcluster.NewKind(k.name, actor.PropsFromProducer(k.producer(m)))
}

// grain is the actor of one activation: it owns the identity's ring kernel
// and turns wire envelopes into typed kernel requests. It handles one
// message at a time, so an identity sees its messages in arrival order.
type grain[Req, Resp any] struct {
	kind   *Kind
	member *Member
	newDef func(kernelID string) (*actors.KernelDef[Req, Resp], error) // the identity's kernel declaration

	kernelID string
	kernel   *actors.Kernel[Req, Resp]
	startErr error // why the kernel could not start, if it could not
}

// Receive implements actor.Actor.
func (g *grain[Req, Resp]) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *pcluster.ClusterInit:
		g.activate(c, msg.Identity)
	case *messages.WireEnvelope:
		g.handle(c, msg)
	case *actor.ReceiveTimeout:
		c.Stop(c.Self())
	case *actor.Stopping:
		g.passivate()
	case *actor.Stopped:
		g.member.grains.Delete(c.Self().String())
	}
}

// activate launches and activates the identity's kernel.
func (g *grain[Req, Resp]) activate(c actor.Context, id *pcluster.ClusterIdentity) {
	g.member.grains.Store(c.Self().String(), c.Self())
	if id == nil {
		g.startErr = fmt.Errorf("%w: activation without a cluster identity", ErrMemberUnavailable)
		return
	}
	g.kernelID = id.Kind + "/" + id.Identity
	ctx, cancel := context.WithTimeout(context.Background(), activationTimeout)
	defer cancel()
	def, err := g.newDef(g.kernelID)
	var h *actors.Kernel[Req, Resp]
	if err == nil {
		h, err = actors.Launch(ctx, g.member.rt, def)
	}
	if err == nil {
		err = h.Activate(ctx)
		if err != nil {
			_ = h.Terminate(ctx)
		}
	}
	if err != nil {
		g.startErr = fmt.Errorf("%w: kernel %q: %w", ErrMemberUnavailable, g.kernelID, err)
		g.member.logger.Warn("ringactor/cluster: activation failed", slog.String("kernel", g.kernelID), slog.Any("error", err))
		return
	}
	g.kernel = h
	if g.kind.idleTimeout > 0 {
		c.SetReceiveTimeout(g.kind.idleTimeout)
	}
}

// passivate terminates the kernel, draining what it holds.
func (g *grain[Req, Resp]) passivate() {
	if g.kernel == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), activationTimeout)
	defer cancel()
	if err := g.kernel.Terminate(ctx); err != nil {
		g.member.logger.Warn("ringactor/cluster: kernel termination failed", slog.String("kernel", g.kernelID), slog.Any("error", err))
	}
	g.kernel = nil
}

// handle admits one request into the kernel and returns at once: the
// kernel's loop answers the sender when the request is handled, so an
// identity pipelines its requests (in arrival order) instead of taking them
// one at a time.
func (g *grain[Req, Resp]) handle(c actor.Context, w *messages.WireEnvelope) {
	id := w.GetId()
	sender := c.Sender()
	if g.kernel == nil {
		msg := "kernel not running"
		if g.startErr != nil {
			msg = g.startErr.Error()
		}
		g.answer(sender, wireError(messages.WireKindUnavailable, msg, id))
		return
	}
	env, err := messages.FromWire(w, g.member.maxPayload)
	if err != nil {
		g.answer(sender, messages.NewWireError(err, id))
		return
	}
	req, ok := env.Payload.(Req)
	if !ok {
		g.answer(sender, wireError(messages.WireKindDecode,
			fmt.Sprintf("kind %q takes %v, got %T", g.kind.name, reflect.TypeFor[Req](), env.Payload), id))
		return
	}
	timeout, remote := g.kind.handlerTimeout, false
	if t := time.Duration(w.GetTimeoutNs()); t > 0 && t < timeout {
		timeout, remote = t, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	err = g.kernel.RequestAsync(ctx, req, func(resp Resp, err error) {
		cancel()
		if err != nil {
			if remote && errors.Is(err, context.DeadlineExceeded) {
				// The requester's own deadline passed here.
				g.answer(sender, wireError(messages.WireKindTimeout, err.Error(), id))
				return
			}
			g.answer(sender, messages.NewWireError(err, id))
			return
		}
		g.answer(sender, g.encodeReply(resp, id))
	})
	if err != nil {
		cancel()
		g.answer(sender, messages.NewWireError(err, id))
	}
}

// encodeReply returns the wire form of resp answering request id: a
// *messages.WireEnvelope, or a *messages.WireError when it cannot be encoded.
func (g *grain[Req, Resp]) encodeReply(resp Resp, id uint64) any {
	renv, err := messages.NewEnvelope(resp)
	if err != nil {
		return messages.NewWireError(err, id)
	}
	renv.CorrelationID = id
	out, err := messages.ToWire(renv, g.member.maxPayload)
	if err != nil {
		return messages.NewWireError(err, id)
	}
	return out
}

// answer sends reply to the requester; a one-way message has none, and its
// failure is logged instead.
func (g *grain[Req, Resp]) answer(sender *actor.PID, reply any) {
	if sender != nil {
		g.member.sys.Root.Send(sender, reply)
		return
	}
	if we, ok := reply.(*messages.WireError); ok {
		g.member.logger.Warn("ringactor/cluster: one-way message failed", slog.String("kernel", g.kernelID), slog.String("kind", we.Kind), slog.String("error", we.Message))
	}
}
