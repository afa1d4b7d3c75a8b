package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"

	"github.com/ringactor/ringactor/internal/wire"
)

// Defaults of the peers provider.
const (
	// DefaultHeartbeat is how often a node greets each peer it knows.
	DefaultHeartbeat = 250 * time.Millisecond
	// DefaultFailureTimeout is how long a member may go unheard before it
	// is dropped from the topology.
	DefaultFailureTimeout = 1500 * time.Millisecond
	// peersActor is the name of the actor that answers greetings on every
	// node run with the peers provider.
	peersActor = "ringactor-peers"
)

// PeersProvider is a cluster provider for members that know one another's
// remote addresses: the seeds given at start, and every member a seed or a
// greeting reveals. It is ringactor's answer to Proto.Actor's automanaged
// provider, which serves its health checks over HTTP on 0.0.0.0 at a fixed
// port: here each node greets its peers over the members' own remote (so
// the bind address, TLS and loopback-only setups all apply to membership
// too, and no second port is opened). A member that goes unheard for the
// failure timeout is dropped from the topology, and its identities move to
// the survivors; a member that shuts down gracefully says so and is dropped
// at once.
//
// A provider is used by one member or client; make one per member.
type PeersProvider struct {
	seeds     []string
	heartbeat time.Duration
	timeout   time.Duration

	c      *pcluster.Cluster
	logger *slog.Logger
	// self is the node's description, replaced when it rejoins as a new
	// incarnation (rejoin); baseID is its actor system's id.
	self   atomic.Pointer[wire.PeerInfo]
	baseID string
	addr   string
	pid    *actor.PID

	mu      sync.Mutex
	peers   map[string]*peer // by address
	current string           // the member ids of the last topology, sorted, joined
	stopped bool

	kick chan struct{} // a change worth a topology update now
	stop chan struct{}

	// settledCh is closed once every address known at the time has been
	// greeted once (answered or failed): the node's first topology is then
	// not a view of its own making.
	settledCh chan struct{}
	// fenceAt is when the node fences itself (unix ns; 0 = not while the
	// topology stays as it is): see fenced.
	fenceAt     atomic.Int64
	settledOnce sync.Once
	// mismatch holds, by address, the nodes that answered as members of
	// another cluster.
	mismatch map[string]error
	done     chan struct{}
	pings    sync.WaitGroup

	// Fencing (fencing.go). incarnation counts the node's rejoins;
	// rejoinSince is when the current one began, zero once every live
	// member has answered it; presumed says the member was told to
	// passivate everything in the current fence; lastPublish and
	// graceFrom detect a stall of the node itself (see alive); onRemoved
	// is the member's: it passivates every activation.
	incarnation int
	rejoinSince time.Time
	presumed    bool
	lastPublish time.Time
	graceFrom   time.Time
	onRemoved   func(reason string)
	// cut, when set (tests), drops the traffic of this node's greetings
	// with addr: greetings to addr are not sent, and greetings from addr
	// are heard but not answered, as when the node's heartbeats arrive
	// too late at addr.
	cut atomic.Pointer[func(addr string) bool]
	// tlsCfg is the member's TLS configuration (WithTLS), nil for
	// plaintext: a probe of an address then runs a TLS handshake, so that
	// a refusal is named (tlsprobe.go).
	tlsCfg atomic.Pointer[tls.Config]
}

// peer is what a node knows of another node's address.
type peer struct {
	info     *wire.PeerInfo // nil until it has been heard from
	lastSeen time.Time      // last answer or greeting; when added, before that
	pinging  bool
	seed     bool      // given to Peers: greeted for as long as the node runs
	tried    bool      // answered, or found dead (nothing listens at its address)
	acked    time.Time // when the last greeting that was answered was sent
	dialErr  error     // why the last probe of its address failed; nil once it answers
	tlsErr   error     // the *TLSError of the last probe's handshake, nil once one went through
	refused  time.Time // when its address last refused a connection
}

// forgetAfter is how many failure timeouts an address that is not a seed
// may stay silent before the node stops greeting it.
const forgetAfter = 10

