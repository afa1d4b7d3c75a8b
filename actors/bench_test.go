package actors

import (
	"context"
	"sync"
	"testing"

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

// BenchmarkRequestCancellable is BenchmarkRequest with a cancellable
// context, as `ringactor bench` has.
func BenchmarkRequestCancellable(b *testing.B) {
	_, k := benchKernel(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
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
		if _, err := root.RequestFuture(pid, num{V: i}, hangWait(b)).Result(); err != nil {
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

// pipelinedInFlight is how many requesters the pipelined benchmarks keep
// busy, as `ringactor bench` does.
const pipelinedInFlight = 256

// runPipelined splits b.N calls of do over pipelinedInFlight goroutines,
// each calling do again as soon as its previous call returns.
func runPipelined(b *testing.B, do func() error) {
	per := max(b.N/pipelinedInFlight, 1)
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for range pipelinedInFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				if err := do(); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkRequestPipelined keeps 256 requesters in flight through one
// kernel, all with one cancellable context (as `ringactor bench` does), or
// with context.Background.
func BenchmarkRequestPipelined(b *testing.B) {
	for _, tc := range []struct {
		name string
		ctx  func(b *testing.B) context.Context
	}{
		{"cancellable", func(b *testing.B) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			b.Cleanup(cancel)
			return ctx
		}},
		{"background", func(*testing.B) context.Context { return context.Background() }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			_, k := benchKernel(b)
			ctx := tc.ctx(b)
			runPipelined(b, func() error {
				_, err := k.Request(ctx, num{V: 1})
				return err
			})
		})
	}
}

// BenchmarkChanPipelined is BenchmarkRequestPipelined's baseline: the same
// requesters, each with its own reply channel, served by one goroutine over
// a buffered channel.
func BenchmarkChanPipelined(b *testing.B) {
	type req struct {
		n     num
		reply chan total
	}
	in := make(chan req, 1024)
	go func() {
		for r := range in {
			r.reply <- total{Sum: r.n.V}
		}
	}()
	defer close(in)
	replies := sync.Pool{New: func() any { return make(chan total, 1) }}
	runPipelined(b, func() error {
		reply := replies.Get().(chan total)
		in <- req{n: num{V: 1}, reply: reply}
		<-reply
		replies.Put(reply)
		return nil
	})
}
