package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	pcluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/connectivity"
)

// Defaults of the etcd provider.
const (
	// DefaultEtcdDialTimeout bounds connecting to etcd: Etcd fails when no
	// endpoint answers within it, and so does each reconnection attempt.
	DefaultEtcdDialTimeout = 2 * time.Second
	// DefaultEtcdBaseKey is the etcd key prefix under which members
	// register, as <base key>/<cluster name>/<member id>.
	DefaultEtcdBaseKey = "/ringactor"
	// EtcdLeaseTTL is the TTL of a member's registration lease, fixed by
	// Proto.Actor's etcd provider (which keeps it alive about every second):
	// the registration of a member that dies without leaving expires, and
	// the others drop it from the topology, within about this long.
	EtcdLeaseTTL = 3 * time.Second
	// etcdShutdownTimeout bounds the deregistration of a leaving member: when
	// etcd does not answer in time, the client is closed without it and the
	// registration expires with its lease.
	etcdShutdownTimeout = 2 * time.Second
)

// ErrEtcdUnavailable: no etcd endpoint could be reached within the dial
// timeout.
var ErrEtcdUnavailable = errors.New("ringactor/cluster: etcd unavailable")

// EtcdOption configures the etcd provider.
type EtcdOption func(*etcdConfig)

type etcdConfig struct {
	baseKey string
	client  clientv3.Config
	log     *etcdLog
}

// etcdLog is where the etcd client's log records go: the WithEtcdLogger
// logger, else the logger of the member the provider serves once it starts,
// else (while connecting) slog.Default().
type etcdLog struct {
	fixed  *slog.Logger
	member atomic.Pointer[slog.Logger]
}

func (l *etcdLog) logger() *slog.Logger {
	if l.fixed != nil {
		return l.fixed
	}
	if m := l.member.Load(); m != nil {
		return m
	}
	return slog.Default()
}

// WithEtcdLogger sends the log records of the provider's etcd client
// (attribute logger=etcd-client) to l. By default they go to the logger of
// the member the provider serves (WithLogger), and to slog.Default() before
// the member starts.
func WithEtcdLogger(l *slog.Logger) EtcdOption { return func(c *etcdConfig) { c.log.fixed = l } }

// WithEtcdDialTimeout sets how long connecting to etcd may take (default
// DefaultEtcdDialTimeout).
func WithEtcdDialTimeout(d time.Duration) EtcdOption {
	return func(c *etcdConfig) {
		if d > 0 {
			c.client.DialTimeout = d
		}
	}
}

// WithEtcdBaseKey sets the key prefix of the registrations (default
// DefaultEtcdBaseKey). Members of one cluster must use the same prefix.
func WithEtcdBaseKey(key string) EtcdOption { return func(c *etcdConfig) { c.baseKey = key } }

// WithEtcdTLS makes the provider reach etcd over TLS with cfg (CA, and a
// client certificate when etcd requires one). It is independent of WithTLS,
// which secures the traffic between members.
func WithEtcdTLS(cfg *tls.Config) EtcdOption { return func(c *etcdConfig) { c.client.TLS = cfg } }

// WithEtcdAuth sets the user name and password of etcd authentication.
func WithEtcdAuth(username, password string) EtcdOption {
	return func(c *etcdConfig) { c.client.Username, c.client.Password = username, password }
}

// WithEtcdClientConfig lets f adjust the etcd client configuration last,
// for settings without an option of their own (keep-alive settings, ...;
// its Logger, a zap logger that writes to the WithEtcdLogger logger by
// default, may be replaced too).
func WithEtcdClientConfig(f func(*clientv3.Config)) EtcdOption {
	return func(c *etcdConfig) { f(&c.client) }
}

// Etcd returns a cluster provider that keeps the membership in etcd, reached
// at endpoints (host:port of etcd's client URLs), for Start: each member
// registers under <base key>/<cluster name>/ with a lease of EtcdLeaseTTL and
// watches the others' registrations. It is Proto.Actor's etcd provider
// (github.com/asynkron/protoactor-go/cluster/clusterproviders/etcd) with a
// short dial timeout, a connection check and a shutdown that closes its etcd
// client. It fails, with an error matching ErrEtcdUnavailable, when no
// endpoint answers within the dial timeout. A provider serves one member.
func Etcd(endpoints []string, opts ...EtcdOption) (pcluster.ClusterProvider, error) {
	if len(endpoints) == 0 {
		return nil, fmt.Errorf("%w: no endpoints", ErrEtcdUnavailable)
	}
	log := &etcdLog{}
	cfg := etcdConfig{
		baseKey: DefaultEtcdBaseKey,
		client: clientv3.Config{
			Endpoints:   endpoints,
			DialTimeout: DefaultEtcdDialTimeout,
			Logger:      newZapSlog(log.logger).Named("etcd-client"),
		},
		log: log,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.client.DialTimeout > 0 {
		// Each connection attempt, the first and the reconnections, is
		// bounded by the dial timeout (gRPC's default is 20s). First, so
		// that options given with WithEtcdClientConfig override it.
		cfg.client.DialOptions = append([]grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.DefaultConfig,
			MinConnectTimeout: cfg.client.DialTimeout,
		})}, cfg.client.DialOptions...)
	}
	p, err := etcd.NewWithConfig(cfg.baseKey, cfg.client)
	if err != nil {
		return nil, fmt.Errorf("%w: %v: %w", ErrEtcdUnavailable, endpoints, err)
	}
	client, err := etcdProviderClient(p)
	if err != nil {
		return nil, err
	}
	// The etcd client connects lazily (grpc.NewClient, which ignores
	// grpc.WithBlock): without this check an unreachable etcd would only
	// show when the member starts, where Proto.Actor's calls to etcd have no
	// deadline.
	ctx, cancel := context.WithCancel(context.Background())
	if cfg.client.DialTimeout > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), cfg.client.DialTimeout)
	}
	err = waitConnected(ctx, client.ActiveConnection())
	cancel()
	if err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("%w: %v: %w", ErrEtcdUnavailable, endpoints, err)
	}
	lease, err := etcdProviderLease(p)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	fence := &etcdFence{client: client, lease: lease, stop: make(chan struct{}), done: make(chan struct{})}
	return &etcdProvider{Provider: p, client: client, log: log, fence: fence}, nil
}

