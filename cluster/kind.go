package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"
	"go.opentelemetry.io/otel/trace"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/messages"
)

// Defaults of a Kind.
const (
	// DefaultHandlerTimeout bounds one message's handling by an activation's
	// kernel.
	DefaultHandlerTimeout = 5 * time.Second
	// DefaultActivationTimeout bounds launching, activating and terminating
	// an activation's kernel (WithActivationTimeout).
	DefaultActivationTimeout = 5 * time.Second
)

// activationWait is the idle strategy of an activation's kernel unless the
// kind's options set one: it parks at once. A member hosts many
// activations, mostly idle between requests that come over the network;
// kernels that yield while idle take the CPU that the member's remote
// needs.
var activationWait = ring.WaitStrategy{}

// Kind is a cluster kind backed by a ring-kernel declaration: each activated
// identity runs its own ring kernel, with a fresh handler from the factory.
// Register the same kinds (same names, types and message registrations) on
// every member that should host them.
type Kind struct {
	name           string
	idleTimeout    time.Duration
	handlerTimeout time.Duration
	// producer makes the grain actor of one activation on member m: of
	// identity with the handed-off state (nil when none). ringactor's
	// placement actor spawns it, with the inbox that takes its requests;
	// an actor the producer makes without an identity (Proto.Actor's own
	// identity lookup, no inbox) refuses every request.
	producer func(m *Member, identity string, state []byte, in *inbox) actor.Producer
	// prepare, if set, runs when member m starts (a device kind compiles
	// its program there).
	prepare func(m *Member) error
	req     Requirement // which members may host it (Require; device_placement.go)
	// stateful says the kind's activations have state a state store
	// keeps (NewStatefulKind).
	stateful bool
}

// NewKind declares a cluster kind named name whose activations run a ring
// kernel with the handler newHandler returns (called at every start or
// restart of the kernel, so its state is per identity) and the kernel
// options opts. Req and Resp must be registered message types
// (messages.Register) for the kind to be reachable from other members.
// An activation's state is lost when it passivates or moves; see
// NewStatefulKind for a kind that hands its state over. Define declares the
// same kind and returns its typed handle, whose references check the
// message and reply types at compile time. An activation's kernel parks at
// once when idle unless opts set another actors.WithWaitStrategy.
func NewKind[Req, Resp any](name string, newHandler func() actors.Handler[Req, Resp], opts ...actors.KernelOption) *Kind {
	return newKind(name, func(string, []byte) (started[Req, Resp], error) {
		return started[Req, Resp]{newHandler: newHandler}, nil
	}, opts)
}

// started is what a startFunc returns: the kernel's handler factory and,
// for a stateful kind, the function that returns the state when the
// activation ends and (a Snapshotter) the one that returns it after each
// message.
type started[Req, Resp any] struct {
	newHandler func() actors.Handler[Req, Resp]
	passivate  func() ([]byte, error)
	snapshot   func() ([]byte, error)
}

// startFunc starts one activation of an identity with its handed-off (or
// loaded) state.
type startFunc[Req, Resp any] func(identity string, state []byte) (started[Req, Resp], error)

// newKind declares a kind whose activations start with start.
func newKind[Req, Resp any](name string, start startFunc[Req, Resp], opts []actors.KernelOption) *Kind {
	k := &Kind{name: name, handlerTimeout: DefaultHandlerTimeout}
	k.producer = func(m *Member, identity string, state []byte, in *inbox) actor.Producer {
		return func() actor.Actor {
			return &grain[Req, Resp]{kind: k, member: m, identity: identity, state: state, start: start, opts: opts, inbox: in}
		}
	}
	return k
}

// Name returns the kind's name.
func (k *Kind) Name() string { return k.name }

// WithIdleTimeout makes an activation passivate (terminating its kernel)
// after d without messages; 0, the default, keeps it until its member
// shuts down or the identity moves. It returns k.
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

// build makes the Proto.Actor cluster kind for member m: it names the kind
// in the member's topology entry. Its activations come from ringactor's
// placement actor, not from Proto.Actor's identity lookup.
func (k *Kind) build(m *Member) *pcluster.Kind {
	return pcluster.NewKind(k.name, actor.PropsFromProducer(k.producer(m, "", nil, nil)))
}

