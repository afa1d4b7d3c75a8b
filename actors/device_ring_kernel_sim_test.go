//go:build linux && cgo

package actors

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
	"github.com/ringactor/ringactor/messages"
	"github.com/ringactor/ringactor/supervision"
)

// outcome is one message's outcome, with the index it was sent at.
type outcome[Resp any] struct {
	i    int
	resp Resp
	err  error
}

// pair is the same device ring kernel on the simulated device and as its
// Go fallback on a CPU-only runtime.
type pair[Req, Resp any] struct {
	dev, cpu *Kernel[Req, Resp]
}

func launchPair[Req, Resp any](t *testing.T, id string, src DeviceSource, fallback func() Handler[Req, Resp], opts ...KernelOption) pair[Req, Resp] {
	t.Helper()
	var p pair[Req, Resp]
	for _, rt := range []*Runtime{simRuntime(t), newTestRuntime(t)} {
		def, err := NewDeviceRingKernel(id, src, fallback, opts...)
		if err != nil {
			t.Fatal(err)
		}
		k := mustLaunch(t, rt, def, true)
		t.Cleanup(func() {
			if err := k.Terminate(context.Background()); err != nil && !errors.Is(err, ErrTerminated) {
				t.Errorf("terminate: %v", err)
			}
		})
		if p.dev == nil {
			p.dev = k
		} else {
			p.cpu = k
		}
	}
	if p.dev.Placement() != "cuda:sim" || p.dev.Telemetry().Backend != "cuda:sim" {
		if _, err := hostsim.BuildProgram(context.Background(), "probe", "int x;"); errors.Is(err, hostsim.ErrNoHostCompiler) {
			t.Skip("no host compiler for the simulated device")
		}
		t.Fatalf("device placement %q", p.dev.Placement())
	}
	if p.cpu.Placement() != PlacementCPU {
		t.Fatalf("fallback placement %q", p.cpu.Placement())
	}
	return p
}

