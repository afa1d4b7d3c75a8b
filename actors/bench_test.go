package actors

import (
	"context"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

func benchKernel(b *testing.B) (*Runtime, *Kernel[num, total]) {
	rt := newTestRuntime(b)
	k := mustLaunch(b, rt, NewStatelessKernel("echo", echoNum), true)
	return rt, k
}

// BenchmarkRequest is one sequential typed round trip through the kernel.
func BenchmarkRequest(b *testing.B) {
	_, k := benchKernel(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := k.Request(ctx, num{V: i}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRequestByID adds the registry lookup and type check of the
// id-based API.
func BenchmarkRequestByID(b *testing.B) {
	rt, _ := benchKernel(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Request[total](ctx, rt, "echo", num{V: i}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRequestParallel keeps GOMAXPROCS×4 requesters busy on one kernel.
func BenchmarkRequestParallel(b *testing.B) {
	_, k := benchKernel(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := k.Request(ctx, num{V: 1}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSendReceive streams messages through the kernel.
func BenchmarkSendReceive(b *testing.B) {
	_, k := benchKernel(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < b.N; i++ {
			if _, err := k.Receive(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	}()
	for i := 0; i < b.N; i++ {
		if _, err := k.Send(ctx, num{V: i}); err != nil {
			b.Fatal(err)
		}
	}
	<-done
}

type echoNumActor struct{}

func (echoNumActor) Receive(c actor.Context) {
	if n, ok := c.Message().(num); ok {
		c.Respond(total{Sum: n.V})
	}
}

// BenchmarkProtoActorRequest is the baseline: a bare Proto.Actor
// RequestFuture round trip to an echo actor in the same system.
func BenchmarkProtoActorRequest(b *testing.B) {
	rt, _ := benchKernel(b)
	root := rt.ActorSystem().Root
	pid := root.Spawn(actor.PropsFromProducer(func() actor.Actor { return echoNumActor{} }))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := root.RequestFuture(pid, num{V: i}, time.Second).Result(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_ = root.StopFuture(pid).Wait()
}

// BenchmarkChanPingPong is the floor: two goroutines and two channels.
func BenchmarkChanPingPong(b *testing.B) {
	req, resp := make(chan num), make(chan total)
	go func() {
		for n := range req {
			resp <- total{Sum: n.V}
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req <- num{V: i}
		<-resp
	}
	b.StopTimer()
	close(req)
}

// BenchmarkRequestTelemetryOn is BenchmarkRequest (telemetry off) with the
// runtime's telemetry on: the loop bumps the latency histograms.
func BenchmarkRequestTelemetryOn(b *testing.B) {
	rt := newTestRuntime(b, WithTelemetry(true))
	k := mustLaunch(b, rt, NewStatelessKernel("echo", echoNum), true)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := k.Request(ctx, num{V: i}); err != nil {
			b.Fatal(err)
		}
	}
}
