package bench

import (
	"context"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
)

// pipelinedBenchInFlight is the requesters the pipelined benchmarks keep
// busy, as the bench's configurations do.
const pipelinedBenchInFlight = 256

// benchEcho launches the bench's echo kernel in a runtime with telemetry at
// its default (on), as Run does.
func benchEcho(b *testing.B) *actors.Kernel[Ping, Ping] {
	ctx := context.Background()
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()), actors.WithName("bench-pipelined"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close(context.Background()) })
	k, err := actors.Launch(ctx, rt, actors.NewStatelessKernel("bench.echo", func(_ context.Context, p Ping) (Ping, error) { return p, nil },
		actors.WithCapacity(1024)))
	if err == nil {
		err = k.Activate(ctx)
	}
	if err != nil {
		b.Fatal(err)
	}
	return k
}

// BenchmarkRingPipelined is the bench's pipelined measure through the ring
// kernel: 256 requesters, one cancellable context.
func BenchmarkRingPipelined(b *testing.B) {
	k := benchEcho(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	b.ResetTimer()
	if _, _, err := ringPipelined(ctx, k, max(b.N, pipelinedBenchInFlight), pipelinedBenchInFlight); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkChanPipelined is BenchmarkRingPipelined's baseline, the bench's
// Go channel server.
func BenchmarkChanPipelined(b *testing.B) {
	b.ReportAllocs()
	b.ResetTimer()
	chanPipelined(max(b.N, pipelinedBenchInFlight), pipelinedBenchInFlight)
}

// BenchmarkPipelinedInterleaved runs the bench's interleaved pipelined
// measure (ring kernel and Go channel server in alternating rounds) with
// b.N messages each and reports the ring/channel rate ratio, and each one's
// process CPU time per message.
func BenchmarkPipelinedInterleaved(b *testing.B) {
	k := benchEcho(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cpu [2]time.Duration
	timed := func(i int, m pipelinedMeasure) pipelinedMeasure {
		return func(total int) (int, time.Duration, error) {
			c := processCPU()
			n, el, err := m(total)
			cpu[i] += processCPU() - c
			return n, el, err
		}
	}
	b.ResetTimer()
	total := max(b.N, pipelinedRounds*pipelinedBenchInFlight)
	rates, err := interleavePipelined(total,
		timed(0, func(total int) (int, time.Duration, error) {
			return ringPipelined(ctx, k, total, pipelinedBenchInFlight)
		}),
		timed(1, func(total int) (int, time.Duration, error) {
			n, el := chanPipelined(total, pipelinedBenchInFlight)
			return n, el, nil
		}))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(rates[0], "ring-msg/s")
	b.ReportMetric(rates[1], "chan-msg/s")
	b.ReportMetric(rates[0]/rates[1], "ring/chan")
	b.ReportMetric(float64(cpu[0])/float64(total), "ring-cpu-ns/msg")
	b.ReportMetric(float64(cpu[1])/float64(total), "chan-cpu-ns/msg")
}