// PeersOption configures a PeersProvider.
type PeersOption func(*PeersProvider)

// WithHeartbeat sets how often a node greets each peer (default
// DefaultHeartbeat).
func WithHeartbeat(d time.Duration) PeersOption {
	return func(p *PeersProvider) {
		if d > 0 {
			p.heartbeat = d
		}
	}
}

// WithFailureTimeout sets how long a member may go unheard before it is
// dropped from the topology (default DefaultFailureTimeout). A member once
// dropped is blocked by Proto.Actor's remote: it has to restart (with a new
// id) to join again, so keep this well above pauses a healthy member can
// have.
func WithFailureTimeout(d time.Duration) PeersOption {
	return func(p *PeersProvider) {
		if d > 0 {
			p.timeout = d
		}
	}
}

// Peers returns a provider that finds the cluster's members from seeds, the
// remote addresses ("host:port") of some of its members. A member may list
// itself; the first member of a cluster may list none.
func Peers(seeds []string, opts ...PeersOption) *PeersProvider {
	p := &PeersProvider{
		heartbeat: DefaultHeartbeat, timeout: DefaultFailureTimeout,
		peers: map[string]*peer{},
		kick:  make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		settledCh: make(chan struct{}), mismatch: map[string]error{},
	}
	for _, s := range seeds {
		if s = strings.TrimSpace(s); s != "" {
			p.seeds = append(p.seeds, s)
		}
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

var _ pcluster.ClusterProvider = (*PeersProvider)(nil)

// seedList returns the seeds given so far (Start checks them: checkSeeds).
func (p *PeersProvider) seedList() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seeds)
}

// StartMember implements pcluster.ClusterProvider.
func (p *PeersProvider) StartMember(c *pcluster.Cluster) error { return p.start(c, false) }

// StartClient implements pcluster.ClusterProvider.
func (p *PeersProvider) StartClient(c *pcluster.Cluster) error { return p.start(c, true) }

func (p *PeersProvider) start(c *pcluster.Cluster, client bool) error {
	host, portStr, err := net.SplitHostPort(c.ActorSystem.Address())
	if err != nil {
		return fmt.Errorf("ringactor/cluster: own address %q: %w", c.ActorSystem.Address(), err)
	}
	port, _ := strconv.Atoi(portStr)
	self := &wire.PeerInfo{Id: c.ActorSystem.ID, Host: host, Port: int32(port), Client: client,
		Cluster: c.Config.Name, Protocol: ProtocolVersion}
	if !client {
		self.Kinds = c.GetClusterKinds()
	}
	p.mu.Lock()
	seeds := slices.Clone(p.seeds)
	for _, s := range seeds {
		if _, _, err := net.SplitHostPort(s); err != nil {
			p.mu.Unlock()
			return fmt.Errorf("ringactor/cluster: peer address %q: %w", s, err)
		}
	}
	p.logger, p.addr, p.baseID = c.Logger(), c.ActorSystem.Address(), c.ActorSystem.ID
	p.self.Store(self)
	p.c = c // last: Add reads it to know the fields above are set
	p.mu.Unlock()
	for _, s := range seeds {
		p.addPeer(s)
	}
	p.mu.Lock()
	for _, s := range seeds {
		if pr := p.peers[s]; pr != nil {
			pr.seed = true
		}
	}
	p.mu.Unlock()
	pid, err := c.ActorSystem.Root.SpawnNamed(actor.PropsFromFunc(p.receive), peersActor)
	if err != nil {
		return fmt.Errorf("ringactor/cluster: peers provider: %w", err)
	}
	p.pid = pid
	p.publish()
	p.checkSettled()
	go p.run()
	return nil
}

// Add makes the provider greet the members at addrs ("host:port") too: a
// node that runs long can be pointed at members that started after it. It
// may be called before or after the node starts.
func (p *PeersProvider) Add(addrs ...string) error {
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("ringactor/cluster: peer address %q: %w", a, err)
		}
	}
	p.mu.Lock()
	started := p.c != nil
	if !started {
		p.seeds = append(p.seeds, addrs...)
	}
	p.mu.Unlock()
	if started {
		for _, a := range addrs {
			p.addPeer(a)
		}
	}
	return nil
}

