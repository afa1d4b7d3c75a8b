package devcheck

import (
	"context"
	"fmt"
	"github.com/ringactor/ringactor/internal/devkernels"
	"runtime"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/messages"
)

// The measurements. Each also checks what it measures (replies correct,
// rings alive after epochs); figures are reported, never asserted.

var rttStep = Step{
	Name:    "rtt",
	Checks:  "ring round trip p50/p99 and pipelined rate of a device ring kernel (SAXPY) against its fallback on the CPU, same run",
	Timeout: 60 * time.Second,
	run:     runRTT,
}

var executeBesideStep = Step{
	Name:    "execute-beside",
	Checks:  "Execute latency beside a live device ring against Execute alone (an Execute that waited on the ring would never return)",
	Timeout: 60 * time.Second,
	run:     runExecuteBeside,
}

var epochStep = Step{
	Name:    "epoch",
	Checks:  "device epoch cost (park every ring, relaunch) with 1, 4 and 16 live rings, and of loading a ring program (its image: CUBIN or PTX) beside 16; every ring answers after",
	Timeout: 60 * time.Second,
	run:     runEpoch,
}

var wakeStep = Step{
	Name:    "wake",
	Checks:  "idle wake-up latency of a device ring after 0, 0.1, 1, 10 and 100 ms idle (the loop's __nanosleep backoff)",
	Timeout: 60 * time.Second,
	run:     runWake,
}

// fullSaxpy is a request over the whole vector.
func fullSaxpy(i int) devkernels.SaxpyReq {
	r := devkernels.SaxpyReq{A: float32(i%7) + 0.5, N: devkernels.VecLen}
	for j := range devkernels.VecLen {
		r.X[j], r.Y[j] = float32(j), float32(i)
	}
	return r
}

// roundTrips times n sequential requests to k.
func roundTrips(ctx context.Context, k *actors.Kernel[devkernels.SaxpyReq, devkernels.SaxpyResp], n int) ([]time.Duration, error) {
	samples := make([]time.Duration, 0, n)
	for i := range n {
		req := fullSaxpy(i)
		start := time.Now()
		r, err := k.Request(ctx, req)
		samples = append(samples, time.Since(start))
		if err != nil || r.N != devkernels.VecLen || r.Z[1] != float32(req.A*req.X[1])+req.Y[1] {
			return nil, fmt.Errorf("request %d: %v (N %d)", i, err, r.N)
		}
	}
	return samples, nil
}

// pipelined sends n requests to k with Go and returns the rate.
func pipelined(ctx context.Context, k *actors.Kernel[devkernels.SaxpyReq, devkernels.SaxpyResp], n int) (float64, error) {
	msgs := make([]devkernels.SaxpyReq, n)
	for i := range msgs {
		msgs[i] = fullSaxpy(i)
	}
	start := time.Now()
	out, err := pipeline(ctx, k, msgs)
	if err != nil {
		return 0, err
	}
	rate := float64(n) / time.Since(start).Seconds()
	for i, o := range out {
		if o.err != nil {
			return 0, fmt.Errorf("pipelined message %d: %w", i, o.err)
		}
	}
	return rate, nil
}

func runRTT(ctx context.Context, e *Env) error {
	rt, b, err := e.Runtime()
	if err != nil {
		return err
	}
	cpu, err := e.CPURuntime()
	if err != nil {
		return err
	}
	def, err := saxpyDef("rtt-saxpy", actors.WithCapacity(256))
	if err != nil {
		return err
	}
	kd, kc, err := pair(ctx, rt, cpu, b, def, saxpyFallback("rtt-saxpy"), actors.WithCapacity(256))
	if err != nil {
		return err
	}
	n := pick(e, 200, 2000, 10000)
	m := pick(e, 1000, 20000, 100000)
	for _, side := range []struct {
		name string
		k    *actors.Kernel[devkernels.SaxpyReq, devkernels.SaxpyResp]
	}{{"device", kd}, {"fallback", kc}} {
		e.Progress("%s: %d round trips, %d pipelined", side.name, n, m)
		if _, err := roundTrips(ctx, side.k, n/10+1); err != nil { // warm up
			return err
		}
		s, err := roundTrips(ctx, side.k, n)
		if err != nil {
			return fmt.Errorf("%s: %w", side.name, err)
		}
		e.Set(side.name+"_rtt_p50_us", quantileUS(s, 0.5))
		e.Set(side.name+"_rtt_p99_us", quantileUS(s, 0.99))
		rate, err := pipelined(ctx, side.k, m)
		if err != nil {
			return fmt.Errorf("%s: %w", side.name, err)
		}
		e.Set(side.name+"_pipelined_per_s", rate)
	}
	return nil
}

