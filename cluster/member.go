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
	"time"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/eventstream"
	"github.com/asynkron/protoactor-go/remote"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/messages"
	"github.com/ringactor/ringactor/telemetry"
)

// DefaultRequestTimeout is the deadline of a request whose context has none.
const DefaultRequestTimeout = 5 * time.Second

// DefaultAddress is where a member binds when no address is given: loopback,
// on a port the system picks.
const DefaultAddress = "127.0.0.1:0"

// Option configures a Member.
type Option func(*memberConfig)

type memberConfig struct {
	address           string
	logger            *slog.Logger
	requestTimeout    time.Duration
	activationTimeout time.Duration
	maxPayload        int
	// remoteOptions are added to the member's Proto.Actor remote
	// configuration (TLS credentials, gRPC options).
	remoteOptions  []remote.ConfigOption
	client         bool
	protoKinds     []*pcluster.Kind
	advertise      string
	handoffTimeout time.Duration
	adEvery        time.Duration
	protoLogLevel  *slog.Level
	// systemOptions configure the actor system Start creates, and
	// runtimeOptions the member's runtime (WithTelemetry).
	systemOptions  []actor.ConfigOption
	runtimeOptions []actors.Option
	providers      *telemetry.Providers
	// tls is WithTLS's configuration (nil: plaintext); the peers provider
	// probes seeds with it, to name a refused handshake.
	tls *tls.Config
	// noBindCheck skips Start's check that the bind port is free (tests:
	// the remote's own listen then fails).
	noBindCheck bool
	// state is the state store of the member's stateful kinds
	// (WithStateStore); nil: none.
	state *stateConfig
}

// WithRuntimeOptions adds options to the member's ringactor runtime, e.g.
// actors.WithBackends to give device kinds (NewDeviceKind) a CUDA backend
// or the simulated device.
func WithRuntimeOptions(opts ...actors.Option) Option {
	return func(c *memberConfig) { c.runtimeOptions = append(c.runtimeOptions, opts...) }
}

// WithProtoKinds makes the member also host plain Proto.Actor cluster kinds,
// next to its ringactor kinds: a user's own grains, in the same cluster.
func WithProtoKinds(kinds ...*pcluster.Kind) Option {
	return func(c *memberConfig) { c.protoKinds = append(c.protoKinds, kinds...) }
}

// AsClient makes Start join as a cluster client: it sends requests to the
// cluster's identities but hosts none and is not a member of the topology
// (so it may come and go without moving identities). Kinds must be empty.
func AsClient() Option { return func(c *memberConfig) { c.client = true } }

// WithAddress sets the host:port the member's remote binds to (default
// DefaultAddress). A wildcard host (0.0.0.0, ::, empty) is logged as a
// warning: it exposes the member on every interface.
func WithAddress(hostPort string) Option { return func(c *memberConfig) { c.address = hostPort } }

// WithAdvertise sets the host:port other members and clients reach this
// member at, when it differs from the bind address (WithAddress): a member
// bound to a wildcard address, behind NAT or in a container. A port of 0
// means the port the member binds. Without it, a member bound to a
// wildcard address advertises the host's first non-loopback address
// (127.0.0.1 when it has none) and logs which; never the wildcard itself,
// which no other node could reach.
func WithAdvertise(hostPort string) Option { return func(c *memberConfig) { c.advertise = hostPort } }

// WithLogger sets the logger of the member, its actor system and its runtime
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *memberConfig) { c.logger = l } }

// WithActivationTimeout bounds launching, activating and terminating an
// activation's kernel (default DefaultActivationTimeout). A member that
// activates thousands of identities at once on a busy host may need more:
// the launches go through the runtime's orchestrator one after another.
func WithActivationTimeout(d time.Duration) Option {
	return func(c *memberConfig) {
		if d > 0 {
			c.activationTimeout = d
		}
	}
}

// WithRequestTimeout sets the deadline of requests whose context has none
// (default DefaultRequestTimeout).
func WithRequestTimeout(d time.Duration) Option {
	return func(c *memberConfig) {
		if d > 0 {
			c.requestTimeout = d
		}
	}
}

