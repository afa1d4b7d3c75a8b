package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ringactor/ringactor/internal/wire"
)

// placementActor is the name of the actor that places identities on every
// member: it activates an identity only when the member owns it by its own
// topology, and only after every other member of that topology has said it
// does not hold it (passivating it first when it did).
const placementActor = "ringactor-placement"

// DefaultHandoffTimeout bounds how long a member that is about to activate
// an identity waits for the other members' answers (each passivating the
// identity if it held it). When one does not answer in time the activation
// does not happen; the requests waiting for it get a transient refusal and
// retry within their deadline.
const DefaultHandoffTimeout = 2 * time.Second

// WithHandoffTimeout sets the member's hand-off timeout (default
// DefaultHandoffTimeout).
func WithHandoffTimeout(d time.Duration) Option {
	return func(c *memberConfig) {
		if d > 0 {
			c.handoffTimeout = d
		}
	}
}

// activation states.
const (
	activating = iota
	active
	passivating
)

// activation is the placement actor's record of one identity.
type activation struct {
	kind, identity string
	state          int
	seq            uint64
	pid            *actor.PID   // the grain actor
	inbox          *actor.PID   // its inbox, which requesters are given
	waiters        []*actor.PID // PlacementRequests waiting for the activation
	handoffs       []*actor.PID // HandoffRequests waiting for the passivation
}

// grainStopped is what a grain tells the placement actor when it stopped.
type grainStopped struct {
	key      string
	kind     string
	identity string
	pid      *actor.PID
	state    []byte
	hasState bool
}

// handoffDone reports the other members' answers to a hand-off round.
type handoffDone struct {
	key      string
	kind     string
	identity string
	seq      uint64
	err      error // a member refused or did not answer
	state    []byte
	hasState bool
}

// topologyChanged tells the placement actor that the member's view changed.
type topologyChanged struct{}

// passivateAllRequest makes the placement actor stop accepting activations
// and passivate every activation; done is closed when all have stopped.
type passivateAllRequest struct{ done chan map[string]parkedState }

// fenceAllRequest makes the placement actor passivate every activation:
// the member was (or may have been) dropped by the others (fenceAll).
type fenceAllRequest struct{}

// parkedState is the state of an identity that is not active here.
type parkedState struct {
	kind, identity string
	state          []byte
}

// placement is the placement actor's state.
type placement struct {
	m       *Member
	entries map[string]*activation
	// parked holds states of identities not active here: given by a
	// passivated activation, or sent by a member that left. The next
	// activation of the identity, here or on the member that asks for it,
	// takes it.
	parked  map[string]parkedState
	seq     uint64
	leaving bool
	drained []chan map[string]parkedState
}

func newPlacement(m *Member) *placement {
	return &placement{m: m, entries: map[string]*activation{}, parked: map[string]parkedState{}}
}

// Receive implements actor.Actor.
func (p *placement) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *wire.PlacementRequest:
		p.onPlace(c, msg)
	case *wire.HandoffRequest:
		p.onHandoff(c, msg)
	case *wire.HandoffState:
		p.onState(c, msg)
	case *handoffDone:
		p.onHandoffDone(c, msg)
	case *grainStopped:
		p.onStopped(c, msg)
	case topologyChanged:
		p.onTopology(c)
	case *wrapperspb.StringValue: // a member's re-advertisement (readvertise.go)
		p.m.onAdPush(msg.GetValue())
	case fenceAllRequest:
		for _, e := range p.entries {
			p.passivate(c, e)
		}
	case *passivateAllRequest:
		p.leaving = true
		p.drained = append(p.drained, msg.done)
		for _, e := range p.entries {
			p.passivate(c, e)
		}
		p.checkDrained()
	}
}

// reply answers a placement request.
func (p *placement) reply(c actor.Context, to *actor.PID, r *wire.PlacementReply) {
	if to == nil {
		return
	}
	r.Cluster, r.Protocol = p.m.name, ProtocolVersion
	c.Send(to, r)
}

func (p *placement) retry(c actor.Context, to *actor.PID, why string) {
	p.reply(c, to, &wire.PlacementReply{ErrorKind: placementRetry, Error: why})
}

