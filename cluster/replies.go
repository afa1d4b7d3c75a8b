package cluster

import (
	"strings"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/internal/wire"
)

// replyProcessID is the id under which a member registers the one process
// that takes the replies to all its requests to activations.
const replyProcessID = "ringactor$replies"

// replies is that process: a table of the requests waiting for their
// reply, keyed by request id. A request carries no Proto.Actor sender; its
// envelope's ReplyTo names this process ("ADDRESS/ringactor$replies"), and
// the hosting member answers there with a *wire.WireEnvelope whose
// CorrelationId is the request's id, or a *wire.WireError whose
// MessageId is. Compared with a process registered and removed in the
// actor system's registry for every request (what a Proto.Actor future
// is), this saves the registry's work, and the remote's per-message work
// for a sender or a target that differs in every message (Proto.Actor
// copies each distinct PID of a batch).
//
// A request that becomes a dead letter (its activation is gone, or it could
// not be sent) carries no sender to answer either: the member where it
// became one answers it with a WireError of kind wireKindGone to its
// ReplyTo (see Member.onDeadLetter), so that it still gets exactly one
// outcome.
type replies struct {
	mu      sync.Mutex
	pending map[uint64]*replyWaiter
}

// replyWaiter is where one request's reply goes; waiters are recycled.
type replyWaiter struct{ ch chan any }

var replyWaiters = sync.Pool{New: func() any { return &replyWaiter{ch: make(chan any, 1)} }}

func newReplies() *replies { return &replies{pending: make(map[uint64]*replyWaiter)} }

// wait registers the request id, whose reply the returned waiter takes;
// false when a request of that id is waiting already.
func (r *replies) wait(id uint64) (*replyWaiter, bool) {
	wt := replyWaiters.Get().(*replyWaiter)
	r.mu.Lock()
	if _, dup := r.pending[id]; dup {
		r.mu.Unlock()
		replyWaiters.Put(wt)
		return nil, false
	}
	r.pending[id] = wt
	r.mu.Unlock()
	return wt, true
}

// done unregisters the request id and recycles its waiter: a reply that
// comes later is dropped.
func (r *replies) done(id uint64, wt *replyWaiter) {
	r.mu.Lock()
	if r.pending[id] == wt {
		delete(r.pending, id)
	}
	r.mu.Unlock()
	// Replies are delivered under mu to registered waiters only: nothing
	// comes into ch from now on.
	select {
	case <-wt.ch:
	default:
	}
	replyWaiters.Put(wt)
}

// waiting returns how many requests wait for their reply.
func (r *replies) waiting() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// SendUserMessage implements actor.Process: a reply goes to the request it
// answers, if it still waits; anything else is dropped.
func (r *replies) SendUserMessage(_ *actor.PID, message any) {
	msg := actor.UnwrapEnvelopeMessage(message)
	var id uint64
	switch m := msg.(type) {
	case *wire.WireEnvelope:
		id = m.GetCorrelationId()
	case *wire.WireError:
		id = m.GetMessageId()
	default:
		return
	}
	r.mu.Lock()
	if wt := r.pending[id]; wt != nil {
		delete(r.pending, id)
		wt.ch <- msg // buffered, and each waiter takes one reply
	}
	r.mu.Unlock()
}

// SendSystemMessage implements actor.Process.
func (r *replies) SendSystemMessage(*actor.PID, any) {}

// Stop implements actor.Process.
func (r *replies) Stop(*actor.PID) {}

// removeReplies unregisters the member's reply process (an embedded
// member's actor system lives on).
func (m *Member) removeReplies() {
	m.sys.ProcessRegistry.Remove(&actor.PID{Id: replyProcessID})
}

// replyTarget caches a member's ReplyTo for its address.
type replyTarget struct{ addr, replyTo string }

// replyAddress returns the ReplyTo of this member's requests.
func (m *Member) replyAddress() string {
	addr := m.sys.Address()
	if c := m.replyTo.Load(); c != nil && c.addr == addr {
		return c.replyTo
	}
	c := &replyTarget{addr: addr, replyTo: addr + "/" + replyProcessID}
	m.replyTo.Store(c)
	return c.replyTo
}

// maxReplyPIDs bounds the cache of reply PIDs (one per requesting member,
// in a sane cluster): a member that hears of more requesters makes a PID
// per reply instead.
const maxReplyPIDs = 1024

// replyPID returns the PID that a request's ReplyTo ("ADDRESS/ID") names,
// or nil when it names none. PIDs are cached: Proto.Actor caches the
// process behind a PID in the PID itself.
func (m *Member) replyPID(replyTo string) *actor.PID {
	if p, ok := m.replyPIDs.Load(replyTo); ok {
		return p.(*actor.PID)
	}
	addr, id, ok := strings.Cut(replyTo, "/")
	if !ok || addr == "" || id == "" {
		return nil
	}
	pid := actor.NewPID(addr, id)
	if m.replyPIDCount.Load() < maxReplyPIDs {
		if p, loaded := m.replyPIDs.LoadOrStore(replyTo, pid); loaded {
			return p.(*actor.PID)
		}
		m.replyPIDCount.Add(1)
	}
	return pid
}

// replyTarget returns where the answer to the request w goes: the reply
// process its ReplyTo names (a ringactor requester's, see replies), else
// its Proto.Actor sender (nil for a one-way message).
func (m *Member) replyTarget(w *wire.WireEnvelope, sender *actor.PID) *actor.PID {
	if rt := w.GetReplyTo(); rt != "" {
		if to := m.replyPID(rt); to != nil {
			return to
		}
	}
	return sender
}

// onDeadLetter answers a request that became a dead letter on this member
// (its target is gone, or this member could not send it) with a WireError
// of kind wireKindGone to its ReplyTo: its requester looks the identity up
// again. Replies (a CorrelationId) and one-way messages (no ReplyTo) are
// left alone.
func (m *Member) onDeadLetter(ev *actor.DeadLetterEvent) {
	w, ok := ev.Message.(*wire.WireEnvelope)
	if !ok || w.GetReplyTo() == "" || w.GetCorrelationId() != 0 {
		return
	}
	to := m.replyPID(w.GetReplyTo())
	if to == nil {
		return
	}
	target := "nil"
	if ev.PID != nil {
		target = ev.PID.Address + "/" + ev.PID.Id
	}
	m.sys.Root.Send(to, wire.NewErrorOf(wireKindGone, "no process "+target+" takes the request", w.GetId()))
}