// WithMaxPayload sets the largest message payload, in bytes, the member
// encodes or accepts (default messages.MaxPayloadSize, also the ceiling).
func WithMaxPayload(n int) Option { return func(c *memberConfig) { c.maxPayload = n } }

// lifecycleMu serialises starting and stopping members in this process:
// Proto.Actor's remote sets process-wide state (the gRPC logger) as it
// starts, and its shutdown is not safe against a concurrent start.
var lifecycleMu sync.Mutex

// Member is one member of a ringactor cluster: it hosts the identities of
// its kinds that it owns by its topology, and sends requests to any
// identity of the cluster.
type Member struct {
	name              string
	sys               *actor.ActorSystem
	cluster           *pcluster.Cluster
	rt                *actors.Runtime
	logger            *slog.Logger
	tel               *memberTelemetry // tracer and request histogram; nil without WithTelemetry
	requestTimeout    time.Duration
	activationTimeout time.Duration
	maxPayload        int
	sub               *eventstream.Subscription
	provider          pcluster.ClusterProvider
	owned             bool         // the member started (and stops) the cluster and actor system
	client            bool         // started with AsClient
	state             *memberState // the state store (WithStateStore); nil: none

	kinds          map[string]*Kind // the member's kinds, by name
	activations    atomic.Int64     // live activations on this member
	lookupPauses   atomic.Int64     // pauses of requests between two lookups (client.go)
	handoffTimeout time.Duration
	placement      *actor.PID // the placement actor (members only)
	ready          chan struct{}
	readyOnce      sync.Once
	settled        <-chan struct{}             // the provider's, when it says when it has joined
	fence          atomic.Pointer[func() bool] // the provider's, when it fences a member out of touch
	refusedCount   atomic.Int64
	joinErr        func() error           // the provider's: why no member could be joined
	unreachable    func() string          // the provider's: which addresses did not answer, and why
	leftGracefully func(addr string) bool // the provider's: whether the member at addr said it was leaving
	suspects       func() []string        // the provider's: members dropped lately that may still hold activations
	refusedAddrs   sync.Map               // addresses already logged as another cluster's
	pushTimeout    time.Duration
	// adEvery is how often the member checks its devices for a change
	// worth advertising (WithAdvertiseInterval); adDone is closed when that
	// loop has ended.
	adEvery time.Duration
	adDone  chan struct{}
	adverts atomic.Int64
	// adVersion numbers the member's re-advertisements (the loop's only).
	adVersion uint64
	// replies takes the replies to the member's requests (see replies);
	// replyTo is its ReplyTo, replyPIDs the PIDs of other members' ones.
	replies       *replies
	replyTo       atomic.Pointer[replyTarget]
	replyPIDs     sync.Map // ReplyTo → *actor.PID
	replyPIDCount atomic.Int64

	mu        sync.Mutex
	view      view
	topoKinds map[string]int // kind → number of members hosting it
	members   int
	topoCh    chan struct{}            // closed and replaced at each topology change
	addrs     map[string]bool          // remote addresses of the topology's members
	rdv       *pcluster.Rendezvous     // placement of identities on the topology's members
	departed  map[string]chan struct{} // closed when that address leaves the topology
	// ads holds the members' latest advertisements by member id, this
	// one's included (readvertise.go); nil until one changes.
	ads map[string]string
	// dropped holds, by address, when a member left the topology without
	// saying it was leaving: a suspect for departWindow (suspectAddrs).
	dropped map[string]time.Time

	status statusLog // what Status reads: active identities, moves, members lost

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// Start starts a member of the cluster name with the given provider, hosting
// kinds. Its remote binds to 127.0.0.1 on a free port unless WithAddress
// says otherwise, and other nodes reach it at WithAdvertise's address (see
// there for wildcard binds); identities of ringactor kinds are placed by
// ringactor's placement (one activation per identity; see the package
// documentation), plain Proto.Actor kinds (WithProtoKinds) by the disthash
// lookup. With AsClient it joins as a client that hosts nothing.
func Start(ctx context.Context, name string, provider pcluster.ClusterProvider, kinds []*Kind, opts ...Option) (m *Member, err error) {
	cfg, host, port, err := configure(kinds, opts)
	if err != nil {
		return nil, err
	}
	if cfg.client && len(kinds)+len(cfg.protoKinds) > 0 {
		return nil, errors.New("ringactor/cluster: a client hosts no kinds")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkAddresses(ctx, cfg, host, port); err != nil {
		return nil, err
	}
	if p, ok := provider.(interface{ seedList() []string }); ok {
		if err := checkSeeds(ctx, cfg.logger, p.seedList()); err != nil {
			return nil, err
		}
	}
	advertised, port, err := advertise(cfg, host, port)
	if err != nil {
		return nil, err
	}
	logWildcard(cfg.logger, host, port, advertised, cfg.advertise != "")
	logger := cfg.logger
	plog := protoLogger(logger, cfg.protoLogLevel)
	sys := actor.NewActorSystem(append(cfg.systemOptions, actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return plog }))...)
	m, pkinds, err := newMember(sys, name, kinds, cfg)
	if err != nil {
		sys.Shutdown()
		return nil, err
	}
	m.owned, m.provider, m.client = true, provider, cfg.client
	// Close the connections of failed connection attempts (see
	// closeFailedConnects): members die, and Proto.Actor would leak them.
	// Proto.Actor's endpoint writer retries a failed connection five times
	// with a fixed two-second sleep after each attempt, holding messages to
	// a dead member (and a graceful shutdown) for ten seconds; one attempt
	// is enough, as the next message to that address makes a new endpoint.
	ropts := append([]remote.ConfigOption{singleConnectAttempt}, cfg.remoteOptions...)
	if advertised != "" {
		ropts = append(ropts, remote.WithAdvertisedHost(advertised))
		resolveAliases(sys, aliases(host, port))
	}
	rcfg := remote.Configure(host, port, append(ropts, closeFailedConnects(), healthService(m))...)
	ccfg := pcluster.Configure(name, provider, disthash.New(), rcfg,
		pcluster.WithKinds(append(pkinds, cfg.protoKinds...)...), pcluster.WithRequestTimeout(cfg.requestTimeout))
	m.cluster = pcluster.New(sys, ccfg)
	if p, ok := provider.(interface{ setLogger(*slog.Logger) }); ok {
		p.setLogger(logger)
	}
	if p, ok := provider.(interface{ setTLS(*tls.Config) }); ok {
		p.setTLS(cfg.tls)
	}
	defer func() {
		if r := recover(); r != nil { // Proto.Actor panics when a member cannot start
			// Proto.Actor's remote sets the actor system's address once it
			// listens: before that its gRPC server does not exist, and its
			// Shutdown would dereference it.
			listening := sys.Address() != notListening
			switch e, ok := r.(error); {
			case !listening && ok:
				// The listen failed (the address was free a moment ago).
				err = &AddressError{Which: "bind", Address: net.JoinHostPort(host, strconv.Itoa(port)),
					Reason: bindReason(errors.New(strings.TrimPrefix(e.Error(), "failed to listen: ")))}
			case ok: // the provider's error, kept matchable
				err = fmt.Errorf("ringactor/cluster: starting member: %w", e)
			default:
				err = fmt.Errorf("ringactor/cluster: starting member: %v", r)
			}
			sys.EventStream.Unsubscribe(m.sub)
			m.removeReplies()
			_ = m.rt.Close(context.Background())
			if m.cluster.Remote != nil && listening { // started before the provider failed
				m.cluster.Remote.Shutdown(false)
			}
			sys.Shutdown()
		}
	}()
	lifecycleMu.Lock()
	defer lifecycleMu.Unlock()
	if cfg.client {
		m.cluster.StartClient()
	} else {
		m.cluster.StartMember()
	}
	m.useProvider(provider)
	m.startReadvertising(kinds)
	return m, nil
}