func runExecuteBeside(ctx context.Context, e *Env) error {
	rt, b, err := e.Runtime()
	if err != nil {
		return err
	}
	n := pick(e, 256, 1<<16, 1<<16)
	samples := pick(e, 20, 200, 1000)
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%9) - 4
	}
	timeExec := func(what string) ([]time.Duration, error) {
		e.Progress("%d Executes of relu on %d f32, %s", samples, n, what)
		out := make([]time.Duration, 0, samples)
		for i := range samples + samples/10 {
			in, _ := gpu.NewBuffer(x)
			start := time.Now()
			var p actors.ExecProfile
			res, err := rt.Execute(ctx, "relu", []*gpu.UnifiedBuffer{in}, nil, actors.OnBackend(b.Name()), actors.Profiled(&p))
			took := time.Since(start)
			if err != nil || p.Backend != b.Name() {
				return nil, fmt.Errorf("execute %s: %v on %q", what, err, p.Backend)
			}
			got, err := gpu.ToSlice[float32](ctx, res)
			if err != nil || got[0] != 0 || got[n-1] != max(x[n-1], 0) {
				return nil, fmt.Errorf("execute %s: wrong result (%v)", what, err)
			}
			_, _ = in.Free(), res.Free()
			if i >= samples/10 { // the first tenth warms up
				out = append(out, took)
			}
		}
		return out, nil
	}
	alone, err := timeExec("alone")
	if err != nil {
		return err
	}
	def, err := saxpyDef("beside-saxpy")
	if err != nil {
		return err
	}
	k, err := launch(ctx, rt, def)
	if err != nil {
		return err
	}
	if err := placement(k.Placement(), b); err != nil {
		return err
	}
	if _, err := roundTrips(ctx, k, 3); err != nil {
		return err
	}
	beside, err := timeExec("beside a live ring")
	if err != nil {
		return err
	}
	if _, err := roundTrips(ctx, k, 3); err != nil {
		return fmt.Errorf("the ring after the Executes: %w", err)
	}
	e.Set("elements", n)
	e.Set("alone_p50_us", quantileUS(alone, 0.5))
	e.Set("alone_p99_us", quantileUS(alone, 0.99))
	e.Set("beside_p50_us", quantileUS(beside, 0.5))
	e.Set("beside_p99_us", quantileUS(beside, 0.99))
	e.Set("beside_over_alone_p50", quantileUS(beside, 0.5)/quantileUS(alone, 0.5))
	return nil
}

