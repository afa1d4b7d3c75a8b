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
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/wire"
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

// ClusterPing is the message of the cluster benchmark. It encodes itself
// (msgpack.CustomEncoder and CustomDecoder, as the array [Seq, Data]), as a
// user's hot message type can, rather than through msgpack's reflection.
type ClusterPing struct {
	Seq  int64
	Data []byte
}

// EncodeMsgpack implements msgpack.CustomEncoder.
func (p ClusterPing) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(2); err != nil {
		return err
	}
	if err := enc.EncodeInt64(p.Seq); err != nil {
		return err
	}
	return enc.EncodeBytes(p.Data)
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (p *ClusterPing) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 2 {
		return fmt.Errorf("bench: a ClusterPing is an array of 2 values, got %d", n)
	}
	if p.Seq, err = dec.DecodeInt64(); err != nil {
		return err
	}
	p.Data, err = dec.DecodeBytes()
	return err
}

// ClusterStats is what the echo grain answers a ClusterStats request with:
// its process's heap allocations and CPU time so far, so that the
// benchmark measures the hosting member's cost per request too.
type ClusterStats struct {
	Mallocs  uint64
	CPUNanos int64
}

var clusterStatsID = messages.MustRegister[ClusterStats]("ringactor.bench.ClusterStats")

func init() { messages.MustRegister[ClusterPing]("ringactor.bench.ClusterPing") }

// hostStats returns the wire form of this process's ClusterStats.
func hostStats() any {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w, err := wire.PackOf(ClusterStats{Mallocs: ms.Mallocs, CPUNanos: int64(processCPU())}, messages.Header{ID: messages.NextID()}, 0)
	if err != nil {
		return wire.NewError(err, 0)
	}
	return w
}

// ClusterKinds returns the kinds a member hosts for the cluster benchmark:
// the ringactor ping kind, and the plain Proto.Actor echo kind to pass to
// cluster.WithProtoKinds (which answers a ClusterStats request with the
// process's figures).
func ClusterKinds() ([]*cluster.Kind, *pcluster.Kind) {
	echo := pcluster.NewKind(ProtoEchoKind, actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*wire.WireEnvelope); ok {
			if m.TypeId == uint32(clusterStatsID) {
				c.Respond(hostStats())
				return
			}
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
	// requesting member (the process running the benchmark) and on the
	// hosting member.
	ClusterClientAllocs           float64 `json:"cluster_client_allocs_per_request"`
	ProtoActorClusterClientAllocs float64 `json:"protoactor_cluster_client_allocs_per_request"`
	ClusterServerAllocs           float64 `json:"cluster_server_allocs_per_request"`
	ProtoActorClusterServerAllocs float64 `json:"protoactor_cluster_server_allocs_per_request"`
	// CPU time (user and system) per request of the throughput runs, of
	// the requesting and of the hosting member's process.
	ClusterClientCPU           float64 `json:"cluster_client_cpu_ns_per_request"`
	ProtoActorClusterClientCPU float64 `json:"protoactor_cluster_client_cpu_ns_per_request"`
	ClusterServerCPU           float64 `json:"cluster_server_cpu_ns_per_request"`
	ProtoActorClusterServerCPU float64 `json:"protoactor_cluster_server_cpu_ns_per_request"`
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
	raw, err := wire.Pack(env, messages.MaxPayloadSize)
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
			if _, ok := r.(*wire.WireEnvelope); !ok {
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
	tt, pt := rounds{stats: hostStatsOf(pc)}, rounds{stats: hostStatsOf(pc)}
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
	res.ClusterServerAllocs, res.ClusterClientCPU, res.ClusterServerCPU = tt.perRequest()
	res.ProtoActorClusterServerAllocs, res.ProtoActorClusterClientCPU, res.ProtoActorClusterServerCPU = pt.perRequest()
	return res, nil
}

// hostStatsOf returns the function that asks the hosting member, through
// the echo kind, for its ClusterStats.
func hostStatsOf(pc *pcluster.Cluster) func() (ClusterStats, error) {
	return func() (ClusterStats, error) {
		w, err := wire.PackOf(ClusterStats{}, messages.Header{ID: messages.NextID()}, 0)
		if err != nil {
			return ClusterStats{}, err
		}
		r, err := pc.Request("stats", ProtoEchoKind, w)
		if err != nil {
			return ClusterStats{}, fmt.Errorf("host stats: %w", err)
		}
		rw, ok := r.(*wire.WireEnvelope)
		if !ok {
			return ClusterStats{}, fmt.Errorf("host stats: the echo kind replied %T", r)
		}
		_, s, err := wire.UnpackAs[ClusterStats](rw, 0)
		return s, err
	}
}

// throughputRounds is how many alternating rounds the throughput
// measurement of each path is split into.
const throughputRounds = 4

// rounds sums the throughput rounds of one path.
type rounds struct {
	stats        func() (ClusterStats, error) // the hosting member's
	msgs         int
	elapsed      time.Duration
	allocs       uint64
	cpu          time.Duration
	serverAllocs uint64
	serverCPU    time.Duration
}

// run runs one round of cfg.Messages requests and adds it up.
func (r *rounds) run(ctx context.Context, cfg ClusterConfig, f func(context.Context, string) error) error {
	before, err := r.stats()
	if err != nil {
		return err
	}
	cpu := processCPU()
	elapsed, allocs, err := throughput(ctx, cfg, f)
	if err != nil {
		return err
	}
	r.cpu += processCPU() - cpu
	after, err := r.stats()
	if err != nil {
		return err
	}
	r.msgs += cfg.Messages
	r.elapsed += elapsed
	r.allocs += allocs
	r.serverAllocs += after.Mallocs - before.Mallocs
	r.serverCPU += time.Duration(after.CPUNanos - before.CPUNanos)
	return nil
}

// perRequest returns the hosting member's heap allocations, and this
// process's and the hosting member's CPU time in nanoseconds, per request
// over the rounds.
func (r *rounds) perRequest() (serverAllocs, clientCPU, serverCPU float64) {
	if r.msgs == 0 {
		return 0, 0, 0
	}
	n := float64(r.msgs)
	return float64(r.serverAllocs) / n, float64(r.cpu) / n, float64(r.serverCPU) / n
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
