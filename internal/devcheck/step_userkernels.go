package devcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/ringactor/ringactor/internal/devkernels"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/ringmsg"
	"github.com/ringactor/ringactor/messages"
	"github.com/ringactor/ringactor/supervision"
)

// userKernelsStep sends random messages through users' device ring
// kernels and their Go fallbacks: replies byte-equal, in order, one
// outcome each (SAXPY, compiled with --fmad=false; the built-in elementwise
// ringmsg handlers).
var userKernelsStep = Step{
	Name:    "userkernels",
	Checks:  "users' device ring kernels (SAXPY, the built-in elementwise handlers) answer byte-equal to their Go fallbacks, pipelined, in order",
	Timeout: 60 * time.Second,
	run:     runUserKernels,
}

// restartStep checks the device State is zeroed at every restart, as the
// fallback's state is fresh.
var restartStep = Step{
	Name:    "restart",
	Checks:  "a stateful device ring kernel (a running histogram) equals its fallback, and its State is zeroed after each supervisor restart",
	Timeout: 60 * time.Second,
	run:     runRestart,
}

// outcome is one message's outcome, with the index it was sent at.
type outcome[Resp any] struct {
	i    int
	resp Resp
	err  error
}

// pipeline sends msgs to k with Go (pipelined) and returns one outcome per
// message, checking they came in order.
func pipeline[Req, Resp any](ctx context.Context, k *actors.Kernel[Req, Resp], msgs []Req) ([]outcome[Resp], error) {
	var (
		mu  sync.Mutex
		out []outcome[Resp]
		wg  sync.WaitGroup
	)
	for i, m := range msgs {
		wg.Add(1)
		if err := k.RequestAsync(ctx, m, func(r Resp, err error) {
			mu.Lock()
			out = append(out, outcome[Resp]{i, r, err})
			mu.Unlock()
			wg.Done()
		}); err != nil {
			wg.Done()
			wg.Wait()
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
	}
	wg.Wait()
	if len(out) != len(msgs) {
		return nil, fmt.Errorf("%d outcomes for %d messages", len(out), len(msgs))
	}
	for j, o := range out {
		if o.i != j {
			return nil, fmt.Errorf("outcome %d is message %d's: out of order", j, o.i)
		}
	}
	return out, nil
}

// sameOutcomes checks the device's and the fallback's outcomes are equal:
// replies byte for byte, errors as the same device status.
func sameOutcomes[Resp any](what string, dev, cpu []outcome[Resp]) error {
	for i := range dev {
		d, c := dev[i], cpu[i]
		if (d.err == nil) != (c.err == nil) {
			return fmt.Errorf("%s message %d: device error %v, fallback error %v", what, i, d.err, c.err)
		}
		if d.err != nil {
			var de, ce *actors.DeviceStatusError
			var da, ca *gpu.ArgumentError
			switch {
			case errors.As(d.err, &de) && errors.As(c.err, &ce) && de.Status == ce.Status:
			case errors.As(d.err, &da) && errors.As(c.err, &ca):
			default:
				return fmt.Errorf("%s message %d: device error %v, fallback error %v", what, i, d.err, c.err)
			}
			continue
		}
		if !bytes.Equal(messages.FixedBytes(&d.resp), messages.FixedBytes(&c.resp)) {
			return fmt.Errorf("%s message %d: replies differ:\ndevice   %+v\nfallback %+v", what, i, d.resp, c.resp)
		}
	}
	return nil
}

// pair launches def on the device runtime and a CPU kernel of the same
// handler on the fallback runtime.
func pair[Req, Resp any](ctx context.Context, dev, cpu *actors.Runtime, b interface{ Name() string }, def *actors.KernelDef[Req, Resp], fallback func() actors.Handler[Req, Resp], opts ...actors.KernelOption) (*actors.Kernel[Req, Resp], *actors.Kernel[Req, Resp], error) {
	kd, err := launch(ctx, dev, def)
	if err != nil {
		return nil, nil, err
	}
	if kd.Placement() != b.Name() {
		return nil, nil, fmt.Errorf("%s placed on %q, want %s (no host compiler for the simulated device, or NVRTC missing?)", def.ID(), kd.Placement(), b.Name())
	}
	kc, err := launch(ctx, cpu, actors.NewKernel(def.ID(), fallback, opts...))
	if err != nil {
		return nil, nil, err
	}
	return kd, kc, nil
}

func runUserKernels(ctx context.Context, e *Env) error {
	rt, b, err := e.Runtime()
	if err != nil {
		return err
	}
	cpu, err := e.CPURuntime()
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(28, 2))
	n := pick(e, 500, 5000, 20000)
	def, err := saxpyDef("saxpy", actors.WithCapacity(256))
	if err != nil {
		return err
	}
	kd, kc, err := pair(ctx, rt, cpu, b, def, saxpyFallback("saxpy"), actors.WithCapacity(256))
	if err != nil {
		return err
	}
	e.Progress("SAXPY: %d random messages on %s and its fallback", n, b.Name())
	msgs := randomSaxpy(rng, n)
	dev, err := pipeline(ctx, kd, msgs)
	if err != nil {
		return fmt.Errorf("saxpy on the device: %w", err)
	}
	host, err := pipeline(ctx, kc, msgs)
	if err != nil {
		return fmt.Errorf("saxpy fallback: %w", err)
	}
	if err := sameOutcomes("saxpy", dev, host); err != nil {
		return err
	}
	e.Set("saxpy_messages", n)

	vecMsg := func(rng *rand.Rand) ringmsg.VecMsg {
		var m ringmsg.VecMsg
		m.N = uint32(rng.IntN(ringmsg.VecMax + 1))
		for j := range m.N {
			m.A[j], m.B[j] = float32(rng.NormFloat64()*100), float32(rng.NormFloat64())
		}
		return m
	}
	unaryMsg := func(rng *rand.Rand) ringmsg.UnaryMsg {
		var m ringmsg.UnaryMsg
		m.N = uint32(rng.IntN(ringmsg.VecMax + 1))
		m.Param = float32(rng.NormFloat64())
		for j := range m.N {
			m.X[j] = float32(rng.NormFloat64() * 100)
		}
		return m
	}
	for _, op := range []ringmsg.Op{ringmsg.Add, ringmsg.Mul} {
		if err := builtinPair(ctx, e, rt, cpu, b, op, rng, n/4, vecMsg); err != nil {
			return err
		}
	}
	for _, op := range []ringmsg.Op{ringmsg.Scale, ringmsg.ReLU, ringmsg.LeakyReLU} {
		if err := builtinPair(ctx, e, rt, cpu, b, op, rng, n/4, unaryMsg); err != nil {
			return err
		}
	}
	return nil
}

