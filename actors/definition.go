package actors

import (
	"context"
	"fmt"
	"reflect"

	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/gpu/ringmsg"
	"github.com/ringactor/ringactor/supervision"
)

// Handler handles one message of a ring kernel and returns its reply. It
// runs on the kernel's persistent loop, one message at a time, so it may use
// the kernel-local state its factory closed over without locking. ctx is the
// requester's context for a Request and the kernel's own context for a Send.
type Handler[Req, Resp any] func(ctx context.Context, req Req) (Resp, error)

// Backpressure is what a kernel does with a message when its input ring and
// overflow are full.
type Backpressure uint8

// Backpressure policies.
const (
	// Block makes the sender wait (honouring its context) until there is
	// room. Nothing is dropped. The default.
	Block Backpressure = iota
	// Reject refuses the new message with ErrRingFull; counted as dropped.
	Reject
	// DropOldest evicts the oldest message of the overflow (messages
	// already in the ring are not taken back; with no overflow the new
	// message is the one dropped), which gets ErrDropped as its outcome, and
	// admits the new one; counted as dropped. When that outcome would go to
	// a full receive stream (and could be lost), the new message is refused
	// with ErrRingFull instead.
	DropOldest
)

// String names the policy.
func (b Backpressure) String() string {
	switch b {
	case Block:
		return "block"
	case Reject:
		return "reject"
	case DropOldest:
		return "drop-oldest"
	}
	return fmt.Sprintf("backpressure(%d)", uint8(b))
}

// Drain is what Terminate does with messages still queued.
type Drain uint8

// Drain policies.
const (
	// DrainProcess handles every queued message before the loop exits. The default.
	DrainProcess Drain = iota
	// DrainReject answers every queued message with ErrTerminated.
	DrainReject
)

// Defaults of a kernel definition.
const (
	DefaultCapacity       = 1024
	DefaultOutputCapacity = 1024
)

// KernelDef declares a ring kernel: its id, its message and reply types, and
// the factory of its handler. The factory runs each time the kernel's actor
// starts or restarts, so the state it creates is fresh after a failure.
type KernelDef[Req, Resp any] struct {
	id         string
	newHandler func() Handler[Req, Resp]
	capacity   int
	overflow   int
	outCap     int
	policy     Backpressure
	drain      Drain
	downstream string
	decider    supervision.Decider
	wait       ring.WaitStrategy
	yields     int            // a waiting requester's yields before it parks (WithRequesterYields)
	device     ringmsg.Op     // a built-in device ring handler (NewDeviceKernel); 0: none
	prog       *deviceProgram // a user's device ring program (NewDeviceRingKernel); nil: none
	onCapacity OnDeviceCapacity
	pin        int // a device ring kernel's device (WithDevice), plus one; 0: none
	mailboxCap int // a device ring kernel's mailbox ring capacity: WithCapacity's, 0 when not set
	// newBody makes a stateful kernel's State and handler (NewStatefulKernel);
	// nil for a kernel whose handler comes from newHandler.
	newBody func() stateBody[Req, Resp]
	store   *stateStore // WithStateStore; nil: none
}

// KernelOption configures a KernelDef.
type KernelOption func(*kernelOptions)

type kernelOptions struct {
	capacity, overflow, outCap int
	capacitySet                bool
	policy                     Backpressure
	drain                      Drain
	downstream                 string
	decider                    supervision.Decider
	wait                       ring.WaitStrategy
	yields                     int
	onCapacity                 OnDeviceCapacity
	pin                        int
	store                      *stateStore
}

// WithCapacity sets the input ring's capacity, a power of two (default
// 1024). A device ring kernel's mailbox on the device gets rings of up to
// that capacity too: fewer slots when that many of its messages would pin
// more than the backend's per-mailbox bound (cuda.WithMailboxPinnedMax);
// without it, 16 slots, fewer for large messages.
func WithCapacity(n int) KernelOption {
	return func(o *kernelOptions) { o.capacity, o.capacitySet = n, true }
}

// WithOverflow sets how many messages may wait beyond a full ring before the
// backpressure policy applies (default: the ring's capacity).
func WithOverflow(n int) KernelOption { return func(o *kernelOptions) { o.overflow = n } }

// WithOutputCapacity sets how many replies of sent (not requested) messages
// the receive stream holds before the kernel waits for a Receive (default 1024).
func WithOutputCapacity(n int) KernelOption { return func(o *kernelOptions) { o.outCap = n } }

// WithBackpressure sets the policy for a full kernel (default Block).
func WithBackpressure(p Backpressure) KernelOption { return func(o *kernelOptions) { o.policy = p } }

// WithDrain sets what Terminate does with queued messages (default DrainProcess).
func WithDrain(d Drain) KernelOption { return func(o *kernelOptions) { o.drain = d } }

// WithDownstream routes this kernel's replies to the kernel with the given id
// (launched earlier, taking this kernel's reply type as its message type)
// instead of the receive stream. A Request through a chain is answered by the
// last kernel of the chain.
func WithDownstream(id string) KernelOption { return func(o *kernelOptions) { o.downstream = id } }

