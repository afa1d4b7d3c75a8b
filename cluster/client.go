package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/protobuf/proto"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/messages"
)

// lookupRetry is the pause between attempts to find an identity's
// activation while the topology settles or an activation moves.
const lookupRetry = 20 * time.Millisecond

// Request sends msg to the identity of kind, which the identity's owner
// activates if it is not active (the request follows redirects from
// members whose view differs; see the package documentation), and waits for
// its reply of type Resp. Resp comes
// first so that Req is inferred: cluster.Request[Sum](ctx, m, "add", "a", pair).
//
// The deadline is ctx's, or DefaultRequestTimeout (WithRequestTimeout) from
// now when ctx has none. Errors: ErrUnknownKind when no member hosts kind;
// ErrTimeout (which wraps context.DeadlineExceeded) when the deadline
// passes, also matching ErrMemberUnavailable when no activation could be
// reached; ctx's error when it is cancelled; a *RemoteError for a failure on
// the remote side (errors.Is(err, gpu.ErrExecution) for a failed handler);
// the errors of package messages (ErrUnregistered, ErrDecode, ...) for a
// message or reply that cannot be encoded or decoded here.
func Request[Resp, Req any](ctx context.Context, m *Member, kind, identity string, msg Req) (Resp, error) {
	var zero Resp
	w, err := encodeRequest(m, msg)
	if err == nil {
		err = withKey(ctx, w)
	}
	if err != nil {
		return zero, err
	}
	reply, err := m.tracedCall(ctx, kind, identity, w, true)
	if err != nil {
		return zero, err
	}
	switch r := reply.(type) {
	case *wire.WireError:
		return zero, fromWireError(r)
	case *wire.WireEnvelope:
		_, resp, err := wire.UnpackAs[Resp](r, m.maxPayload)
		if err != nil {
			return zero, replyError[Resp](err, kind)
		}
		return resp, nil
	default:
		return zero, fmt.Errorf("ringactor/cluster: %w: unexpected reply %T", messages.ErrDecode, reply)
	}
}

// replyError is the error of a reply that does not decode as a Resp.
func replyError[Resp any](err error, kind string) error {
	var mismatch *wire.TypeMismatchError
	if errors.As(err, &mismatch) {
		var zero Resp
		return fmt.Errorf("ringactor/cluster: %w: reply of kind %q is %v, want %T: %w",
			messages.ErrDecode, kind, mismatch.Got, zero, actors.ErrWrongMessageType)
	}
	return err
}

// Send delivers msg to the identity of kind without waiting for its handling
// (one-way): it returns once the message is on its way to the identity's
// activation. Failures after that are logged by the hosting member. Its
// errors are those of Request before a reply is awaited.
func Send[Req any](ctx context.Context, m *Member, kind, identity string, msg Req) error {
	w, err := encodeRequest(m, msg)
	if err == nil {
		err = withKey(ctx, w)
	}
	if err != nil {
		return err
	}
	_, err = m.tracedCall(ctx, kind, identity, w, false)
	return err
}

// encodeRequest turns msg into the wire envelope of a request from m.
func encodeRequest[Req any](m *Member, msg Req) (*wire.WireEnvelope, error) {
	w, err := wire.PackOf(msg, messages.Header{ID: messages.NextID(), Priority: messages.PriorityNormal}, m.maxPayload)
	if err != nil {
		if errors.Is(err, messages.ErrUnregistered) || errors.Is(err, messages.ErrNilMessage) {
			return nil, fmt.Errorf("ringactor/cluster: %w", err)
		}
		return nil, err
	}
	w.Cluster, w.Protocol = m.name, ProtocolVersion
	return w, nil
}