// grain is the actor of one activation: it owns the identity's ring kernel
// and turns wire envelopes into typed kernel requests. It handles one
// message at a time, so an identity sees its messages in arrival order. It
// is a child of the member's placement actor, which it tells when it has
// stopped (grainStopped, with the state of a stateful kind).
type grain[Req, Resp any] struct {
	kind     *Kind
	member   *Member
	identity string
	state    []byte
	inbox    *inbox // takes the activation's requests; nil without an identity
	start    startFunc[Req, Resp]
	opts     []actors.KernelOption
	// newDef, if set, declares the identity's kernel (a device kind's
	// device ring kernel) instead of actors.NewKernel with start's handler.
	newDef func(kernelID string) (*actors.KernelDef[Req, Resp], error)

	kernelID string
	spanOpts []trace.SpanStartOption // of the activation's SpanHandle spans
	kernel   *actors.Kernel[Req, Resp]
	snapshot func() ([]byte, error) // a stateful kind's Passivate
	durable  *durable               // the activation's state store record; nil: none
	startErr error                  // why the kernel could not start, if it could not
	// startKind is the WireError kind of startErr (unavailable unless the
	// state store failed).
	startKind string
	self      *actor.PID // the grain's own
	stopping  bool       // told itself to passivate
	out       []byte     // the state Passivate returned
	hasOut    bool
}

// passivateGrain asks a grain to end its activation.
type passivateGrain struct{}

// Receive implements actor.Actor.
func (g *grain[Req, Resp]) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *actor.Started:
		g.activate(c)
	case *pcluster.ClusterInit:
		if g.identity == "" {
			g.startErr = fmt.Errorf("%w: kind %q is activated by ringactor's placement, not Proto.Actor's identity lookup", ErrMemberUnavailable, g.kind.name)
		}
	case *wire.WireEnvelope:
		g.handle(c, msg)
	case *actor.ReceiveTimeout:
		if g.inbox != nil {
			// Requests the inbox admits directly do not reach the
			// mailbox: ask it whether the activation is idle.
			if left := g.inbox.idle(g.kind.idleTimeout); left > 0 {
				c.SetReceiveTimeout(left)
				return
			}
		}
		c.Stop(c.Self())
	case passivateGrain:
		c.Stop(c.Self())
	case *actor.Stopping:
		if g.inbox != nil {
			// The mailbox delivers nothing from now on: what the inbox
			// gave it and it did not handle was not handled.
			for _, q := range g.inbox.close() {
				g.answer(g.member.replyTarget(q.w, q.sender), wire.NewErrorOf(wireKindMoved, g.kernelID+" is passivating", q.w.GetId()))
			}
		}
		g.passivate()
	case *actor.Stopped:
		if g.identity != "" && c.Parent() != nil {
			c.Send(c.Parent(), &grainStopped{key: g.kind.name + "/" + g.identity, kind: g.kind.name, identity: g.identity, pid: c.Self(), state: g.out, hasState: g.hasOut})
		}
	}
}

// activate launches and activates the identity's kernel.
func (g *grain[Req, Resp]) activate(c actor.Context) {
	if g.identity == "" {
		return // made by Proto.Actor's identity lookup: see ClusterInit
	}
	g.kernelID = g.kind.name + "/" + g.identity
	g.self = c.Self()
	g.spanOpts = g.member.handleSpanOptions(g.kind.name, g.kernelID)
	st, err := g.startDurable(c)
	newHandler, snapshot := st.newHandler, st.passivate
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), g.member.activationTimeout)
		defer cancel()
		var def *actors.KernelDef[Req, Resp]
		if g.newDef != nil {
			def, err = g.newDef(g.kernelID)
		} else {
			def = actors.NewKernel(g.kernelID, newHandler, append([]actors.KernelOption{actors.WithWaitStrategy(activationWait)}, g.opts...)...)
		}
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
		if err == nil {
			g.kernel, g.snapshot = h, snapshot
		}
	}
	if err != nil {
		g.startErr = fmt.Errorf("%w: kernel %q: %w", ErrMemberUnavailable, g.kernelID, err)
		if g.startKind == "" {
			g.startKind = wire.KindUnavailable
		}
		g.durable = nil
		g.member.logger.Warn("ringactor/cluster: activation failed", slog.String("kernel", g.kernelID), slog.Any("error", err))
		// The handed-off state stays with the identity.
		g.out, g.hasOut = g.state, g.state != nil
		return
	}
	if g.kind.idleTimeout > 0 {
		c.SetReceiveTimeout(g.kind.idleTimeout)
	}
	if g.inbox != nil {
		k := g.kernel
		g.inbox.open(func(w *wire.WireEnvelope, sender *actor.PID) { g.serve(k, w, sender, true) },
			k.Telemetry().Capacity, g.kind.idleTimeout > 0)
	}
}

