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
}

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

	grains sync.Map // PID string → *actor.PID of the local activations

	mu        sync.Mutex
	topoKinds map[string]int // kind → number of members hosting it
	members   int
	topoCh    chan struct{} // closed and replaced at each topology change

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// Start starts a member of the cluster name with the given provider, hosting
// kinds. Its remote binds to 127.0.0.1 on a free port unless WithAddress
// says otherwise; identities are placed with the disthash lookup.
func Start(ctx context.Context, name string, provider pcluster.ClusterProvider, kinds []*Kind, opts ...Option) (m *Member, err error) {
	cfg := memberConfig{address: DefaultAddress, logger: slog.Default(), requestTimeout: DefaultRequestTimeout, maxPayload: messages.MaxPayloadSize}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxPayload <= 0 || cfg.maxPayload > messages.MaxPayloadSize {
		cfg.maxPayload = messages.MaxPayloadSize
	}
	host, portStr, err := net.SplitHostPort(cfg.address)
	if err != nil {
		return nil, fmt.Errorf("ringactor/cluster: address %q: %w", cfg.address, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("ringactor/cluster: address %q: bad port", cfg.address)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		cfg.logger.Warn("ringactor/cluster: member binds a wildcard address, reachable on every interface; give a specific address unless that is intended",
			slog.String("address", cfg.address))
	}
	seen := make(map[string]bool, len(kinds))
	for _, k := range kinds {
		if k == nil || k.name == "" {
			return nil, errors.New("ringactor/cluster: nil or unnamed kind")
		}
		if seen[k.name] {
			return nil, fmt.Errorf("ringactor/cluster: kind %q given twice", k.name)
		}
		seen[k.name] = true
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	logger := cfg.logger
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger }))
	rt, err := actors.NewRuntime(actors.WithActorSystem(sys), actors.WithName("ringactor-cluster-"+name), actors.WithLogger(logger))
	if err != nil {
		sys.Shutdown()
		return nil, err
	}
	m = &Member{
		name: name, sys: sys, rt: rt, logger: logger,
		requestTimeout: cfg.requestTimeout, maxPayload: cfg.maxPayload,
		topoKinds: map[string]int{}, topoCh: make(chan struct{}), closed: make(chan struct{}),
	}
	pkinds := make([]*pcluster.Kind, len(kinds))
	for i, k := range kinds {
		pkinds[i] = k.build(m)
	}
	rcfg := remote.Configure(host, port, cfg.remoteOptions...)
	ccfg := pcluster.Configure(name, provider, disthash.New(), rcfg,
		pcluster.WithKinds(pkinds...), pcluster.WithRequestTimeout(cfg.requestTimeout))
	m.cluster = pcluster.New(sys, ccfg)
	m.sub = sys.EventStream.Subscribe(func(ev any) {
		if t, ok := ev.(*pcluster.ClusterTopology); ok {
			m.onTopology(t)
		}
	})
	defer func() {
		if r := recover(); r != nil { // Proto.Actor panics when a member cannot start
			err = fmt.Errorf("ringactor/cluster: starting member: %v", r)
			sys.EventStream.Unsubscribe(m.sub)
			_ = rt.Close(context.Background())
			sys.Shutdown()
		}
	}()
	lifecycleMu.Lock()
	defer lifecycleMu.Unlock()
	m.cluster.StartMember()
	return m, nil
}

// onTopology records which kinds the cluster hosts.
func (m *Member) onTopology(t *pcluster.ClusterTopology) {
	kinds := map[string]int{}
	for _, mem := range t.Members {
		for _, k := range mem.Kinds {
			kinds[k]++
		}
	}
	m.mu.Lock()
	m.topoKinds, m.members = kinds, len(t.Members)
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

// Close shuts the member down gracefully: it passivates its activations
// (terminating their kernels, which drain what they hold), closes its
// runtime, leaves the cluster and stops its actor system. Proto.Actor's
// graceful shutdown waits about two seconds for ownership to move. Close is
// idempotent; ctx bounds the passivation.
func (m *Member) Close(ctx context.Context) error {
	m.closeOnce.Do(func() {
		lifecycleMu.Lock()
		defer lifecycleMu.Unlock()
		close(m.closed)
		var errs []error
		if err := m.passivateAll(ctx); err != nil {
			errs = append(errs, err)
		}
		if err := m.rt.Close(ctx); err != nil {
			errs = append(errs, err)
		}
		m.cluster.Shutdown(true)
		m.sys.EventStream.Unsubscribe(m.sub)
		m.closeErr = errors.Join(errs...)
	})
	return m.closeErr
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