// call finds the identity's activation and sends it w, waiting for its reply
// when wantReply; it retries while the activation is unreachable (topology
// changes, passivated activations) until the deadline.
func (m *Member) call(ctx context.Context, kind, identity string, w *wire.WireEnvelope, wantReply bool) (any, error) {
	select {
	case <-m.closed:
		return nil, ErrClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError(err, nil)
	}
	var last error // why the previous attempt failed
	// The first time the activation a request went to turns out gone or
	// moving (a stale PID: the identity passivated, or moved after a
	// member's fault), the identity is looked up again at once: the
	// lookup asks the placement, which knows. Later failures pause.
	lookAgain := true
	if _, ok := ctx.Deadline(); !ok {
		deadline := time.Now().Add(m.requestTimeout)
		res, err, done := m.callCached(ctx, deadline, kind, identity, w, wantReply)
		if done {
			return res, err
		}
		last, lookAgain = err, err == nil // a failed cached attempt is looked up again at once below
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	for {
		hosts, members, changed := m.topology(kind)
		if hosts == 0 {
			if members > 0 {
				return nil, fmt.Errorf("%w: %q", ErrUnknownKind, kind)
			}
			// No topology yet: wait for one, unless every node the
			// provider reached belongs to another cluster.
			if err := m.providerJoinError(); err != nil {
				return nil, err
			}
			last = m.noTopologyError()
			t := time.NewTimer(lookupRetry)
			select {
			case <-changed:
				t.Stop()
				continue
			case <-t.C:
				continue // check the provider's join error again
			case <-ctx.Done():
				t.Stop()
				return nil, ctxError(ctx.Err(), last)
			}
		}
		pid, why, err := m.lookup(ctx, kind, identity)
		switch {
		case errors.Is(err, ErrNoCapacity):
			// A member with a device may yet join or be heard of: asked
			// again until the deadline, which then reports it.
			last = err
		case err != nil:
			return nil, ctxError(err, last)
		case pid == nil:
			last = fmt.Errorf("%w: no activation of %s/%s: %s", ErrMemberUnavailable, kind, identity, why)
		case !wantReply:
			m.sys.Root.Send(pid, w)
			return nil, nil
		default:
			deadline, _ := ctx.Deadline()
			w.TimeoutNs = uint64(max(time.Until(deadline), 0))
			res, err := m.requestReply(ctx, pid, w, nil)
			reply, final, retry := m.outcome(res, err, pid, kind, identity)
			if retry == nil {
				if final != nil {
					return nil, ctxError(final, last)
				}
				return reply, nil
			}
			last = retry
			if lookAgain {
				lookAgain = false
				continue
			}
		}
		m.lookupPauses.Add(1)
		t := time.NewTimer(lookupRetry)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctxError(ctx.Err(), last)
		}
	}
}

// callCached is call's fast path for a ctx without a deadline whose
// identity's activation is in the PID cache: it sends w there without
// deriving a context (a timer bounds the wait at deadline). done reports
// whether res and err are the call's outcome; when it is false, the call
// goes on by the slow path and err, if not nil, is why this attempt failed.
func (m *Member) callCached(ctx context.Context, deadline time.Time, kind, identity string, w *wire.WireEnvelope, wantReply bool) (res any, err error, done bool) {
	if hosts, _, _ := m.topology(kind); hosts == 0 {
		return nil, nil, false
	}
	pid, ok := m.cluster.PidCache.Get(identity, kind)
	if !ok || pid == nil {
		return nil, nil, false
	}
	if !wantReply {
		m.sys.Root.Send(pid, w)
		return nil, nil, true
	}
	wait := time.Until(deadline)
	w.TimeoutNs = uint64(max(wait, 0))
	t := time.NewTimer(wait)
	defer t.Stop()
	res, err = m.requestReply(ctx, pid, w, t.C)
	reply, final, retry := m.outcome(res, err, pid, kind, identity)
	switch {
	case retry != nil:
		return nil, retry, false
	case final != nil:
		return nil, ctxError(final, nil), true
	}
	return reply, nil, true
}

// outcome sorts out the result of a request to the activation at pid: its
// reply, a final error (the caller maps a context error), or, when retry is
// not nil, why the request was not handled and the identity must be looked
// up again.
func (m *Member) outcome(res any, err error, pid *actor.PID, kind, identity string) (reply any, final, retry error) {
	if we, ok := res.(*wire.WireError); ok && err == nil {
		switch we.GetKind() {
		case wireKindMoved:
			// Not handled: the activation is moving. Look again.
			m.cluster.PidCache.Remove(identity, kind)
			return nil, nil, fmt.Errorf("%w: %s/%s is moving: %s", ErrMemberUnavailable, kind, identity, we.GetMessage())
		case wireKindStale:
			// Not applied: the activation found another one had saved
			// the identity's state since it loaded, and passivated.
			m.cluster.PidCache.Remove(identity, kind)
			return nil, nil, fmt.Errorf("%w: %s/%s: %s", ErrStaleActivation, kind, identity, we.GetMessage())
		case wireKindClusterMismatch:
			return nil, fmt.Errorf("%w: %s (this node is in cluster %q, protocol %d)", ErrClusterMismatch, we.GetMessage(), m.name, ProtocolVersion), nil
		}
	}
	switch {
	case err == nil:
		return res, nil, nil
	case errors.Is(err, errDeparted):
		// The member hosting the activation left the topology (it died or
		// shut down) with the request in flight: it may or may not have
		// been handled, so it is not sent again.
		m.cluster.PidCache.Remove(identity, kind)
		return nil, fmt.Errorf("%w: the member at %s hosting %s/%s left with the request in flight", ErrMemberUnavailable, pid.Address, kind, identity), nil
	case errors.Is(err, actor.ErrDeadLetter) || errors.Is(err, remote.ErrDeadLetter):
		// The activation is gone (passivated, or its member left) before
		// it took the request: forget it and look again.
		m.cluster.PidCache.Remove(identity, kind)
		return nil, nil, fmt.Errorf("%w: activation of %s/%s is gone", ErrMemberUnavailable, kind, identity)
	}
	return nil, err, nil
}

