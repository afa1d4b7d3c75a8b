// Package bench measures ringactor's message paths against baselines taken
// in the same process: a raw Proto.Actor request to an echo actor and a Go
// channel ping-pong; and its compute path (Runtime.Execute) against direct
// calls of the same Go code, a Go copy and gonum's Gemm. The ringactor
// command's bench subcommand prints them.
package bench

import (
	"context"
	"runtime"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/messages"
)

// Ping is the benchmark's message and reply.
type Ping struct{ N int64 }

func init() {
	if _, err := messages.Register[Ping]("ringactor.bench.ping"); err != nil {
		panic(err)
	}
}

// Config sizes a run. The compute fields left zero take the Default*
// constants of compute.go.
type Config struct {
	RTTSamples     int // sequential round trips per measurement
	PipelinedMsgs  int // messages per pipelined measurement
	InFlight       int // messages in flight in the pipelined measurement
	WarmupRequests int // untimed round trips (and tiny Executes) first

	ExecSamples        int // sequential tiny Executes (and direct calls) per measurement
	ElementwiseLen     int // float32 elements of the add-vs-copy comparison (10M)
	ElementwiseSamples int // timed adds and copies, of which the medians count
	MatMulN            int // order of the matmul-vs-Gemm float64 matrices (1024)
	MatMulSamples      int // timed matmuls and Gemms, of which the medians count
	StreamRows         int // generated rows of the stream measure (0: DefaultStreamRows)
}

// Quick finishes in under a minute on two cores; Full takes longer for
// steadier numbers.
var (
	Quick = Config{RTTSamples: 50_000, PipelinedMsgs: 500_000, InFlight: 256, WarmupRequests: 5_000,
		ExecSamples: 20_000, ElementwiseLen: DefaultElementwiseLen, ElementwiseSamples: 5, MatMulN: DefaultMatMulN, MatMulSamples: 3, StreamRows: 300_000}
	Full = Config{RTTSamples: 300_000, PipelinedMsgs: 3_000_000, InFlight: 256, WarmupRequests: 20_000,
		ExecSamples: 200_000, ElementwiseLen: DefaultElementwiseLen, ElementwiseSamples: 5, MatMulN: DefaultMatMulN, MatMulSamples: 3, StreamRows: DefaultStreamRows}
)

