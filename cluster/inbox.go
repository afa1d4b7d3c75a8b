package cluster

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/wire"
)

// inbox is the Proto.Actor process that takes an activation's requests: the
// PID that placement hands out is the inbox's, not the grain actor's. A
// request the inbox can admit into the activation's kernel without waiting
// goes straight there from the sender's goroutine (a remote endpoint
// reader, a local requester), so a request crosses no more goroutines on
// the hosting member than a raw Proto.Actor request (reader, kernel,
// endpoint writer). Any other request goes through the grain actor's
// mailbox, whose goroutine may wait for room (the endpoint reader must not:
// it reads every message from the sending member).
//
// Order: an identity handles the requests of one sender in the order they
// arrive. A sender's requests reach the inbox one after the other (one
// goroutine per remote connection); once one of them has gone to the
// grain, the following ones go there too until the grain has handled
// every request it was given (none is queued).
//
// Outcome: the inbox keeps the requests it gave the grain until the grain
// has handled them. A stopping actor drops what its mailbox still holds,
// so when the grain stops the inbox hands the requests it still keeps back
// (close), and the grain answers them: not handled, look again.
//
// No wait: admission waits only when the kernel's ring is full (and its
// overflow, when it has one). The inbox counts the requests admitted and
// not yet answered (outstanding) and admits directly only below half the
// ring's capacity, which leaves room for the slots of the batch the kernel
// holds (its loop answers a batch, at most 64 messages, before it gives the
// batch's slots back). Since outstanding was last 0 (ring and overflow
// empty), every admission below that limit found a free slot; a request
// the grain admits at or above it may have gone to the overflow, so direct
// admission stops (tainted) until outstanding is 0 again.
//
// Bounded: the requests given to the grain and not yet handled (queued)
// are at most maxQueued (the kernel's ring capacity once it is open,
// DefaultCapacity before). A request that finds the queue full is not
// queued: refuse answers it at once with a WireError of kind overloaded
// (ErrOverloaded to the client), so an overloaded activation holds a
// bounded number of requests and every request has an outcome soon.
type inbox struct {
	sys   *actor.ActorSystem
	self  *actor.PID // the inbox's PID
	grain *actor.PID // the grain actor: requests not admitted here go there

	mu          sync.Mutex
	serve       func(w *wire.WireEnvelope, sender *actor.PID) // admits without waiting; nil until the kernel is active
	closed      bool
	queued      []queuedRequest // requests given to the grain and not yet handled by it, in order
	outstanding int             // requests admitted (or being admitted) and not yet answered
	limit       int             // direct admission only while outstanding is below it
	tainted     bool
	trackIdle   bool
	last        time.Time // when the last request came in directly (with trackIdle)
	// refuse answers a request that finds the queue full (nil: the queue
	// is unbounded, for tests of the inbox alone); maxQueued bounds it.
	refuse    func(w *wire.WireEnvelope, sender *actor.PID, queued int)
	maxQueued int
	refused   uint64 // requests refused so far
}

// minDirectLimit is the smallest limit of direct admissions: a kernel whose
// ring holds fewer than twice that many messages gets its requests through
// the grain.
const minDirectLimit = 64

// minQueued is the smallest bound of the requests an inbox queues for its
// grain.
const minQueued = 64

// newInbox returns the inbox of an activation not yet spawned.
func newInbox(sys *actor.ActorSystem) *inbox {
	return &inbox{sys: sys, maxQueued: actors.DefaultCapacity}
}

// register gives the inbox the grain actor's PID and registers it as a
// process of the actor system under id.
func (in *inbox) register(grain *actor.PID, id string) (*actor.PID, error) {
	in.mu.Lock()
	in.grain = grain
	in.mu.Unlock()
	pid, ok := in.sys.ProcessRegistry.Add(in, id)
	if !ok {
		return nil, fmt.Errorf("ringactor/cluster: process %q exists", id)
	}
	in.mu.Lock()
	in.self = pid
	in.mu.Unlock()
	return pid, nil
}