// addPeer starts greeting addr; the caller may hold mu or not (it locks).
func (p *PeersProvider) addPeer(addr string) {
	if addr == p.addr {
		return
	}
	p.mu.Lock()
	if _, ok := p.peers[addr]; !ok && !p.stopped {
		p.peers[addr] = &peer{lastSeen: time.Now()}
		p.signal()
	}
	p.mu.Unlock()
}

// signal asks the loop for a round now.
func (p *PeersProvider) signal() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// receive answers greetings: the greeting is proof of life of its sender.
// A greeting from another cluster is answered (with this node's cluster,
// so that the greeter sees the mismatch too) but not recorded.
func (p *PeersProvider) receive(ctx actor.Context) {
	hello, ok := ctx.Message().(*wire.PeerHello)
	if !ok || hello.GetSelf() == nil {
		return
	}
	me := p.self.Load()
	info := hello.GetSelf()
	addr := net.JoinHostPort(info.GetHost(), strconv.Itoa(int(info.GetPort())))
	if !sameCluster(me.GetCluster(), info.GetCluster(), info.GetProtocol()) {
		p.refuse(addr, info)
		if ctx.Sender() != nil {
			ctx.Respond(&wire.PeerView{Self: me})
		}
		return
	}
	if !info.GetClient() && !info.GetLeaving() && p.isBlocked(info.GetId()) {
		// This node dropped that member id (it took it for dead): the
		// greeter must stop serving and rejoin as a new incarnation.
		if ctx.Sender() != nil && !p.isCut(addr) {
			ctx.Respond(&wire.PeerView{Self: me, Removed: true})
		}
		return
	}
	p.heard(info)
	if ctx.Sender() != nil && !p.isCut(addr) {
		ctx.Respond(&wire.PeerView{Self: me, Known: p.known()})
	}
}

// heard records that the node info describes answered or greeted.
func (p *PeersProvider) heard(info *wire.PeerInfo) {
	addr := net.JoinHostPort(info.GetHost(), strconv.Itoa(int(info.GetPort())))
	if addr == p.addr {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	pr := p.peers[addr]
	if pr == nil {
		if info.GetClient() {
			return // clients greet us; we do not greet them
		}
		pr = &peer{lastSeen: time.Now()}
		p.peers[addr] = pr
	}
	delete(p.mismatch, addr)
	if pr.info != nil && processID(pr.info.GetId()) != processID(info.GetId()) {
		// Another process at the address (the member restarted there):
		// the answers so far were the old one's (see newProcess).
		newProcess(pr)
	}
	changed := pr.info == nil || pr.info.GetId() != info.GetId() || pr.info.GetLeaving() != info.GetLeaving()
	pr.info, pr.lastSeen = info, time.Now()
	if changed {
		p.signal()
	}
}

// known returns the addresses of the members this node counts as alive.
func (p *PeersProvider) known() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	if !p.self.Load().GetClient() {
		out = append(out, p.addr)
	}
	now := time.Now()
	for addr, pr := range p.peers {
		if p.alive(pr, now) {
			out = append(out, addr)
		}
	}
	return out
}

// alive says whether pr counts as a live member; the caller holds mu. A
// member id this node dropped (Proto.Actor's block list) never counts
// again: that member rejoins as a new incarnation. After a stall of this
// node (graceFrom) every peer has a whole failure timeout to answer
// again: the silence was this node's.
func (p *PeersProvider) alive(pr *peer, now time.Time) bool {
	if pr.info == nil || pr.info.GetClient() || pr.info.GetLeaving() {
		return false
	}
	seen := pr.lastSeen
	if p.graceFrom.After(seen) && !pr.refused.After(pr.lastSeen) {
		seen = p.graceFrom // not for a peer found dead since
	}
	return now.Sub(seen) < p.timeout && !p.isBlocked(pr.info.GetId())
}