// onPlace answers a request for an identity's activation.
func (p *placement) onPlace(c actor.Context, req *wire.PlacementRequest) {
	to := c.Sender()
	if !sameCluster(p.m.name, req.GetCluster(), req.GetProtocol()) {
		err := mismatchError(p.m.name, req.GetCluster(), req.GetProtocol(), senderAddress(to))
		p.m.refused(senderAddress(to), err)
		p.reply(c, to, &wire.PlacementReply{ErrorKind: wireKindClusterMismatch, Error: err.Error()})
		return
	}
	key := req.GetKind() + "/" + req.GetIdentity()
	if e := p.entries[key]; e != nil {
		switch e.state {
		case active:
			p.reply(c, to, &wire.PlacementReply{PidAddress: e.inbox.Address, PidId: e.inbox.Id})
		case activating:
			e.waiters = append(e.waiters, to)
		default:
			p.retry(c, to, fmt.Sprintf("%s is passivating", key))
		}
		return
	}
	if p.leaving {
		p.retry(c, to, "the member is leaving")
		return
	}
	v := p.m.currentView()
	owner := v.owner(req.GetKind(), req.GetIdentity())
	switch {
	case owner == "":
		if v.members == 0 {
			p.retry(c, to, "the member has no topology yet")
			return
		}
		if r := v.reqs[req.GetKind()]; r != Anywhere && v.placeDevice(r, req.GetKind(), req.GetIdentity()).noCapacity {
			p.reply(c, to, &wire.PlacementReply{ErrorKind: wireKindNoCapacity, Error: fmt.Sprintf("kind %q needs a device and no member with one lists it", req.GetKind())})
			return
		}
		p.reply(c, to, &wire.PlacementReply{ErrorKind: wire.KindUnknownKind, Error: fmt.Sprintf("no member hosts kind %q", req.GetKind())})
		return
	case owner != v.self:
		p.reply(c, to, &wire.PlacementReply{Redirect: owner})
		return
	}
	if !p.m.isReady() {
		p.retry(c, to, "the member is still joining")
		return
	}
	if p.m.isFenced() {
		p.retry(c, to, "the member is out of touch with the cluster")
		return
	}
	if _, ok := p.m.kinds[req.GetKind()]; !ok {
		p.reply(c, to, &wire.PlacementReply{ErrorKind: wire.KindUnknownKind, Error: fmt.Sprintf("kind %q is not hosted here", req.GetKind())})
		return
	}
	p.seq++
	e := &activation{kind: req.GetKind(), identity: req.GetIdentity(), state: activating, seq: p.seq, waiters: []*actor.PID{to}}
	p.entries[key] = e
	go p.m.askHandoff(c.Self(), key, e.kind, e.identity, e.seq, v)
}

// onHandoffDone activates the identity when every other member agreed.
func (p *placement) onHandoffDone(c actor.Context, d *handoffDone) {
	e := p.entries[d.key]
	if d.hasState {
		// Kept here whatever happens next: this member owns the identity.
		p.parked[d.key] = parkedState{kind: d.kind, identity: d.identity, state: d.state}
	}
	if e == nil || e.seq != d.seq || e.state != activating {
		return
	}
	fail := func(why string) {
		delete(p.entries, d.key)
		for _, w := range e.waiters {
			p.retry(c, w, why)
		}
	}
	v := p.m.currentView()
	switch {
	case d.err != nil:
		fail(fmt.Sprintf("hand-off of %s pending: %v", d.key, d.err))
		return
	case p.leaving:
		fail("the member is leaving")
		return
	case v.owner(e.kind, e.identity) != v.self:
		fail(fmt.Sprintf("%s moved while it was being activated", d.key))
		return
	case p.m.isFenced():
		fail("the member is out of touch with the cluster")
		return
	}
	parked, ok := p.parked[d.key]
	if ok {
		delete(p.parked, d.key)
	}
	k := p.m.kinds[e.kind]
	in := newInbox(p.m.sys)
	in.refuse = p.m.refuseOverloaded
	props := actor.PropsFromProducer(k.producer(p.m, e.identity, parked.state, in))
	pid, err := c.SpawnNamed(props, fmt.Sprintf("ringactor$%s$%d", d.key, e.seq))
	if err != nil {
		if ok {
			p.parked[d.key] = parked
		}
		fail(fmt.Sprintf("spawning %s: %v", d.key, err))
		return
	}
	inPID, err := in.register(pid, pid.Id+"$in")
	if err != nil {
		// Cannot happen (the grain's name is unique); requesters then
		// go through the grain's mailbox.
		p.m.logger.Warn("ringactor/cluster: activation without an inbox", slog.String("identity", d.key), slog.Any("error", err))
		inPID = pid
	}
	if r := v.reqs[e.kind]; r == DevicePreferred && v.placeDevice(r, e.kind, e.identity).fallback {
		p.m.logger.Info("ringactor/cluster: device-preferred identity activated on a member without a device (no member with one lists the kind): it runs its Go fallback",
			slog.String("identity", d.key))
	}
	e.pid, e.inbox, e.state = pid, inPID, active
	p.m.activations.Add(1)
	p.m.status.move(PlacementMove{Time: time.Now(), Kind: e.kind, Identity: e.identity, Event: MoveActivated, State: ok})
	for _, w := range e.waiters {
		p.reply(c, w, &wire.PlacementReply{PidAddress: inPID.Address, PidId: inPID.Id})
	}
	e.waiters = nil
}