// notListening is the address of an actor system whose remote has not
// started listening (Proto.Actor's actor.localAddress).
const notListening = "nonhost"

// checkAddresses checks the member's bind and advertised addresses before
// anything starts: hosts that are IP addresses or resolve (CheckHost), no
// wildcard advertised, and a bind port (other than 0) no other process
// holds. Its errors are *AddressError.
func checkAddresses(ctx context.Context, cfg memberConfig, host string, port int) error {
	if _, _, err := checkAddress(ctx, "bind", cfg.address, true); err != nil {
		return err
	}
	if cfg.advertise != "" {
		if _, _, err := checkAddress(ctx, "advertise", cfg.advertise, false); err != nil {
			return err
		}
	}
	if port != 0 && !cfg.noBindCheck {
		return checkBindable(net.JoinHostPort(host, strconv.Itoa(port)))
	}
	return nil
}

// useProvider takes what the provider says of joining: when it has joined
// (settled), whether the member is out of touch (fenced) and why no member
// could be joined.
func (m *Member) useProvider(provider pcluster.ClusterProvider) {
	if p, ok := provider.(interface{ settled() <-chan struct{} }); ok {
		m.mu.Lock()
		m.settled = p.settled()
		m.mu.Unlock()
	}
	if p, ok := provider.(interface{ fenced() bool }); ok {
		f := p.fenced
		m.fence.Store(&f)
	}
	if p, ok := provider.(interface{ joinError() error }); ok {
		m.mu.Lock()
		m.joinErr = p.joinError
		m.mu.Unlock()
	}
	if p, ok := provider.(interface{ unreachable() string }); ok {
		m.mu.Lock()
		m.unreachable = p.unreachable
		m.mu.Unlock()
	}
	if p, ok := provider.(interface{ leftGracefully(string) bool }); ok {
		m.mu.Lock()
		m.leftGracefully = p.leftGracefully
		m.mu.Unlock()
	}
	if p, ok := provider.(interface{ suspects() []string }); ok {
		m.mu.Lock()
		m.suspects = p.suspects
		m.mu.Unlock()
	}
	if p, ok := provider.(interface{ setOnRemoved(func(string)) }); ok && !m.client {
		p.setOnRemoved(m.fenceAll)
	}
	if p, ok := provider.(interface{ setActivations(func() int) }); ok && !m.client {
		p.setActivations(m.Activations)
	}
}

