package actors

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/lifecycle"
	"github.com/ringactor/ringactor/messages"
	"github.com/ringactor/ringactor/telemetry"
)

// epoch anchors the monotonic timestamps of slots.
var (
	epoch     = time.Now()
	epochUnix = epoch.UnixNano()
)

// monoNow returns the monotonic nanoseconds since epoch, at least 1 (a slot's
// enq 0 means the message is not timed).
func monoNow() int64 { return max(int64(time.Since(epoch)), 1) }

// slot is one message in a kernel's input ring or overflow.
type slot[Req, Resp any] struct {
	id    uint64
	enq   int64           // admission time (monoNow), 0 when not timed (kernel_timing.go)
	ctx   context.Context // the requester's context, or the kernel's for a Send
	msg   Req
	fwd   error         // set when an upstream kernel forwards a failure: skip the handler
	w     *waiter[Resp] // a direct, typed requester
	wgen  uint64        // the generation of w's request
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

	// The admission state: what every sender writes (the lock, and which
	// admissions are timed) shares one cache line, apart from what the
	// consumer writes, so that an admission on another core than the last
	// one moves as few lines as it can.
	_     [ring.CacheLine]byte
	mu    sync.Mutex // admission: the producer side of in, overflow, state
	st    lifecycle.State
	clock admissionClock // which admissions are timed (kernel_timing.go)
	_     [ring.CacheLine]byte

	overflow queue[slot[Req, Resp]]
	// the contexts whose requesters wait without a select, the ring's
	// cancellation table, and the context that came with the last candRun
	// requests (cancelwatch.go)
	watches    []*ctxWatch
	watchTable []watchEntry[Resp]
	candDone   <-chan struct{}
	candRun    int
	space      chan struct{} // closed when room frees for blocked senders
	self       *actor.PID

	stA       atomic.Uint32 // copy of st for lock-free reads
	ovLen     atomic.Int64  // overflow.len() for the loop's cheap check
	blocked   atomic.Bool   // senders wait for room (space != nil)
	rejectAll atomic.Bool   // draining answers drainCause instead of handling
	// drainCause is what a rejecting drain answers (ErrTerminated, joined
	// with the last fault after a supervisor gave up); written before
	// rejectAll is set, read after it is seen.
	drainCause error

	// where the current incarnation runs (a device kernel's backend, or
	// PlacementCPU); for a device kernel, from launch to its first start,
	// where it is to run; nil for a CPU kernel before its first start
	placement atomic.Pointer[string]
	// placementWhy is why the kernel runs on its fallback (nil on the
	// device, or for a kernel without a device program).
	placementWhy atomic.Pointer[error]
	// placed: an incarnation has started and set placement (whose first
	// value is logged then, even when launch predicted it)
	placed atomic.Bool

	// batch holds the latencies of the timed messages the current consumer
	// (the loop, the device pump, or the actor draining without a loop)
	// finished since its last endBatch.
	batch ring.Batch
	// batchEnd is when the consumer finished the last timed message of its
	// batch (monoNow): the batch's end for the latency words and heartbeat.
	batchEnd int64
	// taken is the ring index just past the last message the batch
	// consumer (poll) has answered: the messages of a batch stay in the
	// ring until its slots are released at the batch's end, and stats
	// counts as queued only those from max(head, taken) to the tail. One
	// index, stored before each outcome leaves, so a reader sees no moment
	// where an answered message is queued or the release and the count
	// disagree (Processed minus a batch start, read beside the ring's
	// length, did: a Status between the release and endBatch counted too
	// few).
	taken atomic.Uint64
	// hist holds the latency histograms the consumer bumps per message;
	// nil when the runtime's telemetry is off.
	hist *kernelHistograms

	// firstHandler is the handler launch built for the first incarnation
	// (nil for a device kernel); the actor takes it at its first start.
	firstHandler Handler[Req, Resp]
	// firstDevice is the device mailbox launch opened for the first
	// incarnation of a device ring kernel (nil: none, or it fell back).
	firstDevice *deviceLaunch
	// body is a stateful kernel's State and handler (NewStatefulKernel),
	// persist its store (WithStateStore), stateBuf the outcomes of its
	// batch (state_consumption.go); nil without.
	body     stateBody[Req, Resp]
	persist  *persister
	stateBuf []stateOutcome[Req, Resp]
	// offDevice is the device fault that moved the kernel to its fallback
	// for good (it does not move to another device of the runtime).
	offDevice error

	// owned by the actor goroutine
	loopRunning bool
	// devHeld are messages a device incarnation took from the ring and
	// did not answer, oldest first: one it could not yet submit (the
	// device's input ring was full), or those the device held when it
	// faulted. The next incarnation handles them first.
	devHeld     []*slot[Req, Resp]
	loopDone    chan struct{}
	lastFault   error
	terminators []func(lifecycle.Reply)
}