// Result is one run's numbers; the JSON names are the contract of
// `ringactor bench --json`.
type Result struct {
	GoVersion             string  `json:"go_version"`
	GOMAXPROCS            int     `json:"gomaxprocs"`
	RingRTTP50            int64   `json:"ring_rtt_p50_ns"`
	RingRTTP99            int64   `json:"ring_rtt_p99_ns"`
	ProtoActorRTTP50      int64   `json:"protoactor_rtt_p50_ns"`
	ProtoActorRTTP99      int64   `json:"protoactor_rtt_p99_ns"`
	ChanRTTP50            int64   `json:"chan_rtt_p50_ns"`
	ChanRTTP99            int64   `json:"chan_rtt_p99_ns"`
	RingPipelinedMsgsPerS float64 `json:"ring_pipelined_msgs_per_s"`
	ChanPipelinedMsgsPerS float64 `json:"chan_pipelined_msgs_per_s"`
	RingAllocsPerRequest  float64 `json:"ring_allocs_per_request"`
	RTTRatioRingVsActor   float64 `json:"rtt_p50_ratio_ring_vs_protoactor"`
	// The same round trip through a kernel of a runtime with telemetry off
	// (no latency histograms), measured interleaved with the others (see
	// interleave.go), the ratio on / off, and the ring's p50 over the Go
	// channel ping-pong's. These two ratios are paired: the median over
	// the blocks of round trips of the ratio of the two p50s in the same
	// block, so they need not equal the ratio of the pooled p50s.
	RingRTTOffP50          int64   `json:"ring_rtt_telemetry_off_p50_ns"`
	RingRTTOffP99          int64   `json:"ring_rtt_telemetry_off_p99_ns"`
	RTTRatioTelemetryOn    float64 `json:"rtt_p50_ratio_telemetry_on_vs_off"`
	RTTRatioRingVsChan     float64 `json:"rtt_p50_ratio_ring_vs_chan"`
	PipelinedRatioRingChan float64 `json:"pipelined_ratio_ring_vs_chan"`
	// The tails of the same round trips: the ring's p99 over its own p50,
	// the Go channel ping-pong's, and the ring's p99 over the channel's.
	RTTTailRing      float64 `json:"rtt_p99_over_p50_ring"`
	RTTTailChan      float64 `json:"rtt_p99_over_p50_chan"`
	RTTP99RingVsChan float64 `json:"rtt_p99_ratio_ring_vs_chan"`

	// The compute path (see Compute). Times are nanoseconds; the 10M and
	// 1024 of the names are the default sizes, which elementwise_len and
	// matmul_n report.
	ExecuteAddTinyP50      int64   `json:"execute_add_tiny_p50_ns"`
	DirectAddTinyP50       int64   `json:"direct_add_tiny_p50_ns"`
	ExecuteOverhead        int64   `json:"execute_overhead_ns"`
	ExecutionsPerS         float64 `json:"executions_per_s"`
	ExecuteAllocsPerCall   float64 `json:"execute_allocs_per_call"`
	ElementwiseLen         int     `json:"elementwise_len"`
	ExecuteAdd10M          int64   `json:"execute_add_10m_f32_ns"`
	Copy10M                int64   `json:"copy_10m_f32_ns"`
	ElementwiseRatioVsCopy float64 `json:"elementwise_10m_f32_ratio_vs_copy"`
	MatMulN                int     `json:"matmul_n"`
	ExecuteMatMul1024      int64   `json:"execute_matmul_1024_f64_ns"`
	GonumGemm1024          int64   `json:"gonum_gemm_1024_f64_ns"`
	MatMulRatioVsGonum     float64 `json:"matmul_1024_f64_ratio_vs_gonum"`

	// The stream measure (see Stream): the sensor pipeline as a stream
	// graph against a goroutine-per-stage channel pipeline, rows/s (medians
	// of the runs); the ratio is the median of the paired runs' ratios
	// (above 1: the graph faster).
	StreamRows         int     `json:"stream_rows"`
	StreamRowsPerS     float64 `json:"stream_rows_per_s"`
	ChanStreamRowsPerS float64 `json:"chan_stream_rows_per_s"`
	StreamRatioVsChan  float64 `json:"stream_ratio_vs_chan"`
	// CPU time (user and system, the whole process) per row of the same
	// runs, medians; the ratio is the median of the pairs' graph over
	// channels (below 1: the graph cheaper). Zero where the platform does
	// not report it.
	StreamCPUNsPerRow     float64 `json:"stream_cpu_ns_per_row"`
	ChanStreamCPUNsPerRow float64 `json:"chan_stream_cpu_ns_per_row"`
	StreamCPURatioVsChan  float64 `json:"stream_cpu_ratio_vs_chan"`

	// The cluster measures (RunCluster), when they were taken.
	*ClusterResult
	*DeviceResult
}

// Run measures everything in one process.
func Run(ctx context.Context, cfg Config) (Result, error) {
	res := Result{GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger())) // telemetry at its default (on)
	if err != nil {
		return res, err
	}
	defer func() { _ = rt.Close(context.Background()) }()
	echo := actors.NewStatelessKernel("bench.echo", func(_ context.Context, p Ping) (Ping, error) { return p, nil },
		actors.WithCapacity(1024))
	k, err := actors.Launch(ctx, rt, echo)
	if err != nil {
		return res, err
	}
	if err := k.Activate(ctx); err != nil {
		return res, err
	}

	if err := messagePaths(ctx, rt, k, cfg, &res); err != nil {
		return res, err
	}
	res.RingAllocsPerRequest = allocsPerRequest(ctx, k, 10_000)
	if err := Compute(ctx, rt, cfg, &res); err != nil {
		return res, err
	}
	if err := Stream(ctx, cfg.StreamRows, &res); err != nil {
		return res, err
	}
	return res, k.Terminate(ctx)
}

// allocsPerRequest counts heap allocations per sequential Request.
func allocsPerRequest(ctx context.Context, k *actors.Kernel[Ping, Ping], n int) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		_, _ = k.Request(ctx, Ping{N: int64(i)})
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n)
}