// fenceAll passivates every activation of the member at once, which the
// others dropped or may have dropped (reason): they may activate its
// identities elsewhere. The member stays up and activates again once its
// provider lets it (it is fenced meanwhile).
func (m *Member) fenceAll(reason string) {
	if m.placement == nil {
		return
	}
	m.logger.Warn("ringactor/cluster: fenced: passivating every activation", slog.String("reason", reason))
	m.sys.Root.Send(m.placement, fenceAllRequest{})
}

// departWindow is how long a member that left the topology without saying
// it was leaving stays a suspect (whatever the provider): about the time
// it takes such a member to fence itself and passivate once it is cut off.
const departWindow = 2 * EtcdLeaseTTL

// noteDropped records the members of left that did not say they were
// leaving (suspects).
func (m *Member) noteDropped(left []*pcluster.Member) {
	if len(left) == 0 {
		return
	}
	self := m.sys.Address()
	m.mu.Lock()
	graceful := m.leftGracefully
	m.mu.Unlock()
	var addrs []string
	for _, mem := range left {
		if a := mem.Address(); a != self && (graceful == nil || !graceful(a)) {
			addrs = append(addrs, a)
		}
	}
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range addrs {
		if m.dropped == nil {
			m.dropped = map[string]time.Time{}
		}
		m.dropped[a] = now
	}
	for a, at := range m.dropped {
		if now.Sub(at) > departWindow {
			delete(m.dropped, a)
		}
	}
}

