package bench

// The message-path measures: ring kernel round trips and pipelined
// requests against Proto.Actor and Go channel baselines.
//
// A shared machine's load drifts while a run lasts, so a measure taken
// seconds after its baseline compares two different machines. The round
// trips and the pipelined rates are therefore interleaved: each measure
// runs in rounds, one chunk of each per round, in alternating order (ABBA),
// and its samples (round trips) or its messages and time (pipelined) are
// pooled over the rounds. Every measure gets the same chunks under the same
// conditions: each round-trip chunk starts after a forced garbage
// collection, so that no measure pays for the collections another's
// garbage (Proto.Actor's requests allocate) would start during it.

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/actors"
)

// Rounds of the interleaved measures.
const (
	rttRounds       = 10
	pipelinedRounds = 6
)

// rttMeasure times n sequential round trips.
type rttMeasure func(n int) ([]time.Duration, error)

// interleaveRTT warms each measure up with warmup untimed round trips, then
// times n round trips of each in rttRounds rounds (the last takes the
// remainder), alternating the order from round to round, and returns each
// measure's samples. Each timed chunk follows a forced collection and a
// tenth of a chunk of untimed round trips.
func interleaveRTT(warmup, n int, ms ...rttMeasure) ([][]time.Duration, error) {
	for _, m := range ms {
		if _, err := m(warmup); err != nil {
			return nil, err
		}
	}
	out := make([][]time.Duration, len(ms))
	for r := range rttRounds {
		chunk := n / rttRounds
		if r == rttRounds-1 {
			chunk = n - chunk*(rttRounds-1)
		}
		for j := range ms {
			i := j
			if r%2 == 1 {
				i = len(ms) - 1 - j
			}
			// A forced collection first, so no measure pays for the
			// garbage of the one before it; then untimed round trips
			// while the collector's background sweep finishes and the
			// measure's memory is back in the cache, so that no measure's
			// tail is the collection's aftermath either.
			runtime.GC()
			if _, err := ms[i](max(chunk/10, 1)); err != nil {
				return nil, err
			}
			s, err := ms[i](chunk)
			if err != nil {
				return nil, err
			}
			out[i] = append(out[i], s...)
		}
	}
	return out, nil
}

// pipelinedMeasure sends total messages with inFlight requesters and
// reports how many it sent and how long that took.
type pipelinedMeasure func(total int) (int, time.Duration, error)

// interleavePipelined runs each measure in pipelinedRounds rounds of
// total/pipelinedRounds messages, alternating the order from round to
// round, and returns each one's messages per second over all its rounds.
func interleavePipelined(total int, ms ...pipelinedMeasure) ([]float64, error) {
	msgs := make([]int, len(ms))
	took := make([]time.Duration, len(ms))
	for r := range pipelinedRounds {
		for j := range ms {
			i := j
			if r%2 == 1 {
				i = len(ms) - 1 - j
			}
			n, el, err := ms[i](max(total/pipelinedRounds, 1))
			if err != nil {
				return nil, err
			}
			msgs[i] += n
			took[i] += el
		}
	}
	rates := make([]float64, len(ms))
	for i := range ms {
		if took[i] > 0 {
			rates[i] = float64(msgs[i]) / took[i].Seconds()
		}
	}
	return rates, nil
}

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
		func(n int) ([]time.Duration, error) { return RingRTT(ctx, k, 0, n) },
		func(n int) ([]time.Duration, error) { return RingRTT(ctx, off, 0, n) },
		func(n int) ([]time.Duration, error) { return protoActorRTT(system, pid, n), nil },
		func(n int) ([]time.Duration, error) { return pp.times(n), nil },
	)
	if err != nil {
		return err
	}
	res.RingRTTP50, res.RingRTTP99 = percentile(s[0], 50), percentile(s[0], 99)
	res.RingRTTOffP50, res.RingRTTOffP99 = percentile(s[1], 50), percentile(s[1], 99)
	res.ProtoActorRTTP50, res.ProtoActorRTTP99 = percentile(s[2], 50), percentile(s[2], 99)
	res.ChanRTTP50, res.ChanRTTP99 = percentile(s[3], 50), percentile(s[3], 99)
	if res.RingRTTOffP50 > 0 {
		res.RTTRatioTelemetryOn = float64(res.RingRTTP50) / float64(res.RingRTTOffP50)
	}
	if res.ProtoActorRTTP50 > 0 {
		res.RTTRatioRingVsActor = float64(res.RingRTTP50) / float64(res.ProtoActorRTTP50)
	}
	if res.ChanRTTP50 > 0 {
		res.RTTRatioRingVsChan = float64(res.RingRTTP50) / float64(res.ChanRTTP50)
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
	for i := range out {
		start := time.Now()
		r, err := k.Request(ctx, Ping{N: int64(i)})
		out[i] = time.Since(start)
		if err != nil {
			return nil, err
		}
		if r.N != int64(i) {
			return nil, fmt.Errorf("bench: reply %d to request %d", r.N, i)
		}
	}
	return out, nil
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
	protoActorRTT(system, pid, warmup)
	return protoActorRTT(system, pid, n)
}

// protoActorRTT times n sequential RequestFuture round trips to pid.
func protoActorRTT(system *actor.ActorSystem, pid *actor.PID, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		start := time.Now()
		_, _ = system.Root.RequestFuture(pid, Ping{N: int64(i)}, 10*time.Second).Result()
		out[i] = time.Since(start)
	}
	return out
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

// times times n round trips.
func (pp chanPingPong) times(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		start := time.Now()
		pp.req <- Ping{N: int64(i)}
		<-pp.resp
		out[i] = time.Since(start)
	}
	return out
}

func (pp chanPingPong) close() { close(pp.req) }

// ChanRTT times a ping-pong between two goroutines over unbuffered channels.
func ChanRTT(warmup, n int) []time.Duration {
	pp := startChanPingPong()
	defer pp.close()
	pp.times(warmup)
	return pp.times(n)
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
