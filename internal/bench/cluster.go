package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/messages"
)

// Names of the kinds the remote member of the cluster benchmark hosts.
const (
	// PingKind is a ringactor kind whose ring kernel echoes a ClusterPing.
	PingKind = "bench-ping"
	// ProtoEchoKind is a plain Proto.Actor grain that responds with the
	// message it receives: the baseline.
	ProtoEchoKind = "bench-proto-echo"
)

// ClusterPing is the message of the cluster benchmark.
type ClusterPing struct {
	Seq  int64
	Data []byte
}

func init() { messages.MustRegister[ClusterPing]("ringactor.bench.ClusterPing") }

// ClusterKinds returns the kinds a member hosts for the cluster benchmark:
// the ringactor ping kind, and the plain Proto.Actor echo kind to pass to
// cluster.WithProtoKinds.
func ClusterKinds() ([]*cluster.Kind, *pcluster.Kind) {
	echo := pcluster.NewKind(ProtoEchoKind, actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*messages.WireEnvelope); ok {
			c.Respond(m)
		}
	}))
	return []*cluster.Kind{pingKind().Kind()}, echo
}

// pingKind declares the typed ping kind: its ring kernel echoes the ping.
func pingKind() *cluster.KindOf[ClusterPing, ClusterPing] {
	return cluster.Define(PingKind, func() actors.Handler[ClusterPing, ClusterPing] {
		return func(_ context.Context, p ClusterPing) (ClusterPing, error) { return p, nil }
	})
}

// ClusterConfig sizes the cluster benchmark.
type ClusterConfig struct {
	RTTSamples int // sequential requests measured, each way
	Messages   int // requests of the throughput run, each way
	InFlight   int // concurrent requesters of the throughput run
	Identities int // identities the throughput run spreads over
	PayloadLen int // bytes of ClusterPing.Data
}

// QuickCluster and FullCluster are the configurations of `ringactor bench
// --cluster` with and without -quick.
var (
	QuickCluster = ClusterConfig{RTTSamples: 2000, Messages: 40000, InFlight: 64, Identities: 8, PayloadLen: 64}
	FullCluster  = ClusterConfig{RTTSamples: 10000, Messages: 200000, InFlight: 64, Identities: 8, PayloadLen: 64}
)

// ClusterResult is what the cluster benchmark measures: typed Requests to a
// ring-kernel identity on another member process, against raw Proto.Actor
// cluster requests to a plain echo grain on the same member.
type ClusterResult struct {
	ClusterRTTP50           int64   `json:"cluster_rtt_p50_ns"`
	ClusterRTTP99           int64   `json:"cluster_rtt_p99_ns"`
	ProtoActorClusterRTTP50 int64   `json:"protoactor_cluster_rtt_p50_ns"`
	ProtoActorClusterRTTP99 int64   `json:"protoactor_cluster_rtt_p99_ns"`
	ClusterRTTRatio         float64 `json:"cluster_rtt_p50_ratio_vs_protoactor"`
	ClusterMsgsPerS         float64 `json:"cluster_msgs_per_s"`
	ProtoActorClusterMsgsPS float64 `json:"protoactor_cluster_msgs_per_s"`
	ClusterInFlight         int     `json:"cluster_in_flight"`
	// Heap allocations per request of the throughput runs on the
	// requesting member (the process running the benchmark; the hosting
	// member's are not counted).
	ClusterClientAllocs           float64 `json:"cluster_client_allocs_per_request"`
	ProtoActorClusterClientAllocs float64 `json:"protoactor_cluster_client_allocs_per_request"`
}