// maxRedirects bounds the redirects one lookup follows before it pauses.
const maxRedirects = 4

// placementAttempt bounds one placement request: a member that died keeps
// a request to it (held by Proto.Actor's endpoint) for about two seconds,
// and the lookup is better off asking again, its topology having moved on.
const placementAttempt = 500 * time.Millisecond

// lookup returns the PID of the identity's activation, or nil and why
// there is none now. It asks the placement actor of the member that owns
// the identity by this node's topology; a member that does not own it by
// its own topology redirects to the one that does, and the lookup follows
// (a few hops; views that disagree settle as the topology converges). The
// wait is bounded by ctx. An error is final: ctx's, a cluster mismatch or
// an unknown kind.
func (m *Member) lookup(ctx context.Context, kind, identity string) (*actor.PID, string, error) {
	if pid, ok := m.cluster.PidCache.Get(identity, kind); ok && pid != nil {
		return pid, "", nil
	}
	target := m.currentView().owner(kind, identity)
	if target == "" {
		if _, err := m.PlacementOf(kind, identity); errors.Is(err, ErrNoCapacity) {
			return nil, "", err
		}
		return nil, "no member hosts the kind in this node's topology", nil
	}
	req := &wire.PlacementRequest{Cluster: m.name, Protocol: ProtocolVersion, Kind: kind, Identity: identity}
	why := ""
	for range maxRedirects {
		actx, cancel := context.WithTimeout(ctx, placementAttempt)
		res, err := m.request(actx, actor.NewPID(target, placementActor), req)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, why, ctx.Err()
			}
			return nil, fmt.Sprintf("the member at %s did not answer: %v", target, err), nil
		}
		r, ok := res.(*wire.PlacementReply)
		if !ok {
			return nil, fmt.Sprintf("the member at %s answered %T", target, res), nil
		}
		switch r.GetErrorKind() {
		case "":
		case wireKindClusterMismatch:
			return nil, "", mismatchError(m.name, r.GetCluster(), r.GetProtocol(), target)
		case wire.KindUnknownKind:
			return nil, "", fmt.Errorf("%w: %q: %s", ErrUnknownKind, kind, r.GetError())
		case wireKindNoCapacity:
			return nil, "", fmt.Errorf("%w: %s", ErrNoCapacity, r.GetError())
		default:
			return nil, r.GetError(), nil
		}
		if red := r.GetRedirect(); red != "" {
			why = fmt.Sprintf("redirected from %s to %s", target, red)
			target = red
			continue
		}
		pid := actor.NewPID(r.GetPidAddress(), r.GetPidId())
		m.cluster.PidCache.Set(identity, kind, pid)
		return pid, "", nil
	}
	return nil, why + " (too many redirects: the members' views disagree)", nil
}

// providerJoinError returns why the provider could join no member (every
// node it reached belongs to another cluster), or nil.
func (m *Member) providerJoinError() error {
	m.mu.Lock()
	f := m.joinErr
	m.mu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}

// noTopologyError is why a request waits for a topology: none yet, and
// which addresses the provider could not reach, when it says.
func (m *Member) noTopologyError() error {
	m.mu.Lock()
	f := m.unreachable
	m.mu.Unlock()
	if f != nil {
		if why := f(); why != "" {
			return fmt.Errorf("%w: no cluster topology yet: %s", ErrMemberUnavailable, why)
		}
	}
	return fmt.Errorf("%w: no cluster topology yet", ErrMemberUnavailable)
}

// request sends msg to pid and waits for the one reply, for ctx to end, or
// for departGrace after the member at pid's address leaves the topology.
// The reply comes straight to a process registered for this request (what
// a Proto.Actor future is, without its timer and without a goroutine to
// wait on it under ctx).
func (m *Member) request(ctx context.Context, pid *actor.PID, msg any) (any, error) {
	return m.requestGrace(ctx, pid, msg, departGrace)
}

