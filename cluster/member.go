package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/eventstream"
	"github.com/asynkron/protoactor-go/remote"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/messages"
)

// DefaultRequestTimeout is the deadline of a request whose context has none.
const DefaultRequestTimeout = 5 * time.Second

// DefaultAddress is where a member binds when no address is given: loopback,
// on a port the system picks.
const DefaultAddress = "127.0.0.1:0"

// Option configures a Member.
type Option func(*memberConfig)

type memberConfig struct {
	address        string
	logger         *slog.Logger
	requestTimeout time.Duration
	maxPayload     int
	// remoteOptions are added to the member's Proto.Actor remote
	// configuration (TLS credentials, gRPC options).
	remoteOptions []remote.ConfigOption
	client        bool
	protoKinds    []*pcluster.Kind
	// runtimeOptions are added to the member's ringactor runtime.
	runtimeOptions []actors.Option
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

// WithLogger sets the logger of the member, its actor system and its runtime
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *memberConfig) { c.logger = l } }

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
// its kinds that the disthash lookup places on it, and sends requests to any
// identity of the cluster.
type Member struct {
	name           string
	sys            *actor.ActorSystem
	cluster        *pcluster.Cluster
	rt             *actors.Runtime
	logger         *slog.Logger
	requestTimeout time.Duration
	maxPayload     int
	sub            *eventstream.Subscription
	provider       pcluster.ClusterProvider
	owned          bool // the member started (and stops) the cluster and actor system
	client         bool // started with AsClient

	grains sync.Map // PID string → *actor.PID of the local activations

	mu        sync.Mutex
	topoKinds map[string]int // kind → number of members hosting it
	members   int
	topoCh    chan struct{}            // closed and replaced at each topology change
	addrs     map[string]bool          // remote addresses of the topology's members
	rdv       *pcluster.Rendezvous     // placement of identities on the topology's members
	departed  map[string]chan struct{} // closed when that address leaves the topology

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// Start starts a member of the cluster name with the given provider, hosting
// kinds. Its remote binds to 127.0.0.1 on a free port unless WithAddress
// says otherwise; identities are placed with the disthash lookup. With
// AsClient it joins as a client that hosts nothing.
func Start(ctx context.Context, name string, provider pcluster.ClusterProvider, kinds []*Kind, opts ...Option) (m *Member, err error) {
	cfg, host, port, err := configure(kinds, opts)
	if err != nil {
		return nil, err
	}
	if cfg.client && len(kinds)+len(cfg.protoKinds) > 0 {
		return nil, errors.New("ringactor/cluster: a client hosts no kinds")
	}
	warnIfWildcard(cfg.logger, host, cfg.address)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	logger := cfg.logger
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger }))
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
	rcfg := remote.Configure(host, port, append(ropts, closeFailedConnects())...)
	ccfg := pcluster.Configure(name, provider, disthash.New(), rcfg,
		pcluster.WithKinds(append(pkinds, cfg.protoKinds...)...), pcluster.WithRequestTimeout(cfg.requestTimeout))
	m.cluster = pcluster.New(sys, ccfg)
	defer func() {
		if r := recover(); r != nil { // Proto.Actor panics when a member cannot start
			err = fmt.Errorf("ringactor/cluster: starting member: %v", r)
			sys.EventStream.Unsubscribe(m.sub)
			_ = m.rt.Close(context.Background())
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
	return m, nil
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
	m.cluster, m.name, m.provider = c, c.Config.Name, c.Config.ClusterProvider
}

// warnIfWildcard logs a warning when host is a wildcard (empty, 0.0.0.0,
// ::): the member would be reachable on every interface.
func warnIfWildcard(logger *slog.Logger, host, address string) bool {
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		logger.Warn("ringactor/cluster: member binds a wildcard address, reachable on every interface; give a specific address unless that is intended",
			slog.String("address", address))
		return true
	}
	return false
}

// singleConnectAttempt sets the remote's connection attempts to one.
func singleConnectAttempt(rc *remote.Config) { rc.MaxRetryCount = 1 }