// run greets the peers at every heartbeat and publishes the topology when
// the set of live members changes.
func (p *PeersProvider) run() {
	defer close(p.done)
	t := time.NewTicker(p.heartbeat)
	defer t.Stop()
	for {
		p.greetAll()
		p.publish()
		p.checkSettled() // after publish: the topology holds what was heard
		select {
		case <-p.stop:
			return
		case <-t.C:
		case <-p.kick:
		}
	}
}

// greetAll greets every peer that has no greeting in flight, and forgets
// addresses (not seeds) that have been silent for forgetAfter failure
// timeouts.
func (p *PeersProvider) greetAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for addr, pr := range p.peers {
		if pr.pinging {
			continue
		}
		if !pr.seed && now.Sub(pr.lastSeen) > forgetAfter*p.timeout {
			delete(p.peers, addr)
			continue
		}
		pr.pinging = true
		p.pings.Add(1)
		go p.greet(addr, pr)
	}
}

// greet sends one greeting to addr and records the answer. An address
// that has not answered lately is first probed with a plain TCP connection:
// Proto.Actor's endpoint to an address where nothing listens holds its
// messages (and a graceful shutdown) for two seconds, so nothing is sent
// through it before something answers there.
func (p *PeersProvider) greet(addr string, pr *peer) {
	defer p.pings.Done()
	sent := time.Now()
	p.mu.Lock()
	probe := pr.info == nil || sent.Sub(pr.lastSeen) > p.timeout
	p.mu.Unlock()
	if probe {
		conn, err := net.DialTimeout("tcp", addr, p.greetTimeout())
		if err != nil {
			// Refused: nothing listens there, the node is not up. A
			// timeout says nothing: the address is tried again.
			refused := errors.Is(err, syscall.ECONNREFUSED)
			p.mu.Lock()
			pr.pinging = false
			pr.dialErr = err
			if refused {
				pr.refused = time.Now()
			}
			// The first refusal may settle the join (checkSettled): a
			// round now. Not at every one: the round greets the address
			// again at once, and a dead seed would be dialled in a loop.
			first := refused && !pr.tried
			pr.tried = pr.tried || refused
			p.mu.Unlock()
			if first {
				p.signal()
			}
			return
		}
		if cfg := p.tlsCfg.Load(); cfg != nil {
			if err := probeTLS(conn, addr, cfg, p.greetTimeout()); err != nil {
				p.tlsRefused(addr, pr, err)
				return
			}
		} else if err := probePlaintext(conn, addr, p.greetTimeout()); err != nil {
			p.tlsRefused(addr, pr, err)
			return
		}
		p.mu.Lock()
		pr.dialErr, pr.tlsErr = nil, nil
		p.mu.Unlock()
	}
	me := p.self.Load()
	var res any
	var err error
	if p.isCut(addr) {
		err = errors.New("cut (test)")
	} else {
		res, err = p.c.ActorSystem.Root.RequestFuture(actor.NewPID(addr, peersActor), &wire.PeerHello{Self: me}, p.greetTimeout()).Result()
	}
	p.mu.Lock()
	pr.pinging = false
	if err == nil {
		pr.tried = true
	}
	p.mu.Unlock()
	if err != nil {
		return
	}
	view, ok := res.(*wire.PeerView)
	if !ok || view.GetSelf() == nil {
		return
	}
	if info := view.GetSelf(); !sameCluster(me.GetCluster(), info.GetCluster(), info.GetProtocol()) {
		p.refuse(addr, info)
		return
	}
	p.heard(view.GetSelf())
	if view.GetRemoved() {
		p.removed(addr, me.GetId())
		return
	}
	p.mu.Lock()
	pr.acked = sent
	p.updateFence(time.Now())
	p.mu.Unlock()
	for _, a := range view.GetKnown() {
		p.addPeer(a)
	}
}