// passivate terminates the kernel, draining what it holds, and takes a
// stateful kind's state.
func (g *grain[Req, Resp]) passivate() {
	if g.kernel == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.member.activationTimeout)
	defer cancel()
	if err := g.kernel.Terminate(ctx); err != nil {
		g.member.logger.Warn("ringactor/cluster: kernel termination failed", slog.String("kernel", g.kernelID), slog.Any("error", err))
	}
	g.kernel = nil
	if g.durable != nil {
		g.passivateDurable()
		return
	}
	if g.snapshot != nil {
		st, err := g.snapshot()
		if err != nil {
			g.member.logger.Warn("ringactor/cluster: passivation lost the activation's state", slog.String("kernel", g.kernelID), slog.Any("error", err))
			return
		}
		g.out, g.hasOut = st, true
		if g.out == nil {
			g.out = []byte{}
		}
	}
}

// handle serves a request from the grain's mailbox: one the inbox could
// not admit at once (the kernel was not active yet, or it holds many
// requests), or any request when the grain has no inbox.
func (g *grain[Req, Resp]) handle(c actor.Context, w *wire.WireEnvelope) {
	if g.inbox != nil {
		defer g.inbox.handled(w)
	}
	g.serve(g.kernel, w, c.Sender(), false)
}

// serve admits one request into the kernel k (nil when it is not running)
// and returns at once: the kernel's loop answers the sender when the
// request is handled, so an identity pipelines its requests (in arrival
// order) instead of taking them one at a time. direct says the request
// comes from the inbox, which has counted it as outstanding and knows that
// admitting it does not wait; from the grain's mailbox, admission may wait
// for room.
func (g *grain[Req, Resp]) serve(k *actors.Kernel[Req, Resp], w *wire.WireEnvelope, sender *actor.PID, direct bool) {
	id := w.GetId()
	sender = g.member.replyTarget(w, sender)
	refuse := func(reply any) {
		if direct {
			g.inbox.answered()
		}
		g.answer(sender, reply)
	}
	if c := w.GetCluster(); c != "" && !sameCluster(g.member.name, c, w.GetProtocol()) {
		refuse(wire.NewErrorOf(wireKindClusterMismatch, fmt.Sprintf("the member hosting %s is in cluster %q (protocol %d), the request came from cluster %q (protocol %d)",
			g.kernelID, g.member.name, ProtocolVersion, c, w.GetProtocol()), id))
		return
	}
	if g.member.isFenced() {
		// This member may have been dropped by the others, who may
		// activate the identity elsewhere: it serves nothing until it
		// hears from them again.
		refuse(wire.NewErrorOf(wireKindMoved, "the member hosting the identity is out of touch with the cluster", id))
		return
	}
	if k == nil {
		msg := "kernel not running"
		if g.startErr != nil {
			msg = g.startErr.Error()
		}
		kind := wire.KindUnavailable
		if g.startKind != "" {
			kind = g.startKind
		}
		refuse(wire.NewErrorOf(kind, msg, id))
		if kind != wire.KindUnavailable && !g.stopping {
			// The state store failed the activation: the next request
			// activates the identity again, loading it again.
			g.stopping = true
			g.member.sys.Root.Send(g.self, passivateGrain{})
		}
		return
	}
	if d := g.durable; d != nil && d.stale.Load() {
		// Not handled: the activation is passivating, and its sender
		// looks the identity up again.
		refuse(wire.NewErrorOf(wireKindMoved, g.kernelID+" is stale and passivating", id))
		return
	}
	r := &grainRequest[Req, Resp]{g: g, k: k, sender: sender, id: id}
	if g.durable != nil {
		r.ctx.val = r
		if k := w.GetIdempotencyKey(); k != "" {
			if err := CheckIdempotencyKey(k); err != nil {
				refuse(wire.NewErrorOf(wire.KindDecode, err.Error(), id))
				return
			}
			r.key = k
		}
	}
	if _, err := wire.UnpackInto(w, g.member.maxPayload, &r.req); err != nil {
		var mismatch *wire.TypeMismatchError
		if errors.As(err, &mismatch) {
			refuse(wire.NewErrorOf(wire.KindDecode,
				fmt.Sprintf("kind %q takes %v, got %v", g.kind.name, mismatch.Want, mismatch.Got), id))
			return
		}
		refuse(wire.NewError(err, id))
		return
	}
	timeout := g.kind.handlerTimeout
	if t := time.Duration(w.GetTimeoutNs()); t > 0 && t < timeout {
		timeout, r.remote = t, true
	}
	r.ctx.deadline = time.Now().Add(timeout)
	var ctx context.Context
	ctx, r.span = g.member.startHandleSpan(&r.ctx, w, g.spanOpts)
	if !direct && g.inbox != nil {
		g.inbox.admitting()
	}
	if err := k.RequestAsync(ctx, r.req, r.done); err != nil {
		r.ctx.cancel()
		endHandleSpan(r.span, err)
		if g.inbox != nil {
			g.inbox.answered()
			if direct && g.inbox.isClosed() {
				// The activation is passivating: the request was not
				// handled, and its sender may look the identity up again.
				g.answer(sender, wire.NewErrorOf(wireKindMoved, fmt.Sprintf("%s is passivating: %v", g.kernelID, err), id))
				return
			}
		}
		g.answer(sender, admissionError(err, id, r.remote))
	}
}