// requestGrace is request with the given grace after a departure.
func (m *Member) requestGrace(ctx context.Context, pid *actor.PID, msg any, graceAfterDeparture time.Duration) (any, error) {
	p := &replyProcess{ch: make(chan any, 1)}
	// NextId's ids ("$" and a sequence number) are unique in the registry
	// (Proto.Actor names its unnamed actors from the same sequence) unless
	// someone named a process like that: then take the next one.
	self, ok := m.sys.ProcessRegistry.Add(p, m.sys.ProcessRegistry.NextId())
	for !ok {
		self, ok = m.sys.ProcessRegistry.Add(p, m.sys.ProcessRegistry.NextId())
	}
	defer m.sys.ProcessRegistry.Remove(self)
	departed := m.departure(pid.Address)
	m.sys.Root.RequestWithCustomSender(pid, msg, self)
	var grace <-chan time.Time
	for {
		select {
		case r := <-p.ch:
			if _, ok := r.(*actor.DeadLetterResponse); ok {
				return nil, actor.ErrDeadLetter
			}
			return r, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-departed:
			departed = nil
			if graceAfterDeparture <= 0 {
				return nil, errDeparted
			}
			t := time.NewTimer(graceAfterDeparture)
			defer t.Stop()
			grace = t.C
		case <-grace:
			return nil, errDeparted
		}
	}
}

// requestReply sends the request w to the activation at pid and waits for
// its reply like request, and, when expire is not nil, fails with
// context.DeadlineExceeded when it fires. The reply comes to the member's
// reply process (see replies), which w's ReplyTo names: w goes without a
// Proto.Actor sender. actor.ErrDeadLetter: w became a dead letter (the
// activation is gone, or w could not be sent) and was not handled.
func (m *Member) requestReply(ctx context.Context, pid *actor.PID, w *wire.WireEnvelope, expire <-chan time.Time) (any, error) {
	// Each attempt sends an envelope and an id of its own: an answer that
	// comes late for a previous attempt of the same request (one the
	// activation's member answered twice as it stopped: passivating, then
	// a dead letter) is not taken for this one's, and the previous
	// envelope, which a local activation's mailbox or the dead-letter path
	// may still hold, is not written to.
	if w.ReplyTo != "" { // set by a previous attempt
		w = proto.Clone(w).(*wire.WireEnvelope)
		w.Id = messages.NextID()
	}
	wt, ok := m.replies.wait(w.Id)
	for !ok { // another request of this id waits: give this one a new id
		w.Id = messages.NextID()
		wt, ok = m.replies.wait(w.Id)
	}
	defer m.replies.done(w.Id, wt)
	w.ReplyTo = m.replyAddress()
	departed := m.departure(pid.Address)
	m.sys.Root.Send(pid, w)
	var grace <-chan time.Time
	for {
		select {
		case r := <-wt.ch:
			if we, ok := r.(*wire.WireError); ok && we.GetKind() == wireKindGone {
				return nil, actor.ErrDeadLetter
			}
			return r, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-expire:
			return nil, context.DeadlineExceeded
		case <-departed:
			departed = nil
			t := time.NewTimer(departGrace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			return nil, errDeparted
		}
	}
}

// replyProcess is the Proto.Actor process that takes the reply of one
// request.
type replyProcess struct{ ch chan any }

// SendUserMessage implements actor.Process: the first message is the reply.
func (p *replyProcess) SendUserMessage(_ *actor.PID, message any) {
	select {
	case p.ch <- actor.UnwrapEnvelopeMessage(message):
	default:
	}
}

// SendSystemMessage implements actor.Process.
func (p *replyProcess) SendSystemMessage(*actor.PID, any) {}

// Stop implements actor.Process.
func (p *replyProcess) Stop(*actor.PID) {}

// departGrace is how long a request still waits for its reply after the
// member hosting its target left the topology: a member that leaves
// gracefully has answered what it held before it left, so this only
// covers replies still on the wire.
const departGrace = 250 * time.Millisecond

// errDeparted: the member hosting the request's target left.
var errDeparted = errors.New("member departed")

// ctxError maps a context error to the client's: ErrTimeout for a deadline
// (joined with the reason of the last failed attempt, if any), the
// cancellation otherwise.
func ctxError(err, last error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		if last != nil {
			return fmt.Errorf("%w (%w)", ErrTimeout, last)
		}
		return ErrTimeout
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("ringactor/cluster: request cancelled: %w", err)
	}
	return err
}