// onHandoff answers a member that is about to activate an identity.
func (p *placement) onHandoff(c actor.Context, req *wire.HandoffRequest) {
	to := c.Sender()
	if !sameCluster(p.m.name, req.GetCluster(), req.GetProtocol()) {
		err := mismatchError(p.m.name, req.GetCluster(), req.GetProtocol(), req.GetOwner())
		p.m.refused(req.GetOwner(), err)
		c.Respond(&wire.HandoffReply{Conflict: true, Error: err.Error()})
		return
	}
	key := req.GetKind() + "/" + req.GetIdentity()
	e := p.entries[key]
	if e != nil && e.state == activating {
		c.Respond(&wire.HandoffReply{Conflict: true, Error: fmt.Sprintf("%s is activating at %s", key, p.m.currentView().self)})
		return
	}
	if !p.leaving && !p.m.isFenced() {
		// A fenced member (the asker may have dropped it) does not claim
		// the identity: it hands it over.
		if v := p.m.currentView(); v.owner(req.GetKind(), req.GetIdentity()) == v.self {
			c.Respond(&wire.HandoffReply{Conflict: true, Error: fmt.Sprintf("%s owns %s by its topology", v.self, key)})
			return
		}
	}
	if e == nil {
		st, ok := p.parked[key]
		delete(p.parked, key)
		c.Respond(&wire.HandoffReply{State: st.state, HasState: ok})
		return
	}
	// Active or passivating: answer once it has stopped.
	e.handoffs = append(e.handoffs, to)
	p.passivate(c, e)
}

// onState keeps the state a leaving member sent.
func (p *placement) onState(c actor.Context, s *wire.HandoffState) {
	if !sameCluster(p.m.name, s.GetCluster(), s.GetProtocol()) {
		c.Respond(&wire.HandoffReply{Conflict: true, Error: mismatchError(p.m.name, s.GetCluster(), s.GetProtocol(), senderAddress(c.Sender())).Error()})
		return
	}
	key := s.GetKind() + "/" + s.GetIdentity()
	if e := p.entries[key]; e != nil && e.state != passivating {
		// Cannot happen while the protocol holds (the sender was the owner);
		// the live activation wins.
		p.m.logger.Warn("ringactor/cluster: state handed to an identity already active here; dropped", slog.String("identity", key))
	} else {
		p.parked[key] = parkedState{kind: s.GetKind(), identity: s.GetIdentity(), state: s.GetState()}
	}
	c.Respond(&wire.HandoffReply{})
}

// onStopped records that an activation ended.
func (p *placement) onStopped(c actor.Context, s *grainStopped) {
	p.m.activations.Add(-1)
	e := p.entries[s.key]
	if e == nil || e.pid == nil || !e.pid.Equal(s.pid) {
		if s.hasState {
			p.parked[s.key] = parkedState{kind: s.kind, identity: s.identity, state: s.state}
		}
		p.checkDrained()
		return
	}
	delete(p.entries, s.key)
	mv := PlacementMove{Time: time.Now(), Kind: e.kind, Identity: e.identity, Event: MovePassivated, State: s.hasState}
	if v := p.m.currentView(); v.owner(e.kind, e.identity) != v.self {
		mv.To = v.owner(e.kind, e.identity)
	}
	p.m.status.move(mv)
	if len(e.handoffs) > 0 {
		c.Send(e.handoffs[0], &wire.HandoffReply{State: s.state, HasState: s.hasState})
		for _, h := range e.handoffs[1:] {
			c.Send(h, &wire.HandoffReply{})
		}
	} else if s.hasState {
		p.parked[s.key] = parkedState{kind: s.kind, identity: s.identity, state: s.state}
	}
	p.checkDrained()
}

// onTopology passivates the activations this member no longer owns.
func (p *placement) onTopology(c actor.Context) {
	v := p.m.currentView()
	for _, e := range p.entries {
		if e.state == active && v.owner(e.kind, e.identity) != v.self {
			p.passivate(c, e)
		}
	}
}