// stream sends msgs pipelined (Go), calling at(i) before message i when
// set, and returns the outcomes in the order they arrived, checking there
// is exactly one per message, in order.
func stream[Req, Resp any](t *testing.T, k *Kernel[Req, Resp], msgs []Req, at func(i int)) []outcome[Resp] {
	t.Helper()
	ctx := testCtx(t)
	var (
		mu  sync.Mutex
		out []outcome[Resp]
		wg  sync.WaitGroup
	)
	for i, m := range msgs {
		if at != nil {
			at(i)
		}
		wg.Add(1)
		if err := k.RequestAsync(ctx, m, func(r Resp, err error) {
			mu.Lock()
			out = append(out, outcome[Resp]{i, r, err})
			mu.Unlock()
			wg.Done()
		}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if len(out) != len(msgs) {
		t.Fatalf("%d outcomes for %d messages", len(out), len(msgs))
	}
	for j, o := range out {
		if o.i != j {
			t.Fatalf("outcome %d is message %d's: out of order", j, o.i)
		}
	}
	return out
}

// sameOutcomes checks the device's and the fallback's outcomes are equal:
// replies byte for byte, errors as ExecutionErrors with the same status.
func sameOutcomes[Resp any](t *testing.T, what string, dev, cpu []outcome[Resp]) {
	t.Helper()
	for i := range dev {
		d, c := dev[i], cpu[i]
		if (d.err == nil) != (c.err == nil) {
			t.Fatalf("%s message %d: device error %v, fallback error %v", what, i, d.err, c.err)
		}
		if d.err != nil {
			var de, ce *DeviceStatusError
			var ee *gpu.ExecutionError
			if !errors.As(d.err, &ee) || !errors.As(d.err, &de) || !errors.As(c.err, &ce) || de.Status != ce.Status {
				t.Fatalf("%s message %d: device error %v, fallback error %v", what, i, d.err, c.err)
			}
			continue
		}
		if !bytes.Equal(messages.FixedBytes(&d.resp), messages.FixedBytes(&c.resp)) {
			t.Fatalf("%s message %d: replies differ:\ndevice   %+v\nfallback %+v", what, i, d.resp, c.resp)
		}
	}
}

func randomSaxpy(rng *rand.Rand, n int) []saxpyReq {
	msgs := make([]saxpyReq, n)
	for i := range msgs {
		m := &msgs[i]
		m.N = uint32(rng.IntN(vecLen + 1))
		if rng.IntN(100) == 0 {
			m.N = vecLen + 1 + uint32(rng.IntN(1000)) // refused by the handler
		}
		m.A = float32(rng.NormFloat64() * 10)
		for j := range min(m.N, vecLen) {
			m.X[j], m.Y[j] = float32(rng.NormFloat64()*1e3), float32(rng.NormFloat64()*1e-3)
		}
	}
	return msgs
}

// TestDeviceRingKernelProperty sends thousands of random messages through
// SAXPY on the simulated device and through its Go fallback: pipelined,
// across gate toggles, and into a draining terminate. Replies are byte
// equal, in order, one outcome each.
func TestDeviceRingKernelProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 1))
	p := launchPair(t, "saxpy", DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}, newSaxpyFallback("saxpy"), WithCapacity(256))
	ctx := testCtx(t)

	msgs := randomSaxpy(rng, 2000)
	sameOutcomes(t, "pipelined", stream(t, p.dev, msgs, nil), stream(t, p.cpu, msgs, nil))

	msgs = randomSaxpy(rng, 600)
	toggle := func(k *Kernel[saxpyReq, saxpyResp]) func(int) {
		return func(i int) {
			var err error
			switch i {
			case 100, 300:
				err = k.Deactivate(ctx)
			case 200, 450:
				err = k.Reactivate(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	sameOutcomes(t, "gate", stream(t, p.dev, msgs, toggle(p.dev)), stream(t, p.cpu, msgs, toggle(p.cpu)))

	// A terminate while messages are queued drains them (DrainProcess).
	msgs = randomSaxpy(rng, 300)
	drain := func(k *Kernel[saxpyReq, saxpyResp]) []outcome[saxpyResp] {
		var out []outcome[saxpyResp]
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i, m := range msgs {
			wg.Add(1)
			if err := k.RequestAsync(ctx, m, func(r saxpyResp, err error) {
				mu.Lock()
				out = append(out, outcome[saxpyResp]{i, r, err})
				mu.Unlock()
				wg.Done()
			}); err != nil {
				t.Fatal(err)
			}
		}
		if err := k.Terminate(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		for j, o := range out {
			if o.i != j {
				t.Fatalf("drain: outcome %d is message %d's", j, o.i)
			}
		}
		return out
	}
	dev, cpu := drain(p.dev), drain(p.cpu)
	if len(dev) != len(msgs) || len(cpu) != len(msgs) {
		t.Fatalf("drain: %d and %d outcomes for %d messages", len(dev), len(cpu), len(msgs))
	}
	sameOutcomes(t, "drain", dev, cpu)
	if _, err := p.dev.Request(ctx, msgs[0]); !errors.Is(err, ErrTerminated) {
		t.Fatalf("request after terminate: %v", err)
	}
}

// TestDeviceRingKernelStateRestarts: the histogram's state accumulates
// across messages; a refused message with a restarting decider restarts
// the kernel, and the device's state starts from zero again, as the
// fallback's does.
func TestDeviceRingKernelStateRestarts(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2))
	restartOnStatus := func(reason any) supervision.Directive {
		var se *DeviceStatusError
		if err, ok := reason.(error); ok && errors.As(err, &se) {
			return supervision.Restart
		}
		return supervision.Resume
	}
	p := launchPair(t, "hist", DeviceSource{Code: histCUDA, Entry: "histogram", State: histState{}, Threads: 8},
		newHistFallback("hist"), WithDecider(restartOnStatus))
	ctx := testCtx(t)
	var last histResp
	for round := range 4 {
		msgs := make([]histReq, 400)
		for i := range msgs {
			msgs[i].N = uint32(rng.IntN(65))
			for j := range msgs[i].N {
				msgs[i].Values[j] = float32(rng.Float64()*1.2 - 0.1)
			}
		}
		dev, cpu := stream(t, p.dev, msgs, nil), stream(t, p.cpu, msgs, nil)
		sameOutcomes(t, "histogram", dev, cpu)
		var total uint64
		for _, m := range msgs {
			total += uint64(m.N)
		}
		if got := dev[len(dev)-1].resp.Total; got != total {
			t.Fatalf("round %d: total %d, want %d (state not zeroed at the restart, or lost)", round, got, total)
		}
		last = dev[len(dev)-1].resp
		// A refused message restarts both kernels.
		for _, k := range []*Kernel[histReq, histResp]{p.dev, p.cpu} {
			_, err := k.Request(ctx, histReq{N: 65})
			var se *DeviceStatusError
			if !errors.As(err, &se) || se.Status != 2 {
				t.Fatalf("round %d: poison: %v", round, err)
			}
		}
	}
	if last.Total == 0 {
		t.Fatal("no data")
	}
	if p.dev.Telemetry().Restarts < 3 || p.dev.Placement() != "cuda:sim" {
		t.Fatalf("device restarts %d, placement %q", p.dev.Telemetry().Restarts, p.dev.Placement())
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDeviceRingKernelPlacement: the log says where a device ring kernel
// runs and why; a simulated device without a host compiler refuses the
// kernel, which runs its fallback and says so.
func TestDeviceRingKernelPlacement(t *testing.T) {
	for _, noCompiler := range []bool{false, true} {
		var logs syncBuf
		if noCompiler {
			t.Setenv(hostsim.HostCompilerEnv, "no-such-compiler-ringactor")
		}
		rt := simRuntime(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		code := saxpyCUDA + "\n// " + t.Name() + map[bool]string{true: " no compiler"}[noCompiler] + "\n"
		def, err := NewDeviceRingKernel("saxpy-placement", DeviceSource{Code: code, Entry: "saxpy"}, newSaxpyFallback("saxpy-placement"))
		if err != nil {
			t.Fatal(err)
		}
		k := mustLaunch(t, rt, def, true)
		r, err := k.Request(testCtx(t), saxpyReq{A: 2, N: 1, X: [vecLen]float32{3}, Y: [vecLen]float32{1}})
		if err != nil || r.Z[0] != 7 {
			t.Fatalf("reply %v, %v", r.Z[0], err)
		}
		if err := k.Terminate(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		want, reason := "cuda:sim", "persistent kernels"
		if noCompiler {
			want, reason = PlacementCPU, "C++20 compiler"
		}
		if k.Placement() != want || !strings.Contains(logs.String(), "placement="+want) || !strings.Contains(logs.String(), reason) {
			t.Fatalf("placement %q, want %q; log:\n%s", k.Placement(), want, logs.String())
		}
	}
}

// TestDeviceRingKernelDeclarationErrors: what cannot run on a device is
// refused when declared or registered, never at the first message.
func TestDeviceRingKernelDeclarationErrors(t *testing.T) {
	type sliceReq struct{ X []float32 }
	fb := newSaxpyFallback("x")
	src := DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}
	check := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, ErrInvalidKernel) {
			t.Errorf("%s: %v, want ErrInvalidKernel", name, err)
		}
	}
	_, err := NewDeviceRingKernel[sliceReq, saxpyResp]("x", src, func() Handler[sliceReq, saxpyResp] { return nil })
	check("slice request", err)
	_, err = NewDeviceRingKernel[saxpyReq, string]("x", src, func() Handler[saxpyReq, string] { return nil })
	check("string response", err)
	_, err = NewDeviceRingKernel("x", DeviceSource{Code: saxpyCUDA, Entry: "saxpy", State: "text"}, fb)
	check("string state", err)
	_, err = NewDeviceRingKernel("x", DeviceSource{Code: saxpyCUDA, Entry: "saxpy", State: &histState{}}, fb)
	check("pointer state", err)
	_, err = NewDeviceRingKernel("x", DeviceSource{Code: "", Entry: "saxpy"}, fb)
	check("empty code", err)
	_, err = NewDeviceRingKernel("x", DeviceSource{Code: saxpyCUDA, Entry: "sax py"}, fb)
	check("bad entry", err)
	_, err = NewDeviceRingKernel("x", DeviceSource{Code: saxpyCUDA, Entry: "saxpy", Threads: 4096}, fb)
	check("threads", err)
	_, err = NewDeviceRingKernel[saxpyReq, saxpyResp]("x", src, nil)
	check("no fallback", err)

	// A handler that does not compile fails the registration with the
	// compiler's log, on a runtime with a device; twice the same.
	rt := simRuntime(t)
	bad := DeviceSource{Code: "__device__ uint32_t saxpy(const rc_ctx *, const SaxpyReq *, SaxpyResp *, rc_no_state *) { return nope; }", Entry: "saxpy"}
	for range 2 {
		def, err := NewDeviceRingKernel("bad", bad, fb)
		if err != nil {
			t.Fatal(err)
		}
		err = rt.Register(def)
		var ce *gpu.CompilationError
		if !errors.As(err, &ce) || !strings.Contains(ce.Log, "nope") {
			if errors.Is(err, hostsim.ErrNoHostCompiler) {
				t.Skip("no host compiler")
			}
			t.Fatalf("bad handler: %v", err)
		}
	}
	// Without a device the same declaration is accepted: it runs its fallback.
	def, err := NewDeviceRingKernel("bad", bad, fb)
	if err != nil {
		t.Fatal(err)
	}
	if err := newTestRuntime(t).Register(def); err != nil {
		t.Fatalf("CPU-only runtime: %v", err)
	}
}