// RunCluster measures from m, a member that hosts no benchmark kinds, the
// identities that another member process hosts (see ClusterKinds).
func RunCluster(ctx context.Context, cfg ClusterConfig, m *cluster.Member) (ClusterResult, error) {
	res := ClusterResult{ClusterInFlight: cfg.InFlight}
	ping := ClusterPing{Data: make([]byte, cfg.PayloadLen)}
	// The baseline's message: a wire envelope of the same size as the
	// typed path's.
	env, err := messages.NewEnvelope(ping)
	if err != nil {
		return res, err
	}
	raw, err := messages.ToWire(env, messages.MaxPayloadSize)
	if err != nil {
		return res, err
	}
	pc := m.Cluster()
	kind := pingKind()
	typed := func(ctx context.Context, id string) error {
		_, err := kind.Ref(m, id).Request(ctx, ping)
		return err
	}
	plain := func(_ context.Context, id string) error {
		r, err := pc.Request(id, ProtoEchoKind, raw)
		if err == nil {
			if _, ok := r.(*messages.WireEnvelope); !ok {
				err = fmt.Errorf("proto echo replied %T", r)
			}
		}
		return err
	}
	// Warm up both paths (activation, connections, caches).
	for i := range cfg.Identities {
		id := fmt.Sprintf("id-%d", i)
		for range 50 {
			if err := typed(ctx, id); err != nil {
				return res, fmt.Errorf("warm-up: %w", err)
			}
			if err := plain(ctx, id); err != nil {
				return res, fmt.Errorf("warm-up (Proto.Actor): %w", err)
			}
		}
	}
	// Round trips, interleaved in blocks so that both see the same noise.
	var tRTT, pRTT []time.Duration
	const block = 100
	for len(tRTT) < cfg.RTTSamples {
		for _, run := range []struct {
			f   func(context.Context, string) error
			out *[]time.Duration
		}{{typed, &tRTT}, {plain, &pRTT}} {
			for range block {
				start := time.Now()
				if err := run.f(ctx, "id-0"); err != nil {
					return res, err
				}
				*run.out = append(*run.out, time.Since(start))
			}
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}
	res.ClusterRTTP50, res.ClusterRTTP99 = percentile(tRTT, 50), percentile(tRTT, 99)
	res.ProtoActorClusterRTTP50, res.ProtoActorClusterRTTP99 = percentile(pRTT, 50), percentile(pRTT, 99)
	res.ClusterRTTRatio = float64(res.ClusterRTTP50) / float64(res.ProtoActorClusterRTTP50)
	// Throughput, alternating in rounds so that both see the same noise.
	var tt, pt rounds
	round := cfg
	round.Messages = max(cfg.Messages/throughputRounds, 1)
	for range throughputRounds {
		if err := tt.run(ctx, round, typed); err != nil {
			return res, err
		}
		if err := pt.run(ctx, round, plain); err != nil {
			return res, err
		}
	}
	res.ClusterMsgsPerS, res.ClusterClientAllocs = tt.rate()
	res.ProtoActorClusterMsgsPS, res.ProtoActorClusterClientAllocs = pt.rate()
	return res, nil
}

// throughputRounds is how many alternating rounds the throughput
// measurement of each path is split into.
const throughputRounds = 4

// rounds sums the throughput rounds of one path.
type rounds struct {
	msgs    int
	elapsed time.Duration
	allocs  uint64
}

// run runs one round of cfg.Messages requests and adds it up.
func (r *rounds) run(ctx context.Context, cfg ClusterConfig, f func(context.Context, string) error) error {
	elapsed, allocs, err := throughput(ctx, cfg, f)
	r.msgs += cfg.Messages
	r.elapsed += elapsed
	r.allocs += allocs
	return err
}

// rate returns requests per second and this process's heap allocations per
// request over the rounds.
func (r *rounds) rate() (float64, float64) {
	if r.msgs == 0 || r.elapsed <= 0 {
		return 0, 0
	}
	return float64(r.msgs) / r.elapsed.Seconds(), float64(r.allocs) / float64(r.msgs)
}

// throughput runs cfg.Messages requests with cfg.InFlight requesters over
// cfg.Identities identities and returns how long they took and this
// process's heap allocations meanwhile.
func throughput(ctx context.Context, cfg ClusterConfig, f func(context.Context, string) error) (time.Duration, uint64, error) {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		errMu sync.Mutex
		first error
	)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for w := range cfg.InFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("id-%d", w%cfg.Identities)
			for next.Add(1) <= int64(cfg.Messages) {
				if err := f(ctx, id); err != nil {
					errMu.Lock()
					first = errors.Join(first, err)
					errMu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if first != nil {
		return 0, 0, first
	}
	return elapsed, after.Mallocs - before.Mallocs, nil
}
