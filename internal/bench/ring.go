package bench

// The message-path measures: ring kernel round trips and pipelined
// requests against Proto.Actor and Go channel baselines, interleaved as
// interleave.go describes.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/actors"
)

// messagePaths measures the round trips and pipelined rates of res through
// k (telemetry on), an echo kernel of a runtime with telemetry off,
// Proto.Actor and Go channels, interleaved.
func messagePaths(ctx context.Context, rt *actors.Runtime, k *actors.Kernel[Ping, Ping], cfg Config, res *Result) error {
	off, closeOff, err := echoTelemetryOff(ctx)
	if err != nil {
		return err
	}
	defer closeOff()
	system := rt.ActorSystem()
	pid := system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return echoActor{} }))
	defer func() { _ = system.Root.StopFuture(pid).Wait() }()
	pp := startChanPingPong()
	defer pp.close()

	s, err := interleaveRTT(cfg.WarmupRequests, cfg.RTTSamples,
		[]rttMeasure{
			func(out []time.Duration) error { return ringTimes(ctx, k, out) },
			func(out []time.Duration) error { return ringTimes(ctx, off, out) },
			func(out []time.Duration) error { pp.times(out); return nil },
		},
		func(out []time.Duration) error { protoActorTimes(system, pid, out); return nil },
	)
	if err != nil {
		return err
	}
	res.RingRTTP50, res.RingRTTP99 = percentile(s[0], 50), percentile(s[0], 99)
	res.RingRTTOffP50, res.RingRTTOffP99 = percentile(s[1], 50), percentile(s[1], 99)
	res.ChanRTTP50, res.ChanRTTP99 = percentile(s[2], 50), percentile(s[2], 99)
	res.ProtoActorRTTP50, res.ProtoActorRTTP99 = percentile(s[3], 50), percentile(s[3], 99)
	// The ring's p50 against its allocation-free baselines block by block
	// (interleave.go says why); against Proto.Actor, timed apart, pooled.
	res.RTTRatioTelemetryOn = pairedP50Ratio(s[0], s[1])
	res.RTTRatioRingVsChan = pairedP50Ratio(s[0], s[2])
	if res.ProtoActorRTTP50 > 0 {
		res.RTTRatioRingVsActor = float64(res.RingRTTP50) / float64(res.ProtoActorRTTP50)
	}
	if res.ChanRTTP50 > 0 {
		res.RTTTailChan = float64(res.ChanRTTP99) / float64(res.ChanRTTP50)
	}
	if res.RingRTTP50 > 0 {
		res.RTTTailRing = float64(res.RingRTTP99) / float64(res.RingRTTP50)
	}
	if res.ChanRTTP99 > 0 {
		res.RTTP99RingVsChan = float64(res.RingRTTP99) / float64(res.ChanRTTP99)
	}

	rates, err := interleavePipelined(cfg.PipelinedMsgs,
		func(total int) (int, time.Duration, error) { return ringPipelined(ctx, k, total, cfg.InFlight) },
		func(total int) (int, time.Duration, error) {
			n, el := chanPipelined(total, cfg.InFlight)
			return n, el, nil
		},
	)
	if err != nil {
		return err
	}
	res.RingPipelinedMsgsPerS, res.ChanPipelinedMsgsPerS = rates[0], rates[1]
	if res.ChanPipelinedMsgsPerS > 0 {
		res.PipelinedRatioRingChan = res.RingPipelinedMsgsPerS / res.ChanPipelinedMsgsPerS
	}
	return nil
}

// echoTelemetryOff launches an echo kernel in a runtime with telemetry off;
// closing it closes the runtime.
func echoTelemetryOff(ctx context.Context) (*actors.Kernel[Ping, Ping], func(), error) {
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false), actors.WithName("ringactor-bench-off"))
	if err != nil {
		return nil, nil, err
	}
	closeRT := func() { _ = rt.Close(context.Background()) }
	k, err := actors.Launch(ctx, rt, actors.NewStatelessKernel("bench.echo.off", func(_ context.Context, p Ping) (Ping, error) { return p, nil },
		actors.WithCapacity(1024)))
	if err == nil {
		err = k.Activate(ctx)
	}
	if err != nil {
		closeRT()
		return nil, nil, err
	}
	return k, closeRT, nil
}

func percentile(samples []time.Duration, p int) int64 {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	i := (len(s) - 1) * p / 100
	return int64(s[i])
}