// grainRequest is one request an activation's kernel handles: the message,
// its context (a lazy deadline), where its outcome goes and the reply, in
// one allocation.
type grainRequest[Req, Resp any] struct {
	g      *grain[Req, Resp]
	k      *actors.Kernel[Req, Resp]
	sender *actor.PID
	id     uint64
	remote bool // the deadline is the requester's, not the kind's
	span   trace.Span
	ctx    lazyDeadline
	req    Req
	resp   Resp
	// Of a durable activation (statekind.go): the request's idempotency
	// key, the record after it (or why there is none), and, for a request
	// with a key, its outcome (replayed: the reply comes from out).
	key      string
	record   []byte
	recErr   error
	replayed bool
	out      appliedOutcome
	// unhandled: the activation was stale when the kernel came to the
	// request, which it did not handle.
	unhandled bool
}

// done takes the request's outcome from the kernel and answers the sender.
func (r *grainRequest[Req, Resp]) done(resp Resp, err error) {
	r.ctx.cancel()
	endHandleSpan(r.span, err)
	g := r.g
	if g.inbox != nil {
		g.inbox.answered()
	}
	if g.durable != nil {
		g.doneDurable(r, resp, err)
		return
	}
	switch {
	case err == nil:
		r.resp = resp
		if s, ok := any(&r.resp).(PlacementStamper); ok {
			s.StampPlacement(g.member.Address() + "/" + r.k.Placement())
		}
		g.answer(r.sender, g.encodeReply(&r.resp, r.id))
	case r.remote && errors.Is(err, context.DeadlineExceeded):
		// The requester's own deadline passed here.
		g.answer(r.sender, wire.NewErrorOf(wire.KindTimeout, err.Error(), r.id))
	default:
		g.answer(r.sender, wire.NewError(err, r.id))
	}
}

// encodeReply returns the wire form of resp answering request id: a
// *wire.WireEnvelope, or a *wire.WireError when it cannot be encoded.
func (g *grain[Req, Resp]) encodeReply(resp *Resp, id uint64) any {
	h := messages.Header{ID: messages.NextID(), CorrelationID: id, Priority: messages.PriorityNormal}
	out, err := wire.PackFrom(resp, h, g.member.maxPayload)
	if err != nil {
		return wire.NewError(err, id)
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
	if we, ok := reply.(*wire.WireError); ok {
		g.member.logger.Warn("ringactor/cluster: one-way message failed", slog.String("kernel", g.kernelID), slog.String("kind", we.Kind), slog.String("error", we.Message))
	}
}
