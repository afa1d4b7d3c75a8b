package cluster

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pcluster "github.com/asynkron/protoactor-go/cluster"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
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
	// EtcdLeaseTTL is the TTL of a member's registration lease, which the
	// provider keeps alive about every second (a third of it): the
	// registration of a member that dies without leaving expires, and the
	// others drop it from the topology, within about this long.
	EtcdLeaseTTL = 3 * time.Second
	// etcdShutdownTimeout bounds the deregistration of a leaving member: when
	// etcd does not answer in time, the client is closed without it and the
	// registration expires with its lease.
	etcdShutdownTimeout = 2 * time.Second
	// etcdCallTimeout bounds each of the provider's other calls to etcd
	// (registering, listing the members, checking the lease).
	etcdCallTimeout = EtcdLeaseTTL
	// etcdRetry is how long the watch waits before it lists the members
	// again after etcd failed it.
	etcdRetry = 500 * time.Millisecond
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
// registers under <base key>/<cluster name>/<member id> with a lease of
// EtcdLeaseTTL that it keeps alive, and watches the others' registrations
// (the keys and values of Proto.Actor's etcd provider, whose members it
// can share a cluster with). A member whose lease lapsed (etcd expired it:
// the others dropped it) is fenced and passivates every activation; once
// etcd answers again it rejoins under a new member id, "<id>.1", "<id>.2",
// …, since the others never take a dropped member id back (etcd_fence.go).
// It fails, with an error matching ErrEtcdUnavailable, when no endpoint
// answers within the dial timeout. A provider serves one member.
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
	client, err := clientv3.New(cfg.client)
	if err != nil {
		return nil, fmt.Errorf("%w: %v: %w", ErrEtcdUnavailable, endpoints, err)
	}
	// The etcd client connects lazily (grpc.NewClient, which ignores
	// grpc.WithBlock): without this check an unreachable etcd would only
	// show when the member starts.
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
	p := &etcdProvider{client: client, baseKey: cfg.baseKey, log: log, kick: make(chan struct{}, 1),
		stopFence: make(chan struct{}), fenceDone: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
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

// etcdNode is a member's registration, the value of its key: the JSON of
// Proto.Actor's etcd provider (its Node).
type etcdNode struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Host    string   `json:"host"`
	Address string   `json:"address"`
	Port    int      `json:"port"`
	Kinds   []string `json:"kinds"`
	Alive   bool     `json:"alive"`
}

// etcdProvider implements pcluster.ClusterProvider on etcd.
type etcdProvider struct {
	client  *clientv3.Client
	baseKey string
	log     *etcdLog

	c      *pcluster.Cluster
	prefix string // <base key>/<cluster name>/
	// ctx ends the watch and the keep-alive at Shutdown; wg counts their
	// goroutines.
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	shutOnce sync.Once
	shutErr  error

	// members are the registrations the watch knows, by key; only the
	// watch's goroutine (or Start, before it runs) touches them.
	members map[string]*pcluster.Member

	// The member's registration and lease fence (etcd_fence.go).
	mu          sync.Mutex
	node        etcdNode // this member's registration; its ID changes when it rejoins
	baseID      string   // the first incarnation's member id, "<cluster>@<actor system id>"
	incarnation int
	onRemoved   func(reason string)
	activations func() int
	kaCancel    context.CancelFunc // ends the keep-alive of the current lease

	lease      atomic.Int64 // the current registration's lease
	kaLease    atomic.Int64 // the lease a keep-alive runs for, 0 when none
	validUntil atomic.Int64 // unix ns until which the lease is confirmed
	lost       atomic.Bool  // the registration lapsed: fenced until it rejoins
	fencing    atomic.Bool  // started as a member: the fence applies
	kick       chan struct{}
	stopFence  chan struct{}
	fenceDone  chan struct{}
	closeOnce  sync.Once
}

// setLogger sends the etcd client's logs to the member's logger (unless
// WithEtcdLogger gave one): Start calls it before the member starts.
func (p *etcdProvider) setLogger(l *slog.Logger) { p.log.member.Store(l) }