// passivate asks an active activation to end.
func (p *placement) passivate(c actor.Context, e *activation) {
	if e.state != active {
		return
	}
	e.state = passivating
	c.Send(e.pid, passivateGrain{})
}

// checkDrained closes the passivateAll channels once every activation has
// stopped.
func (p *placement) checkDrained() {
	if !p.leaving || len(p.drained) == 0 {
		return
	}
	for _, e := range p.entries {
		if e.state != activating {
			return
		}
	}
	for _, d := range p.drained {
		d <- p.parked
	}
	p.parked = map[string]parkedState{}
	p.drained = nil
}

// senderAddress is the address of a message's sender, for messages.
func senderAddress(pid *actor.PID) string {
	if pid == nil {
		return "an unknown node"
	}
	return pid.Address
}

// view is a member's topology as placement uses it.
type view struct {
	self    string
	members int
	rdv     *pcluster.Rendezvous
	others  []string               // addresses of the other members
	all     []*pcluster.Member     // every member, this one included
	nodes   []nodeInfo             // every member's advertised devices and kinds (device_placement.go)
	reqs    map[string]Requirement // the advertised requirements of kinds not placed Anywhere
}

// owner returns the address of the member that owns the identity of kind
// by this view ("" when no member hosts kind).
func (v view) owner(kind, identity string) string {
	if v.rdv == nil {
		return ""
	}
	if r := v.reqs[kind]; r != Anywhere {
		return v.placeDevice(r, kind, identity).addr
	}
	return v.rdv.GetByClusterIdentity(&pcluster.ClusterIdentity{Identity: identity, Kind: kind})
}

// askHandoff asks every other member of v for the identity (HandoffRequest),
// and the members dropped lately without leaving that may still hold it
// (suspects: a member taken for dead while it was alive), and reports the
// outcome to the placement actor at self.
func (m *Member) askHandoff(self *actor.PID, key, kind, identity string, seq uint64, v view) {
	d := &handoffDone{key: key, kind: kind, identity: identity, seq: seq}
	asked := v.others
	var suspects []string
	if sus := m.suspectAddrs(); len(sus) > 0 {
		asked = slices.Clone(v.others)
		for _, a := range sus {
			if a != v.self && !slices.Contains(asked, a) {
				asked = append(asked, a)
				suspects = append(suspects, a)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.handoffTimeout)
	defer cancel()
	req := &wire.HandoffRequest{Cluster: m.name, Protocol: ProtocolVersion, Kind: kind, Identity: identity, Owner: v.self}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	for _, addr := range asked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if slices.Contains(suspects, addr) && deadAddress(ctx, addr) {
				return // nothing listens there: it holds nothing
			}
			res, err := m.ask(ctx, actor.NewPID(addr, placementActor), req)
			if res == nil && err == nil && !deadAddress(ctx, addr) {
				// A dead letter from an address that still listens: the
				// local endpoint was dropped (the member left this
				// topology, or took a new member id, while the question
				// was in flight), which says nothing of what it holds.
				err = fmt.Errorf("no answer (dead letter) while it still listens")
			}
			mu.Lock()
			defer mu.Unlock()
			switch r := res.(type) {
			case nil:
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", addr, err))
				}
			case *wire.HandoffReply:
				if r.GetConflict() {
					errs = append(errs, fmt.Errorf("%s refused: %s", addr, r.GetError()))
				} else if r.GetHasState() {
					d.state, d.hasState = r.GetState(), true
				}
			default:
				errs = append(errs, fmt.Errorf("%s answered %T", addr, res))
			}
		}()
	}
	wg.Wait()
	d.err = errors.Join(errs...)
	m.sys.Root.Send(self, d)
}

// deadAddress reports whether addr refuses connections (nothing listens
// there: the member is gone). A suspect is probed so before it is asked:
// Proto.Actor's endpoint holds a message to an address that refuses for
// about two seconds before it gives up.
func deadAddress(ctx context.Context, addr string) bool {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return errors.Is(err, syscall.ECONNREFUSED)
	}
	_ = conn.Close()
	return false
}

// ask sends msg to pid and waits for its reply. A member that is gone (a
// dead letter: its process or placement actor no longer exists) holds
// nothing: ask returns (nil, nil) for it. One that leaves the topology
// while it is asked is an error (errDeparted): it may have been dropped
// while alive, and the next round, without it, decides.
func (m *Member) ask(ctx context.Context, pid *actor.PID, msg any) (any, error) {
	res, err := m.requestGrace(ctx, pid, msg, 0)
	if errors.Is(err, actor.ErrDeadLetter) {
		return nil, nil
	}
	return res, err
}