// tlsRefused records that the TLS handshake with addr was refused (err, a
// *TLSError): the address is tried (it answered, and will not accept this
// node as configured), and the refusal is why the node could not join
// (joinError) or reach it (unreachable). It is logged once per address
// once the node has joined; before that Start's readiness and the node's
// requests report it.
func (p *PeersProvider) tlsRefused(addr string, pr *peer, err error) {
	p.mu.Lock()
	pr.pinging = false
	seen := pr.tlsErr != nil
	pr.dialErr, pr.tlsErr = err, err
	first := !pr.tried
	pr.tried = true
	p.mu.Unlock()
	if first {
		p.signal()
	}
	select {
	case <-p.settledCh:
		if !seen {
			p.logger.Error("ringactor/cluster: TLS handshake refused; check the certificates (--tls-ca, --tls-cert, --tls-key)",
				slog.String("address", addr), slog.Any("error", err))
		}
	default:
	}
}

// setTLS sets the TLS configuration the probes use (nil: plaintext).
func (p *PeersProvider) setTLS(cfg *tls.Config) { p.tlsCfg.Store(cfg) }

// refuse records and logs (once per address) that the node at addr, which
// info describes, belongs to another cluster.
func (p *PeersProvider) refuse(addr string, info *wire.PeerInfo) {
	err := mismatchError(p.self.Load().GetCluster(), info.GetCluster(), info.GetProtocol(), addr)
	p.mu.Lock()
	_, seen := p.mismatch[addr]
	p.mismatch[addr] = err
	p.mu.Unlock()
	if !seen {
		p.logger.Error("ringactor/cluster: refused a node of another cluster; check the seeds (--peers) and the cluster name",
			slog.String("address", addr), slog.Any("error", err))
	}
}

// checkSettled closes settledCh once every known address has answered or
// been found dead. A node that is up but slow to answer keeps the node
// from settling: settling without it could make this node activate
// identities that node holds.
func (p *PeersProvider) checkSettled() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c == nil {
		return
	}
	for _, pr := range p.peers {
		if !pr.tried {
			return
		}
	}
	p.settledOnce.Do(func() { close(p.settledCh) })
}

// settled returns a channel closed once every address the node knew of
// (its seeds and those they named) has answered or been found dead, and
// the topology holds every member that answered.
func (p *PeersProvider) settled() <-chan struct{} { return p.settledCh }

// fenced reports whether a live member of this node's topology has not
// answered a greeting sent within the last failure timeout less half a
// heartbeat: that member, which last heard of this node no earlier than
// that greeting was sent, may drop it from its topology soon (and move its
// identities), so the node serves nothing until it is answered again or
// drops that member itself. It is read at every request: one atomic load
// of the instant computed at each answer and topology change (fenceAt).
func (p *PeersProvider) fenced() bool {
	at := p.fenceAt.Load()
	return at != 0 && time.Now().UnixNano() > at
}

// updateFence recomputes fenceAt: the earliest instant at which a live
// member's last answered greeting gets too old. The caller holds mu.
func (p *PeersProvider) updateFence(now time.Time) {
	limit := p.timeout - p.heartbeat/2
	if limit <= 0 {
		limit = p.timeout / 2
	}
	if p.rejoining(now) {
		p.fenceAt.Store(fencedNow)
		return
	}
	var at int64
	for _, pr := range p.peers {
		if p.alive(pr, now) && !pr.acked.IsZero() {
			if t := pr.acked.Add(limit).UnixNano(); at == 0 || t < at {
				at = t
			}
		}
	}
	p.fenceAt.Store(at)
}

// joinError returns why the node has no member to join: every address it
// knows answered as a node of another cluster, refused its TLS handshake
// (a *TLSError) or was found dead, and not all were dead (nil otherwise).
// The errors are sorted by address.
func (p *PeersProvider) joinError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	var addrs []string
	for addr, pr := range p.peers {
		if p.alive(pr, now) {
			return nil
		}
		if !pr.tried {
			return nil // not answered yet
		}
		addrs = append(addrs, addr)
	}
	slices.Sort(addrs)
	var errs []error
	for _, addr := range addrs {
		if err, ok := p.mismatch[addr]; ok {
			errs = append(errs, err)
		} else if err := p.peers[addr].tlsErr; err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// unreachable says which known addresses did not answer their last probe
// and why ("127.0.0.1:7001 refused the connection"), sorted by address, or
// "" when none did. A request waiting for a topology names them.
func (p *PeersProvider) unreachable() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	var why []string
	for addr, pr := range p.peers {
		if pr.dialErr == nil || p.alive(pr, now) {
			continue
		}
		if errors.Is(pr.dialErr, ErrTLSRefused) {
			why = append(why, pr.dialErr.Error())
		} else if errors.Is(pr.dialErr, syscall.ECONNREFUSED) {
			why = append(why, addr+" refused the connection (nothing listens there)")
		} else {
			why = append(why, addr+" did not answer: "+pr.dialErr.Error())
		}
	}
	slices.Sort(why)
	return strings.Join(why, "; ")
}