// WithDecider sets how handler failures are classified (default
// supervision.DefaultDecider: restart after a panic, resume after an error).
func WithDecider(d supervision.Decider) KernelOption { return func(o *kernelOptions) { o.decider = d } }

// WithWaitStrategy sets the idle strategy of the kernel's loop.
func WithWaitStrategy(w ring.WaitStrategy) KernelOption { return func(o *kernelOptions) { o.wait = w } }

// WithRequesterYields sets how many times a Request waiting for its reply
// yields the processor (runtime.Gosched), looking for the reply, before it
// parks; DefaultRequesterYields when not set. It is the requester's side of
// the hand-off, as WithWaitStrategy is the loop's.
//
// A yield lets a loop that shares the requester's processor answer before
// the requester parks, which is the cheaper round trip; but a goroutine that
// yields waits on a run queue, where an idle processor may take it, and the
// round trips that cross processors that way make the latency's tail. With
// 0 the requester parks at once and is woken by the reply directly: on the
// 2-core machine of README's Performance section a higher median (1.34–1.49×
// a Go channel ping-pong's, against 1.13–1.23×) for a tighter tail (p99 1.56–
// 2.34× its median, against 2.07–2.85×). A negative n is refused at launch
// (ErrInvalidKernel).
func WithRequesterYields(n int) KernelOption { return func(o *kernelOptions) { o.yields = n } }

// DefaultRequesterYields is how many times a waiting Request yields before
// it parks unless WithRequesterYields says otherwise.
const DefaultRequesterYields = 1

// NewKernel declares a ring kernel whose handler keeps state: newHandler runs
// at every (re)start of the kernel and returns the handler for that
// incarnation.
func NewKernel[Req, Resp any](id string, newHandler func() Handler[Req, Resp], opts ...KernelOption) *KernelDef[Req, Resp] {
	o := kernelOptions{capacity: DefaultCapacity, outCap: DefaultOutputCapacity, decider: supervision.DefaultDecider, wait: ring.DefaultWaitStrategy, overflow: -1, yields: DefaultRequesterYields}
	for _, opt := range opts {
		opt(&o)
	}
	if o.overflow < 0 {
		o.overflow = o.capacity
	}
	return &KernelDef[Req, Resp]{
		id: id, newHandler: newHandler, capacity: o.capacity, overflow: o.overflow, outCap: o.outCap,
		policy: o.policy, drain: o.drain, downstream: o.downstream, decider: o.decider, wait: o.wait,
		yields: o.yields, onCapacity: o.onCapacity, pin: o.pin, mailboxCap: o.mailboxCapacity(),
		store: o.store,
	}
}

// NewStatelessKernel declares a ring kernel from a handler that keeps no state.
// A nil h is refused with ErrInvalidKernel at registration and launch.
func NewStatelessKernel[Req, Resp any](id string, h Handler[Req, Resp], opts ...KernelOption) *KernelDef[Req, Resp] {
	if h == nil {
		return NewKernel[Req, Resp](id, nil, opts...)
	}
	return NewKernel(id, func() Handler[Req, Resp] { return h }, opts...)
}

// ID returns the kernel's id.
func (d *KernelDef[Req, Resp]) ID() string { return d.id }

// MessageType returns the type the kernel takes.
func (d *KernelDef[Req, Resp]) MessageType() reflect.Type { return reflect.TypeFor[Req]() }

// ReplyType returns the type the kernel replies with.
func (d *KernelDef[Req, Resp]) ReplyType() reflect.Type { return reflect.TypeFor[Resp]() }

// validate checks the definition before launch.
func (d *KernelDef[Req, Resp]) validate() error {
	switch {
	case d.id == "":
		return fmt.Errorf("%w: empty kernel id", ErrInvalidKernel)
	case d.newHandler == nil && d.newBody == nil:
		return fmt.Errorf("%w: kernel %q has no handler", ErrInvalidKernel, d.id)
	case d.store != nil && d.newBody == nil:
		return fmt.Errorf("%w: kernel %q: WithStateStore needs a kernel with a State (NewStatefulKernel)", ErrInvalidKernel, d.id)
	case !ring.ValidCapacity(d.capacity):
		return kernelErr(d.id, &ring.CapacityError{Capacity: d.capacity})
	case d.overflow < 0 || d.outCap < 1:
		return fmt.Errorf("%w: kernel %q: overflow %d and output capacity %d must be ≥ 0 and ≥ 1", ErrInvalidKernel, d.id, d.overflow, d.outCap)
	case d.yields < 0:
		return fmt.Errorf("%w: kernel %q: requester yields %d must be ≥ 0", ErrInvalidKernel, d.id, d.yields)
	case d.policy > DropOldest || d.drain > DrainReject:
		return fmt.Errorf("%w: kernel %q: unknown backpressure or drain policy", ErrInvalidKernel, d.id)
	}
	return nil
}

// mailboxCapacity is a device mailbox's ring capacity: WithCapacity's, or
// 0 for the mailbox's default.
func (o kernelOptions) mailboxCapacity() int {
	if o.capacitySet {
		return o.capacity
	}
	return 0
}