func newKernel[Req, Resp any](rt *Runtime, def *KernelDef[Req, Resp]) *kernel[Req, Resp] {
	k := &kernel[Req, Resp]{def: def, rt: rt, cb: ring.NewControlBlock(), wake: ring.NewSignal(), ended: make(chan struct{})}
	k.ctx, k.cancel = context.WithCancel(context.Background())
	k.waiters.New = func() any { return newWaiter[Resp]() }
	k.term = reflect.TypeFor[Resp]()
	if rt.tracing {
		k.hist = newKernelHistograms()
	}
	if def.newBody != nil {
		k.body = def.newBody()
	}
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
	var persist *persister
	if k.def.store != nil {
		// The last durable State is restored now: a store that cannot be
		// read, or a record that cannot be, is an error of Launch.
		if persist, err = newPersister(k.def.id, k.def.store); err != nil {
			return err
		}
		persist.body, persist.wake = k.body, k.wake.Notify
		if err := persist.restore(ctx); err != nil {
			return err
		}
	}
	var dev *deviceLaunch
	if k.def.prog != nil {
		// The first incarnation's mailbox is opened now, so a device without
		// room for it is an error of Launch when the kernel asks for that.
		r, b, err := k.def.prog.launch(k.rt, k.def.pin, k.def.mailboxCap)
		switch {
		case err == nil:
			dev = &deviceLaunch{ring: r, backend: b}
		case k.def.onCapacity == CapacityError && errors.Is(err, gpu.ErrDeviceCapacity):
			return kernelErr(k.def.id, err)
		default:
			dev = &deviceLaunch{why: err}
		}
		// Where the first incarnation will run, known now: Placement says
		// so from Launch on, not only once the actor has started.
		where := PlacementCPU
		if dev.ring != nil {
			where = dev.backend.Name()
		} else if dev.why != nil {
			k.placementWhy.Store(&dev.why)
		}
		k.placement.Store(&where)
	}
	k.in, k.out, k.down, k.term, k.firstHandler, k.firstDevice = in, make(chan output[Resp], k.def.outCap), down, term, first, dev
	k.persist = persist
	k.setState(next)
	// Spawning runs no code of this kernel's actor synchronously (Started is
	// delivered on the actor's own goroutine), so it may happen under mu.
	pid, err := k.rt.orch.spawn(ctx, k.def.id, k.props())
	if err != nil {
		if dev != nil && dev.ring != nil {
			_ = dev.ring.Close(ctx)
		}
		k.firstDevice = nil
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
	if h = k.newHandler(); h == nil {
		return nil, fmt.Errorf("%w: the handler factory returned a nil handler", ErrInvalidKernel)
	}
	return h, nil
}

// newHandler is the handler of a new incarnation: a stateful kernel's, on
// a fresh State, or what the definition's factory returns.
func (k *kernel[Req, Resp]) newHandler() Handler[Req, Resp] {
	if k.body != nil {
		return k.body.fresh()
	}
	return k.def.newHandler()
}

// props are the kernel actor's Proto.Actor properties: its producer and the
// mailbox whose user messages feed the ring.
func (k *kernel[Req, Resp]) props() *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor { return &kernelActor[Req, Resp]{k: k} },
		actor.WithMailbox(k.mailbox()))
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
		taken := k.taken.Load() // before the ring's indices: taken <= tail
		head, tail := in.Indices()
		depth += int64(tail - max(head, taken))
		capacity = in.Cap()
		mem = int64(capacity)*int64(reflect.TypeFor[slot[Req, Resp]]().Size()) + int64(reflect.TypeFor[ring.ControlBlock]().Size())
	}
	backend := PlacementCPU
	if p := k.placement.Load(); p != nil {
		backend = *p
	}
	st := telemetry.KernelStats{
		Kernel: k.def.id, Backend: backend, State: k.state().String(),
		Processed: s.Processed, Dropped: s.Dropped, Errors: s.Errors, Restarts: s.Restarts,
		Depth: depth, Capacity: capacity, MemoryBytes: mem,
		LatencyMin: s.LatencyMin, LatencyAvg: s.LatencyAvg, LatencyMax: s.LatencyMax,
		LastActivity: s.LastActivity,
	}
	k.hist.snapshot(&st)
	return st
}

// nextID returns a new message id, unique in the process.
func nextID() uint64 { return messages.NextID() }