// leftGracefully reports whether the member at addr said it was leaving
// (Leave) before it left the topology.
func (p *PeersProvider) leftGracefully(addr string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.peers[addr]
	return pr != nil && pr.info.GetLeaving()
}

// publish updates Proto.Actor's member list when the live members changed.
func (p *PeersProvider) publish() {
	p.mu.Lock()
	now := time.Now()
	p.noteStall(now)
	var members pcluster.Members
	if me := p.self.Load(); !me.GetClient() {
		members = append(members, toMember(me))
	}
	for _, pr := range p.peers {
		if p.alive(pr, now) {
			members = append(members, toMember(pr.info))
		}
	}
	p.updateFence(now)
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.Id
	}
	slices.Sort(ids)
	key := strings.Join(ids, ",")
	hook := p.presumedRemoved(now)
	if key == p.current || p.stopped {
		p.mu.Unlock()
		hook()
		return
	}
	p.current = key
	p.mu.Unlock()
	hook()
	p.c.MemberList.UpdateClusterTopology(members)
}

func toMember(i *wire.PeerInfo) *pcluster.Member {
	return &pcluster.Member{Id: i.GetId(), Host: i.GetHost(), Port: i.GetPort(), Kinds: i.GetKinds()}
}

// greetTimeout is how long a greeting waits for its answer: a few
// heartbeats, at most the failure timeout.
func (p *PeersProvider) greetTimeout() time.Duration {
	return min(p.timeout, max(4*p.heartbeat, 500*time.Millisecond))
}

// Leave tells every live peer that this node is leaving, so that they drop
// it from their topology at once instead of after the failure timeout, and
// stops greeting. Member.Close calls it before shutting the cluster down.
func (p *PeersProvider) Leave(ctx context.Context) error {
	p.mu.Lock()
	if p.stopped || p.c == nil {
		p.mu.Unlock()
		return nil
	}
	p.stopped = true
	me := p.self.Load()
	leaving := &wire.PeerInfo{Id: me.GetId(), Host: me.GetHost(), Port: me.GetPort(),
		Kinds: me.GetKinds(), Client: me.GetClient(), Leaving: true,
		Cluster: me.GetCluster(), Protocol: me.GetProtocol()}
	now := time.Now()
	var addrs []string
	for addr, pr := range p.peers {
		if p.alive(pr, now) {
			addrs = append(addrs, addr)
		}
	}
	p.mu.Unlock()
	close(p.stop)
	<-p.done
	timeout := p.greetTimeout()
	if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
		timeout = max(time.Until(d), time.Millisecond)
	}
	futures := make([]*actor.Future, len(addrs))
	for i, a := range addrs {
		futures[i] = p.c.ActorSystem.Root.RequestFuture(actor.NewPID(a, peersActor), &wire.PeerHello{Self: leaving}, timeout)
	}
	var errs []error
	for i, f := range futures {
		if _, err := f.Result(); err != nil {
			errs = append(errs, fmt.Errorf("telling %s: %w", addrs[i], err))
		}
	}
	p.pings.Wait()
	p.c.ActorSystem.Root.Stop(p.pid)
	if len(errs) > 0 {
		return fmt.Errorf("ringactor/cluster: leaving: %w", errors.Join(errs...))
	}
	return nil
}

// Shutdown implements pcluster.ClusterProvider: it leaves, if Leave has not
// been called.
func (p *PeersProvider) Shutdown(bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	return p.Leave(ctx)
}