// suspectAddrs returns the members that may still hold activations though
// they are not in the topology: the provider's suspects, and the members
// that left the topology lately without saying they were leaving. A
// hand-off round asks them too.
func (m *Member) suspectAddrs() []string {
	m.mu.Lock()
	f := m.suspects
	var out []string
	now := time.Now()
	for a, at := range m.dropped {
		if now.Sub(at) <= departWindow && !m.addrs[a] {
			out = append(out, a)
		}
	}
	m.mu.Unlock()
	if f != nil {
		for _, a := range f() {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// Embed prepares ringactor kinds for a Proto.Actor cluster the caller builds
// and owns on sys: pass the returned kinds to pcluster.WithKinds together
// with the caller's own, create the cluster, call Attach on the member,
// then start the cluster. Requests go through the returned member like
// through a started one; its Close passivates the ringactor activations and
// closes its runtime but leaves the cluster and sys to the caller. Options
// about the remote (WithAddress, WithTLS) do not apply: the caller
// configures the remote.
func Embed(sys *actor.ActorSystem, kinds []*Kind, opts ...Option) (*Member, []*pcluster.Kind, error) {
	cfg, _, _, err := configure(kinds, opts)
	if err != nil {
		return nil, nil, err
	}
	return newMember(sys, "", kinds, cfg)
}

// Attach binds an embedded member (see Embed) to the cluster that hosts its
// kinds. Call it after pcluster.New and before the cluster starts.
func (m *Member) Attach(c *pcluster.Cluster) {
	m.mu.Lock()
	m.cluster, m.name, m.provider = c, c.Config.Name, c.Config.ClusterProvider
	m.mu.Unlock()
	m.useProvider(c.Config.ClusterProvider)
	m.startReadvertising(m.kindList())
}

// logWildcard logs, at info level, one line for a member that binds a
// wildcard address (empty, 0.0.0.0, ::), reachable on every interface, as a
// pod or a container does: what it binds and what it advertises (given, or
// the host's address). It returns whether host is a wildcard.
func logWildcard(logger *slog.Logger, host string, port int, advertised string, given bool) bool {
	if !isWildcard(host) {
		return false
	}
	from := "the host's first non-loopback address (give WithAdvertise / --advertise to choose)"
	if given {
		from = "as given"
	}
	logger.Info("ringactor/cluster: member binds every interface and advertises "+advertised+", "+from,
		slog.String("bind", net.JoinHostPort(host, strconv.Itoa(port))), slog.String("advertised", advertised))
	return true
}

// singleConnectAttempt sets the remote's connection attempts to one.
func singleConnectAttempt(rc *remote.Config) { rc.MaxRetryCount = 1 }

// configure applies opts and checks kinds.
func configure(kinds []*Kind, opts []Option) (cfg memberConfig, host string, port int, err error) {
	cfg = memberConfig{address: DefaultAddress, logger: slog.Default(), requestTimeout: DefaultRequestTimeout,
		activationTimeout: DefaultActivationTimeout, maxPayload: messages.MaxPayloadSize, handoffTimeout: DefaultHandoffTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxPayload <= 0 || cfg.maxPayload > messages.MaxPayloadSize {
		cfg.maxPayload = messages.MaxPayloadSize
	}
	host, port, err = splitAddress("bind", cfg.address)
	if err != nil {
		return cfg, "", 0, err
	}
	seen := make(map[string]bool, len(kinds))
	for _, k := range kinds {
		if k == nil || k.name == "" {
			return cfg, "", 0, errors.New("ringactor/cluster: nil or unnamed kind")
		}
		if seen[k.name] {
			return cfg, "", 0, fmt.Errorf("ringactor/cluster: kind %q given twice", k.name)
		}
		seen[k.name] = true
	}
	return cfg, host, port, nil
}

// newMember makes the member's runtime on sys, its Proto.Actor kinds and its
// topology subscription.
func newMember(sys *actor.ActorSystem, name string, kinds []*Kind, cfg memberConfig) (*Member, []*pcluster.Kind, error) {
	// A zero bound would fail every activation at once (a context that is
	// already done): members built without Start's defaults get them here.
	if cfg.activationTimeout <= 0 {
		cfg.activationTimeout = DefaultActivationTimeout
	}
	if cfg.requestTimeout <= 0 {
		cfg.requestTimeout = DefaultRequestTimeout
	}
	if cfg.handoffTimeout <= 0 {
		cfg.handoffTimeout = DefaultHandoffTimeout
	}
	if cfg.adEvery <= 0 {
		cfg.adEvery = DefaultAdvertiseInterval
	}
	if cfg.maxPayload <= 0 {
		cfg.maxPayload = messages.MaxPayloadSize
	}
	rt, err := actors.NewRuntime(append([]actors.Option{actors.WithActorSystem(sys), actors.WithName("ringactor-cluster-" + name),
		actors.WithLogger(cfg.logger)}, cfg.runtimeOptions...)...)
	if err != nil {
		return nil, nil, err
	}
	m := &Member{
		name: name, sys: sys, rt: rt, logger: cfg.logger, tel: newMemberTelemetry(cfg.providers),
		requestTimeout: cfg.requestTimeout, activationTimeout: cfg.activationTimeout, maxPayload: cfg.maxPayload,
		topoKinds: map[string]int{}, topoCh: make(chan struct{}), closed: make(chan struct{}),
		addrs: map[string]bool{}, departed: map[string]chan struct{}{},
		kinds: make(map[string]*Kind, len(kinds)), handoffTimeout: cfg.handoffTimeout, adEvery: cfg.adEvery,
		ready: make(chan struct{}), pushTimeout: cfg.handoffTimeout, replies: newReplies(),
	}
	if cfg.state != nil {
		m.state = newMemberState(cfg.state, m)
	}
	pkinds := make([]*pcluster.Kind, len(kinds))
	for i, k := range kinds {
		if k.prepare != nil {
			if err := k.prepare(m); err != nil {
				return nil, nil, errors.Join(fmt.Errorf("cluster: kind %q: %w", k.name, err), rt.Close(context.Background()))
			}
		}
		pkinds[i] = k.build(m)
		m.kinds[k.name] = k
	}
	if !cfg.client {
		if ad := m.advertisement(kinds); ad != "" {
			pkinds = append(pkinds, adKind(ad))
		}
	}
	if _, ok := sys.ProcessRegistry.Add(m.replies, replyProcessID); !ok {
		_ = rt.Close(context.Background())
		return nil, nil, fmt.Errorf("ringactor/cluster: process %q exists: one member per actor system", replyProcessID)
	}
	if !cfg.client {
		pid, err := sys.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return newPlacement(m) }), placementActor)
		if err != nil {
			m.removeReplies()
			_ = rt.Close(context.Background())
			return nil, nil, fmt.Errorf("ringactor/cluster: placement actor: %w", err)
		}
		m.placement = pid
	}
	m.sub = sys.EventStream.Subscribe(func(ev any) {
		switch t := ev.(type) {
		case *pcluster.ClusterTopology:
			m.onTopology(t)
		case *actor.DeadLetterEvent:
			m.onDeadLetter(t)
		case *pcluster.GossipUpdate:
			m.onGossip(t)
		}
	})
	return m, pkinds, nil
}

// onTopology records which kinds the cluster hosts, and logs each member
// that left it (logDeparture).
func (m *Member) onTopology(t *pcluster.ClusterTopology) {
	m.logDepartures(t.Left)
	m.noteDropped(t.Left)
	kinds := map[string]int{}
	addrs := make(map[string]bool, len(t.Members))
	for _, mem := range t.Members {
		for _, k := range mem.Kinds {
			kinds[k]++
		}
		addrs[mem.Address()] = true
	}
	rdv := pcluster.NewRendezvous()
	rdv.UpdateMembers(t.Members)
	self := m.sys.Address()
	v := view{self: self, members: len(t.Members), rdv: rdv, all: t.Members}
	inTopology := false
	for _, mem := range t.Members {
		if a := mem.Address(); a != self {
			v.others = append(v.others, a)
		} else {
			inTopology = true
		}
	}
	m.mu.Lock()
	v.nodes, v.reqs = nodesOf(t.Members, m.ads) // under mu: readvertise.go updates ads
	m.topoKinds, m.members, m.addrs, m.rdv, m.view = kinds, len(t.Members), addrs, rdv, v
	m.status.topology(addrs, time.Now())
	if inTopology && m.settled == nil {
		// A provider that does not say when it has joined (etcd, ...):
		// its first topology that holds this member is the whole view.
		m.readyOnce.Do(func() { close(m.ready) })
	}
	for a, ch := range m.departed {
		if !addrs[a] {
			close(ch)
			delete(m.departed, a)
		}
	}
	close(m.topoCh)
	m.topoCh = make(chan struct{})
	m.mu.Unlock()
	if m.placement != nil {
		m.sys.Root.Send(m.placement, topologyChanged{})
	}
}

// logDepartures logs one line for each member of left, the members that
// have just left the topology, with its address: at info level when it
// said it was leaving (a graceful leave), at warn level otherwise (it
// stopped answering: killed, crashed, cut off). Proto.Actor's own reports
// of the gossip it then fails to send there are demoted to debug level
// (protoHandler): this is the one line about it.
func (m *Member) logDepartures(left []*pcluster.Member) {
	if len(left) == 0 || m.logger == nil {
		return
	}
	self := m.sys.Address()
	m.mu.Lock()
	graceful := m.leftGracefully
	m.mu.Unlock()
	for _, mem := range left {
		addr := mem.Address()
		if addr == self {
			continue
		}
		attrs := []any{slog.String("address", addr), slog.String("member_id", mem.Id), slog.Any("kinds", mem.Kinds)}
		if graceful != nil && graceful(addr) {
			m.logger.Info("ringactor/cluster: a member left the cluster", attrs...)
			continue
		}
		m.logger.Warn("ringactor/cluster: lost a member: it stopped answering and left the topology; its identities move to the other members", attrs...)
	}
}

// currentView returns the member's topology as placement uses it.
func (m *Member) currentView() view {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.view
}

// isReady reports whether the member has joined: its provider has heard
// from (or given up on) every member it knows of, so its topology is not a
// partial view of its own making.
func (m *Member) isReady() bool {
	m.mu.Lock()
	settled := m.settled
	m.mu.Unlock()
	if settled != nil {
		select {
		case <-settled:
			return true
		default:
			return false
		}
	}
	select {
	case <-m.ready:
		return true
	default:
		return false
	}
}

// isFenced reports whether the member is out of touch with members of its
// topology for so long that they may drop it: it then serves nothing.
func (m *Member) isFenced() bool {
	f := m.fence.Load()
	return f != nil && (*f)()
}

// refused logs, once per address, that a node of another cluster was
// refused: an operator must point it (or this member) at the right seeds.
// At most maxRefusedLogged addresses are remembered (clients come from a
// new port each time); past that, one more record says so.
func (m *Member) refused(addr string, err error) {
	if _, seen := m.refusedAddrs.Load(addr); seen {
		return
	}
	switch n := m.refusedCount.Add(1); {
	case n <= maxRefusedLogged:
		m.refusedAddrs.Store(addr, true)
		m.logger.Error("ringactor/cluster: refused a node of another cluster", slog.String("address", addr), slog.Any("error", err))
	case n == maxRefusedLogged+1:
		m.logger.Error("ringactor/cluster: refused more nodes of other clusters; no longer logging each", slog.Any("error", err))
	}
}

// maxRefusedLogged bounds the refused addresses a member logs.
const maxRefusedLogged = 256

// topology returns how many members host kind, how many members there are,
// and a channel closed at the next change.
func (m *Member) topology(kind string) (hosts, members int, changed <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.topoKinds[kind], m.members, m.topoCh
}

// departure returns a channel closed when the member at addr leaves the
// topology; nil when addr is not a member now (a local or unknown address).
func (m *Member) departure(addr string) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.addrs[addr] {
		return nil
	}
	ch := m.departed[addr]
	if ch == nil {
		ch = make(chan struct{})
		m.departed[addr] = ch
	}
	return ch
}