// logger is where the provider's own records go: the member's logger.
func (p *etcdProvider) logger() *slog.Logger {
	if l := p.log.member.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// init takes the cluster the provider serves.
func (p *etcdProvider) init(c *pcluster.Cluster) error {
	p.log.member.CompareAndSwap(nil, c.Logger())
	host, port, err := c.ActorSystem.GetHostPort()
	if err != nil {
		return fmt.Errorf("ringactor/cluster: etcd provider: %w", err)
	}
	p.c = c
	p.prefix = p.baseKey + "/" + c.Config.Name + "/"
	p.baseID = c.Config.Name + "@" + c.ActorSystem.ID
	kinds := c.GetClusterKinds()
	if kinds == nil {
		kinds = []string{}
	}
	p.node = etcdNode{ID: p.baseID, Name: p.baseID, Host: host, Address: host, Port: port, Kinds: kinds, Alive: true}
	return nil
}

// StartMember registers the member, publishes the topology etcd holds and
// starts watching it, and starts the member's lease fence.
func (p *etcdProvider) StartMember(c *pcluster.Cluster) error {
	if err := p.init(c); err != nil {
		return err
	}
	if err := p.register(p.baseID); err != nil {
		return fmt.Errorf("%w: registering: %w", ErrEtcdUnavailable, err)
	}
	if err := p.startWatch(); err != nil {
		p.revoke(clientv3.LeaseID(p.lease.Load()))
		p.cancel()
		p.wg.Wait()
		return err
	}
	p.fencing.Store(true)
	go p.fenceLoop()
	return nil
}

// StartClient publishes the topology etcd holds and starts watching it,
// without registering.
func (p *etcdProvider) StartClient(c *pcluster.Cluster) error {
	if err := p.init(c); err != nil {
		return err
	}
	return p.startWatch()
}

// startWatch lists the registrations, publishes them, and watches them
// from there.
func (p *etcdProvider) startWatch() error {
	ctx, cancel := context.WithTimeout(p.ctx, etcdCallTimeout)
	rev, err := p.list(ctx)
	cancel()
	if err != nil {
		return fmt.Errorf("%w: listing the members: %w", ErrEtcdUnavailable, err)
	}
	p.wg.Add(1)
	go p.watch(rev)
	return nil
}

// list reads every registration of the cluster and publishes them; it
// returns etcd's revision of that read.
func (p *etcdProvider) list(ctx context.Context) (int64, error) {
	resp, err := p.client.Get(ctx, p.prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	members := make(map[string]*pcluster.Member, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if m, ok := etcdMember(kv.Key, kv.Value); ok {
			members[string(kv.Key)] = m
		}
	}
	p.members = members
	p.publish()
	return resp.Header.GetRevision(), nil
}

// watch follows the registrations from revision rev on; when etcd fails
// the watch (a compaction, a lost leader, …) it lists them again and goes
// on from there, until Shutdown.
func (p *etcdProvider) watch(rev int64) {
	defer p.wg.Done()
	for p.ctx.Err() == nil {
		if rev == 0 {
			ctx, cancel := context.WithTimeout(p.ctx, etcdCallTimeout)
			r, err := p.list(ctx)
			cancel()
			if err != nil {
				p.logger().Debug("ringactor/cluster: listing the etcd members failed; retrying", slog.Any("error", err))
				select {
				case <-p.ctx.Done():
				case <-time.After(etcdRetry):
				}
				continue
			}
			rev = r
		}
		ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(p.ctx))
		for resp := range p.client.Watch(ctx, p.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
			if err := resp.Err(); err != nil {
				p.logger().Debug("ringactor/cluster: the etcd watch failed; listing the members again", slog.Any("error", err))
				break
			}
			for _, ev := range resp.Events {
				key := string(ev.Kv.Key)
				m, ok := etcdMember(ev.Kv.Key, ev.Kv.Value)
				if ev.Type == clientv3.EventTypePut && ok {
					p.members[key] = m
				} else {
					delete(p.members, key)
				}
				rev = max(rev, ev.Kv.ModRevision)
			}
			if len(resp.Events) > 0 {
				p.publish()
			}
		}
		cancel()
		rev = 0
	}
}

// etcdMember reads the registration under key.
func etcdMember(key, value []byte) (*pcluster.Member, bool) {
	var n etcdNode
	if err := json.Unmarshal(value, &n); err != nil || !n.Alive || n.Port <= 0 {
		return nil, false
	}
	if n.ID == "" {
		n.ID = path.Base(string(key))
	}
	host := n.Host
	if host == "" {
		host = n.Address
	}
	kinds := n.Kinds
	if kinds == nil {
		kinds = []string{}
	}
	return &pcluster.Member{Id: n.ID, Host: host, Port: int32(n.Port), Kinds: kinds}, true
}

// publish gives the cluster the registrations the watch knows.
func (p *etcdProvider) publish() {
	members := make([]*pcluster.Member, 0, len(p.members))
	for _, m := range p.members {
		members = append(members, m)
	}
	slices.SortFunc(members, func(a, b *pcluster.Member) int { return strings.Compare(a.Id, b.Id) })
	p.c.MemberList.UpdateClusterTopology(members)
}

// Shutdown deregisters the member (revokes its lease, within
// etcdShutdownTimeout: when etcd does not answer in time, the registration
// expires with its lease), ends the watch and the keep-alive, and closes
// the etcd client.
func (p *etcdProvider) Shutdown(bool) error {
	p.shutOnce.Do(func() {
		if p.fencing.Load() {
			close(p.stopFence)
			<-p.fenceDone
			if id := clientv3.LeaseID(p.lease.Load()); id != 0 {
				ctx, cancel := context.WithTimeout(context.Background(), etcdShutdownTimeout)
				_, err := p.client.Revoke(ctx, id)
				cancel()
				if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
					p.shutErr = fmt.Errorf("ringactor/cluster: leaving etcd: %w", err)
				}
			}
		}
		p.cancel()
		p.wg.Wait()
		p.close()
	})
	return p.shutErr
}

// close closes the etcd client once.
func (p *etcdProvider) close() { p.closeOnce.Do(func() { _ = p.client.Close() }) }