// builtinPair compares a built-in elementwise device handler with its Go
// implementation on n random messages.
func builtinPair[Req any](ctx context.Context, e *Env, rt, cpu *actors.Runtime, b interface{ Name() string }, op ringmsg.Op, rng *rand.Rand, n int, gen func(*rand.Rand) Req) error {
	id := "builtin-" + op.String()
	def, err := actors.NewDeviceKernel[Req, ringmsg.VecReply](id, op)
	if err != nil {
		return err
	}
	h, err := ringmsg.Handler[Req, ringmsg.VecReply](op)
	if err != nil {
		return err
	}
	kd, kc, err := pair(ctx, rt, cpu, b, def, func() actors.Handler[Req, ringmsg.VecReply] {
		return func(_ context.Context, m Req) (ringmsg.VecReply, error) { return h(m) }
	})
	if err != nil {
		return err
	}
	e.Progress("built-in %s: %d messages", op, n)
	msgs := make([]Req, n)
	for i := range msgs {
		msgs[i] = gen(rng)
	}
	dev, err := pipeline(ctx, kd, msgs)
	if err != nil {
		return fmt.Errorf("%s on the device: %w", op, err)
	}
	host, err := pipeline(ctx, kc, msgs)
	if err != nil {
		return fmt.Errorf("%s fallback: %w", op, err)
	}
	return sameOutcomes(op.String(), dev, host)
}

func runRestart(ctx context.Context, e *Env) error {
	rt, b, err := e.Runtime()
	if err != nil {
		return err
	}
	cpu, err := e.CPURuntime()
	if err != nil {
		return err
	}
	restartOnStatus := func(reason any) supervision.Directive {
		var se *actors.DeviceStatusError
		if err, ok := reason.(error); ok && errors.As(err, &se) {
			return supervision.Restart
		}
		return supervision.Resume
	}
	def, err := actors.NewDeviceRingKernel("hist", actors.DeviceSource{Code: histCUDA, Entry: "histogram", State: devkernels.HistState{}, Threads: 8},
		histFallback("hist"), actors.WithDecider(restartOnStatus))
	if err != nil {
		return err
	}
	kd, kc, err := pair(ctx, rt, cpu, b, def, histFallback("hist"), actors.WithDecider(restartOnStatus))
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(28, 3))
	rounds := pick(e, 3, 4, 6)
	per := pick(e, 100, 400, 2000)
	for round := range rounds {
		e.Progress("round %d: %d messages, then a restart", round, per)
		msgs := make([]devkernels.HistReq, per)
		var total uint64
		for i := range msgs {
			msgs[i].N = uint32(rng.IntN(65))
			total += uint64(msgs[i].N)
			for j := range msgs[i].N {
				msgs[i].Values[j] = float32(rng.Float64()*1.2 - 0.1)
			}
		}
		dev, err := pipeline(ctx, kd, msgs)
		if err != nil {
			return fmt.Errorf("round %d on the device: %w", round, err)
		}
		host, err := pipeline(ctx, kc, msgs)
		if err != nil {
			return fmt.Errorf("round %d fallback: %w", round, err)
		}
		if err := sameOutcomes("histogram", dev, host); err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		if got := dev[len(dev)-1].resp.Total; got != total {
			return fmt.Errorf("round %d: total %d, want %d (State not zeroed at the restart, or lost)", round, got, total)
		}
		// A refused message restarts both kernels.
		for _, k := range []*actors.Kernel[devkernels.HistReq, devkernels.HistResp]{kd, kc} {
			_, err := k.Request(ctx, devkernels.HistReq{N: 65})
			var se *actors.DeviceStatusError
			if !errors.As(err, &se) || se.Status != 2 {
				return fmt.Errorf("round %d: the refused message: %v", round, err)
			}
		}
	}
	if got := kd.Telemetry().Restarts; got < uint64(rounds-1) || kd.Placement() != b.Name() {
		return fmt.Errorf("device restarts %d, placement %q", got, kd.Placement())
	}
	e.Set("restarts", kd.Telemetry().Restarts)
	return nil
}