// WaitMembers waits until this member sees at least n members in the
// cluster topology (itself included), or ctx ends.
func (m *Member) WaitMembers(ctx context.Context, n int) error {
	for {
		m.mu.Lock()
		have, ch := m.members, m.topoCh
		m.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("ringactor/cluster: %d of %d members: %w", have, n, ctx.Err())
		}
	}
}

// Members returns how many members the latest topology this member saw
// has (a client does not count itself).
func (m *Member) Members() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.members
}

// Name returns the cluster's name.
func (m *Member) Name() string { return m.name }

// Address returns the host:port other members reach this one at.
func (m *Member) Address() string { return m.sys.Address() }

// ActorSystem returns the member's actor system.
func (m *Member) ActorSystem() *actor.ActorSystem { return m.sys }

// Cluster returns the member's Proto.Actor cluster.
func (m *Member) Cluster() *pcluster.Cluster { return m.cluster }

// Runtime returns the runtime hosting the member's kernels.
func (m *Member) Runtime() *actors.Runtime { return m.rt }

// Activations returns how many identities are active on this member.
func (m *Member) Activations() int { return int(m.activations.Load()) }

// Close shuts the member down gracefully: it stops taking activations,
// passivates its activations (terminating their kernels, which drain and
// answer what they hold; a stateful kind gives its state), sends those
// states to the identities' next owners, tells its peers it leaves (with
// the peers provider, so that they move its identities at once), closes its
// runtime, and stops its cluster and actor system (an embedded member
// leaves those to their owner). Proto.Actor's graceful shutdown waits about
// two seconds. Close is idempotent; ctx bounds the passivation, the
// hand-off and the leaving.
func (m *Member) Close(ctx context.Context) error {
	m.closeOnce.Do(func() {
		lifecycleMu.Lock()
		defer lifecycleMu.Unlock()
		close(m.closed)
		if m.adDone != nil {
			<-m.adDone
		}
		var errs []error
		if err := m.passivateAll(ctx); err != nil {
			errs = append(errs, err)
		}
		if m.state != nil {
			m.state.commit.close() // after the activations' last saves
		}
		if l, ok := m.provider.(interface{ Leave(context.Context) error }); ok && m.owned {
			if err := l.Leave(ctx); err != nil {
				m.logger.Warn("ringactor/cluster: leaving", slog.Any("error", err))
			}
		}
		if err := m.rt.Close(ctx); err != nil {
			errs = append(errs, err)
		}
		if m.owned {
			m.shutdownCluster()
		}
		m.sys.EventStream.Unsubscribe(m.sub)
		m.removeReplies()
		m.closeErr = errors.Join(errs...)
	})
	return m.closeErr
}

// shutdownCluster stops the cluster and actor system the member started.
// Proto.Actor's Cluster.Shutdown dereferences the gossiper, which a client
// does not start, so a client is shut down piece by piece. Proto.Actor's
// remote can panic as it stops ("send on closed channel": its endpoint
// manager signals an endpoint reader whose stream a peer has just closed);
// that panic is recovered and the gRPC server is stopped without grace.
func (m *Member) shutdownCluster() {
	defer func() {
		if r := recover(); r != nil {
			m.logger.Warn("ringactor/cluster: Proto.Actor panicked while stopping its remote; stopping the server at once", slog.Any("panic", r))
			m.cluster.Remote.Shutdown(false)
		}
	}()
	if !m.client {
		m.cluster.Shutdown(true)
		return
	}
	m.sys.Shutdown()
	_ = m.cluster.Config.ClusterProvider.Shutdown(true)
	m.cluster.IdentityLookup.Shutdown()
	m.cluster.Remote.Shutdown(true)
}