func runEpoch(ctx context.Context, e *Env) error {
	b, err := e.Backend()
	if err != nil {
		return err
	}
	src, err := saxpyProgram()
	if err != nil {
		return err
	}
	p, err := b.LoadRingProgram(ctx, src)
	if err != nil {
		return err
	}
	e.Set("ring_image", p.Image())
	e.Set("ring_target", p.Target().Arch)
	var rings []*cuda.RingKernel
	defer func() {
		for _, k := range rings {
			_ = k.Close(ctx)
		}
	}()
	reps := pick(e, 5, 20, 50)
	for _, want := range []int{1, 4, 16} {
		for len(rings) < want {
			k, err := b.LaunchRingProgram(p, cuda.RingConfig{Capacity: 16})
			if err != nil {
				return fmt.Errorf("ring %d: %w", len(rings)+1, err)
			}
			k.Activate()
			rings = append(rings, k)
		}
		e.Progress("%d device epochs with %d rings", reps, want)
		samples := make([]time.Duration, 0, reps)
		for range reps {
			d, err := b.DeviceEpoch(ctx)
			if err != nil {
				return fmt.Errorf("epoch with %d rings: %w", want, err)
			}
			samples = append(samples, d)
		}
		e.Set(fmt.Sprintf("rings_%d_p50_ms", want), quantileUS(samples, 0.5)/1e3)
		e.Set(fmt.Sprintf("rings_%d_max_ms", want), quantileUS(samples, 1)/1e3)
		for i, k := range rings {
			if err := exchangeAll(ctx, k, []devkernels.SaxpyReq{fullSaxpy(i)}, func(int, ring.SlotHeader, []byte) error { return nil }); err != nil {
				return fmt.Errorf("ring %d after the epochs: %w", i, err)
			}
		}
	}
	// A program registered beside the 16 rings: compiled before its epoch,
	// which holds only the module load (a CUBIN's: no JIT).
	e.Progress("loading a ring program beside %d rings", len(rings))
	src2, err := saxpyVariant("saxpy_beside", saxpyCUDA+"\n// loaded beside running rings\n")
	if err != nil {
		return err
	}
	before := b.EpochStats()
	start := time.Now()
	if _, err := b.LoadRingProgram(ctx, src2); err != nil {
		return fmt.Errorf("loading a program beside %d rings: %w", len(rings), err)
	}
	e.Set("load_beside_rings_ms", float64(time.Since(start).Microseconds())/1e3)
	if after := b.EpochStats(); after.Count > before.Count {
		e.Set("load_epoch_ms", float64(after.Last.Microseconds())/1e3)
	}
	for i, k := range rings {
		if err := exchangeAll(ctx, k, []devkernels.SaxpyReq{fullSaxpy(i)}, func(int, ring.SlotHeader, []byte) error { return nil }); err != nil {
			return fmt.Errorf("ring %d after the load: %w", i, err)
		}
	}
	return nil
}

func runWake(ctx context.Context, e *Env) error {
	b, err := e.Backend()
	if err != nil {
		return err
	}
	k, err := launchSaxpyRing(ctx, b, 16)
	if err != nil {
		return err
	}
	defer k.Close(ctx)
	reps := pick(e, 3, 10, 20)
	buf := make([]byte, k.PayloadMax())
	req := fullSaxpy(1)
	payload := messages.FixedBytes(&req)
	id := uint64(0)
	once := func() (time.Duration, error) {
		id++
		start := time.Now()
		if ok, err := k.TrySubmit(1, id, payload); !ok || err != nil {
			return 0, fmt.Errorf("submit: %v, %v", ok, err)
		}
		for spins := 0; ; spins++ {
			if h, _, ok := k.TryPollInto(buf); ok {
				if h.CorrelationID != id {
					return 0, fmt.Errorf("reply to %d, want %d", h.CorrelationID, id)
				}
				return time.Since(start), nil
			}
			if spins%1024 == 1023 {
				if err := k.Fault(); err != nil {
					return 0, err
				}
				if err := ctx.Err(); err != nil {
					return 0, err
				}
			}
			runtime.Gosched()
		}
	}
	for _, idle := range []time.Duration{0, 100 * time.Microsecond, time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond} {
		if e.Sim() && idle > 10*time.Millisecond {
			continue
		}
		e.Progress("wake-up after %v idle, %d times", idle, reps)
		samples := make([]time.Duration, 0, reps)
		for range reps {
			if idle > 0 {
				time.Sleep(idle) // the ring idles: its loop backs off
			}
			d, err := once()
			if err != nil {
				return err
			}
			samples = append(samples, d)
		}
		e.Set(fmt.Sprintf("idle_%s_p50_us", idleName(idle)), quantileUS(samples, 0.5))
	}
	return ctx.Err()
}

// idleName names an idle time for a figure: "0ms", "0.1ms", "10ms".
func idleName(d time.Duration) string {
	return fmt.Sprintf("%gms", float64(d)/1e6)
}