// RingRTT times sequential typed Requests through the kernel.
func RingRTT(ctx context.Context, k *actors.Kernel[Ping, Ping], warmup, n int) ([]time.Duration, error) {
	for i := 0; i < warmup; i++ {
		if _, err := k.Request(ctx, Ping{N: int64(i)}); err != nil {
			return nil, err
		}
	}
	out := make([]time.Duration, n)
	if err := ringTimes(ctx, k, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ringTimes times len(out) sequential typed Requests through the kernel
// into out.
func ringTimes(ctx context.Context, k *actors.Kernel[Ping, Ping], out []time.Duration) error {
	for i := range out {
		start := time.Now()
		r, err := k.Request(ctx, Ping{N: int64(i)})
		out[i] = time.Since(start)
		if err != nil {
			return err
		}
		if r.N != int64(i) {
			return fmt.Errorf("bench: reply %d to request %d", r.N, i)
		}
	}
	return nil
}

// echoActor answers every Ping with itself.
type echoActor struct{}

func (echoActor) Receive(c actor.Context) {
	if p, ok := c.Message().(Ping); ok {
		c.Respond(p)
	}
}

// ProtoActorRTT times sequential RequestFuture round trips to a bare echo actor.
func ProtoActorRTT(system *actor.ActorSystem, warmup, n int) []time.Duration {
	pid := system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return echoActor{} }))
	defer func() { _ = system.Root.StopFuture(pid).Wait() }()
	protoActorTimes(system, pid, make([]time.Duration, warmup))
	out := make([]time.Duration, n)
	protoActorTimes(system, pid, out)
	return out
}

// protoActorTimes times len(out) sequential RequestFuture round trips to
// pid into out.
func protoActorTimes(system *actor.ActorSystem, pid *actor.PID, out []time.Duration) {
	for i := range out {
		start := time.Now()
		_, _ = system.Root.RequestFuture(pid, Ping{N: int64(i)}, 10*time.Second).Result()
		out[i] = time.Since(start)
	}
}

// chanPingPong is a goroutine answering Pings over unbuffered channels.
type chanPingPong struct{ req, resp chan Ping }

func startChanPingPong() chanPingPong {
	pp := chanPingPong{req: make(chan Ping), resp: make(chan Ping)}
	go func() {
		for p := range pp.req {
			pp.resp <- p
		}
	}()
	return pp
}

// times times len(out) round trips into out.
func (pp chanPingPong) times(out []time.Duration) {
	for i := range out {
		start := time.Now()
		pp.req <- Ping{N: int64(i)}
		<-pp.resp
		out[i] = time.Since(start)
	}
}

func (pp chanPingPong) close() { close(pp.req) }

// ChanRTT times a ping-pong between two goroutines over unbuffered channels.
func ChanRTT(warmup, n int) []time.Duration {
	pp := startChanPingPong()
	defer pp.close()
	pp.times(make([]time.Duration, warmup))
	out := make([]time.Duration, n)
	pp.times(out)
	return out
}

// RingPipelined keeps inFlight requests outstanding through one kernel
// (inFlight requester goroutines, each sending its next request when the
// previous reply arrives) and returns messages per second.
func RingPipelined(ctx context.Context, k *actors.Kernel[Ping, Ping], total, inFlight int) (float64, error) {
	n, el, err := ringPipelined(ctx, k, total, inFlight)
	if err != nil {
		return 0, err
	}
	return float64(n) / el.Seconds(), nil
}

// ringPipelined is RingPipelined returning the messages sent (total rounded
// down to a multiple of inFlight) and the time they took.
func ringPipelined(ctx context.Context, k *actors.Kernel[Ping, Ping], total, inFlight int) (int, time.Duration, error) {
	per := max(total/inFlight, 1)
	var wg sync.WaitGroup
	errs := make(chan error, inFlight)
	start := time.Now()
	for g := 0; g < inFlight; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if _, err := k.Request(ctx, Ping{N: int64(i)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, err
	}
	return per * inFlight, el, nil
}

// ChanPipelined is RingPipelined's baseline: the same requesters, each with
// its own reply channel, served by one goroutine over a buffered channel.
func ChanPipelined(total, inFlight int) float64 {
	n, el := chanPipelined(total, inFlight)
	return float64(n) / el.Seconds()
}

// chanPipelined is ChanPipelined returning the messages sent and the time
// they took.
func chanPipelined(total, inFlight int) (int, time.Duration) {
	type req struct {
		p     Ping
		reply chan Ping
	}
	in := make(chan req, 1024)
	go func() {
		for r := range in {
			r.reply <- r.p
		}
	}()
	defer close(in)
	per := max(total/inFlight, 1)
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < inFlight; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reply := make(chan Ping, 1)
			for i := 0; i < per; i++ {
				in <- req{p: Ping{N: int64(i)}, reply: reply}
				<-reply
			}
		}()
	}
	wg.Wait()
	return per * inFlight, time.Since(start)
}