// waitConnected connects conn and waits until it is ready or ctx ends.
func waitConnected(ctx context.Context, conn *grpc.ClientConn) error {
	conn.Connect()
	for {
		s := conn.GetState()
		if s == connectivity.Ready {
			return nil
		}
		if !conn.WaitForStateChange(ctx, s) {
			return fmt.Errorf("no connection (%v): %w", s, ctx.Err())
		}
	}
}

// etcdProvider is Proto.Actor's etcd provider whose Shutdown also closes
// the provider's etcd client.
type etcdProvider struct {
	*etcd.Provider
	client    *clientv3.Client
	log       *etcdLog
	closeOnce sync.Once
	// fence is the member's lease fence (etcd_fence.go); started by
	// StartMember.
	fence   *etcdFence
	fencing atomic.Bool
}

// fenced reports whether the member may no longer be registered in etcd
// (its lease may have expired): it then serves nothing. A client is never
// fenced.
func (p *etcdProvider) fenced() bool { return p.fencing.Load() && p.fence.fenced() }

// setOnRemoved gives the fence the member's passivation of every
// activation, called when the registration lapsed.
func (p *etcdProvider) setOnRemoved(f func(string)) {
	p.fence.mu.Lock()
	p.fence.onRemoved = f
	p.fence.mu.Unlock()
}

// setLogger sends the etcd client's logs to the member's logger (unless
// WithEtcdLogger gave one): Start calls it before the member starts.
func (p *etcdProvider) setLogger(l *slog.Logger) { p.log.member.Store(l) }

// StartMember starts Proto.Actor's provider; the etcd client's logs go to
// the member's logger (setLogger), or to the cluster's when the provider
// serves a cluster that Start did not make.
func (p *etcdProvider) StartMember(c *pcluster.Cluster) error {
	p.log.member.CompareAndSwap(nil, c.Logger())
	if err := p.Provider.StartMember(c); err != nil {
		return err
	}
	p.fence.logger = p.log.logger()
	p.fence.check() // registered: its lease is confirmed before any request
	p.fencing.Store(true)
	go p.fence.run()
	return nil
}

// StartClient is StartMember for a cluster client.
func (p *etcdProvider) StartClient(c *pcluster.Cluster) error {
	p.log.member.CompareAndSwap(nil, c.Logger())
	return p.Provider.StartClient(c)
}

// Shutdown deregisters the member (within etcdShutdownTimeout) and closes
// the etcd client, which ends the provider's watch and lease keep-alive.
func (p *etcdProvider) Shutdown(graceful bool) error {
	if p.fencing.Load() {
		p.fence.close()
	}
	done := make(chan error, 1)
	go func() { done <- p.Provider.Shutdown(graceful) }()
	var err error
	t := time.NewTimer(etcdShutdownTimeout)
	defer t.Stop()
	select {
	case err = <-done:
	case <-t.C:
		// Closing the client fails the pending deregistration.
		p.close()
		err = <-done
	}
	p.close()
	if err != nil {
		return fmt.Errorf("ringactor/cluster: leaving etcd: %w", err)
	}
	return nil
}

// close closes the etcd client once.
func (p *etcdProvider) close() { p.closeOnce.Do(func() { _ = p.client.Close() }) }

// etcdProviderClient returns the etcd client of Proto.Actor's provider,
// which neither exposes nor closes it. It is read from the provider's
// unexported field "client"; the pinned Proto.Actor version has it, and an
// upgrade that changes that fails here rather than leaking connections.
func etcdProviderClient(p *etcd.Provider) (*clientv3.Client, error) {
	f := reflect.ValueOf(p).Elem().FieldByName("client")
	if !f.IsValid() || f.Type() != reflect.TypeOf((*clientv3.Client)(nil)) {
		return nil, errors.New("ringactor/cluster: Proto.Actor's etcd provider has no client field of type *clientv3.Client; update etcdProviderClient")
	}
	c := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(*clientv3.Client)
	if c == nil {
		return nil, errors.New("ringactor/cluster: Proto.Actor's etcd provider has no client")
	}
	return c, nil
}