// configure applies opts and checks kinds.
func configure(kinds []*Kind, opts []Option) (cfg memberConfig, host string, port int, err error) {
	cfg = memberConfig{address: DefaultAddress, logger: slog.Default(), requestTimeout: DefaultRequestTimeout, maxPayload: messages.MaxPayloadSize}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxPayload <= 0 || cfg.maxPayload > messages.MaxPayloadSize {
		cfg.maxPayload = messages.MaxPayloadSize
	}
	host, portStr, err := net.SplitHostPort(cfg.address)
	if err != nil {
		return cfg, "", 0, fmt.Errorf("ringactor/cluster: address %q: %w", cfg.address, err)
	}
	port, err = strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return cfg, "", 0, fmt.Errorf("ringactor/cluster: address %q: bad port", cfg.address)
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
	rt, err := actors.NewRuntime(append([]actors.Option{actors.WithActorSystem(sys), actors.WithName("ringactor-cluster-" + name),
		actors.WithLogger(cfg.logger)}, cfg.runtimeOptions...)...)
	if err != nil {
		return nil, nil, err
	}
	m := &Member{
		name: name, sys: sys, rt: rt, logger: cfg.logger,
		requestTimeout: cfg.requestTimeout, maxPayload: cfg.maxPayload,
		topoKinds: map[string]int{}, topoCh: make(chan struct{}), closed: make(chan struct{}),
		addrs: map[string]bool{}, departed: map[string]chan struct{}{},
	}
	pkinds := make([]*pcluster.Kind, len(kinds))
	for i, k := range kinds {
		if k.prepare != nil {
			if err := k.prepare(m); err != nil {
				return nil, nil, errors.Join(fmt.Errorf("cluster: kind %q: %w", k.name, err), rt.Close(context.Background()))
			}
		}
		pkinds[i] = k.build(m)
	}
	m.sub = sys.EventStream.Subscribe(func(ev any) {
		if t, ok := ev.(*pcluster.ClusterTopology); ok {
			m.onTopology(t)
		}
	})
	return m, pkinds, nil
}

// onTopology records which kinds the cluster hosts.
func (m *Member) onTopology(t *pcluster.ClusterTopology) {
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
	m.mu.Lock()
	m.topoKinds, m.members, m.addrs, m.rdv = kinds, len(t.Members), addrs, rdv
	for a, ch := range m.departed {
		if !addrs[a] {
			close(ch)
			delete(m.departed, a)
		}
	}
	close(m.topoCh)
	m.topoCh = make(chan struct{})
	m.mu.Unlock()
}

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
func (m *Member) Activations() int {
	n := 0
	m.grains.Range(func(_, _ any) bool { n++; return true })
	return n
}

// Close shuts the member down gracefully: it tells its peers it leaves
// (with the peers provider, so that they move its identities at once), then
// passivates its activations (terminating their kernels, which drain and
// answer what they hold), closes its runtime, and stops its cluster and
// actor system (an embedded member leaves those to their owner).
// Proto.Actor's graceful shutdown waits about two seconds for ownership to
// move. Close is idempotent; ctx bounds the leaving and the passivation.
func (m *Member) Close(ctx context.Context) error {
	m.closeOnce.Do(func() {
		lifecycleMu.Lock()
		defer lifecycleMu.Unlock()
		close(m.closed)
		var errs []error
		if l, ok := m.provider.(interface{ Leave(context.Context) error }); ok && m.owned {
			if err := l.Leave(ctx); err != nil {
				m.logger.Warn("ringactor/cluster: leaving", slog.Any("error", err))
			}
		}
		if err := m.passivateAll(ctx); err != nil {
			errs = append(errs, err)
		}
		if err := m.rt.Close(ctx); err != nil {
			errs = append(errs, err)
		}
		if m.owned {
			m.shutdownCluster()
		}
		m.sys.EventStream.Unsubscribe(m.sub)
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

// passivateAll stops every local activation and waits until the disthash
// placement actor has reported each one terminated, so that no activation
// bookkeeping runs while the cluster shuts down.
func (m *Member) passivateAll(ctx context.Context) error {
	var pids []*actor.PID
	m.grains.Range(func(_, v any) bool {
		pids = append(pids, v.(*actor.PID))
		return true
	})
	if len(pids) == 0 {
		return nil
	}
	pending := make(map[string]bool, len(pids))
	for _, p := range pids {
		pending[p.String()] = true
	}
	var mu sync.Mutex
	done := make(chan struct{})
	sub := m.sys.EventStream.Subscribe(func(ev any) {
		t, ok := ev.(*pcluster.ActivationTerminated)
		if !ok || t.Pid == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if pending[t.Pid.String()] {
			delete(pending, t.Pid.String())
			if len(pending) == 0 {
				close(done)
			}
		}
	})
	defer m.sys.EventStream.Unsubscribe(sub)
	var errs []error
	for _, p := range pids {
		if err := waitFuture(ctx, m.sys.Root.PoisonFuture(p)); err != nil && !errors.Is(err, actor.ErrDeadLetter) {
			errs = append(errs, fmt.Errorf("passivating %s: %w", p.Id, err))
		}
	}
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("waiting for passivation: %w", ctx.Err()))
	}
	return errors.Join(errs...)
}

// waitFuture waits for f, or for ctx to end.
func waitFuture(ctx context.Context, f *actor.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