// open lets requests in directly: serve admits one without waiting, on a
// kernel whose ring holds capacity messages. trackIdle makes the inbox
// note when requests come in (see idle).
func (in *inbox) open(serve func(*wire.WireEnvelope, *actor.PID), capacity int, trackIdle bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	in.serve, in.limit, in.trackIdle = serve, capacity/2, trackIdle
	in.maxQueued = max(capacity, minQueued)
	if in.limit < minDirectLimit {
		in.limit = 0
	}
	in.last = time.Now()
}

// queuedRequest is a request the inbox gave the grain, with its sender.
type queuedRequest struct {
	w      *wire.WireEnvelope
	sender *actor.PID
}

// close stops taking requests: from now on they are dead letters (their
// senders look the identity up again). It returns the requests given to
// the grain that it has not handled: the grain closes its inbox as it
// stops, after which its mailbox delivers nothing, so it answers them
// itself. The grain closes its inbox before it terminates its kernel.
func (in *inbox) close() []queuedRequest {
	in.mu.Lock()
	in.closed, in.serve = true, nil
	self := in.self
	left := in.queued
	in.queued = nil
	in.mu.Unlock()
	if self != nil {
		in.sys.ProcessRegistry.Remove(self)
	}
	return left
}

// isClosed reports whether close was called.
func (in *inbox) isClosed() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.closed
}

// SendUserMessage implements actor.Process: a request goes to the kernel
// directly when it can, else to the grain.
func (in *inbox) SendUserMessage(pid *actor.PID, message any) {
	_, msg, sender := actor.UnwrapEnvelope(message)
	w, isRequest := msg.(*wire.WireEnvelope)
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		in.sys.DeadLetter.SendUserMessage(pid, message)
		return
	}
	if !isRequest || in.serve == nil || len(in.queued) > 0 || in.tainted || in.outstanding >= in.limit {
		if isRequest {
			if in.refuse != nil && len(in.queued) >= in.maxQueued {
				in.refused++
				n, refuse := len(in.queued), in.refuse
				in.mu.Unlock()
				refuse(w, sender, n)
				return
			}
			in.queued = append(in.queued, queuedRequest{w: w, sender: sender})
		}
		grain := in.grain
		in.mu.Unlock()
		in.sys.Root.Send(grain, message)
		return
	}
	in.outstanding++
	if in.trackIdle {
		in.last = time.Now()
	}
	serve := in.serve
	in.mu.Unlock()
	serve(w, sender)
}

// admitting notes a request the grain is about to admit (it may wait).
func (in *inbox) admitting() {
	in.mu.Lock()
	if in.outstanding >= in.limit {
		in.tainted = true
	}
	in.outstanding++
	in.mu.Unlock()
}

// answered notes that an admitted request (or one that was about to be) has
// its outcome.
func (in *inbox) answered() {
	in.mu.Lock()
	in.outstanding--
	if in.outstanding == 0 {
		in.tainted = false
	}
	in.mu.Unlock()
}

// handled notes that the grain is done with the request w the inbox gave
// it (admitted, or answered at once). Requests reach the grain in the
// order they were queued but for senders racing each other: w is
// usually the first.
func (in *inbox) handled(w *wire.WireEnvelope) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for i, q := range in.queued {
		if q.w == w {
			in.queued = slices.Delete(in.queued, i, i+1)
			return
		}
	}
}

// idle reports how long to wait before the activation counts as idle for
// the idle timeout d: 0 when it is idle now (no request in hand, none come
// in directly for d).
func (in *inbox) idle(d time.Duration) time.Duration {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.outstanding > 0 || len(in.queued) > 0 {
		return d
	}
	if since := time.Since(in.last); since < d {
		return max(d-since, time.Millisecond)
	}
	return 0
}

// SendSystemMessage implements actor.Process: the inbox has no lifecycle of
// its own (the grain actor's is the activation's).
func (in *inbox) SendSystemMessage(*actor.PID, any) {}

// Stop implements actor.Process.
func (in *inbox) Stop(*actor.PID) {}
