//go:build linux && cgo

package actors

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/gpu/ringmsg"
	"github.com/ringactor/ringactor/supervision"
)

// simRuntime is a runtime with a simulated CUDA device (the real backend
// code over hostsim's host-compiled kernels), closed after the runtime.
func simRuntime(t *testing.T, opts ...Option) *Runtime {
	t.Helper()
	b := simdevice.NewBackend(64 << 20)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("closing the simulated backend: %v", err)
		}
	})
	return newTestRuntime(t, append([]Option{WithBackends(b)}, opts...)...)
}

// TestDeviceKernelOnSimulatedDevice runs every built-in device handler as
// a persistent ring kernel on the simulated device, through the actors
// API, and compares with the CPU handlers.
func TestDeviceKernelOnSimulatedDevice(t *testing.T) {
	rt := simRuntime(t)
	// Registering each built-in compiles its program (NVRTC, and g++ for
	// the simulated device unless cached): give the nine of them time.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	v := vecMsg(100, func(i int) (float32, float32) { return float32(i) - 50, float32(i%7) * 0.5 })
	u := ringmsg.UnaryMsg{N: 100, Param: 0.1}
	r := ringmsg.ReduceMsg{N: 100}
	for i := range 100 {
		u.X[i], r.X[i] = v.A[i], v.A[i]*v.B[i]
	}
	u.X[3] = float32(math.NaN())
	checkVec := func(name string, op ringmsg.Op, run func(*testing.T) (ringmsg.VecReply, ringmsg.VecReply)) {
		t.Run(name, func(t *testing.T) {
			got, want := run(t)
			for i := range want.Y {
				if got.Y[i] != want.Y[i] && !(math.IsNaN(float64(got.Y[i])) && math.IsNaN(float64(want.Y[i]))) {
					t.Fatalf("%v: y[%d] = %v, want %v", op, i, got.Y[i], want.Y[i])
				}
			}
		})
	}
	for _, op := range []ringmsg.Op{ringmsg.Add, ringmsg.Mul} {
		checkVec(op.String(), op, func(t *testing.T) (ringmsg.VecReply, ringmsg.VecReply) {
			k := deviceKernel[ringmsg.VecMsg, ringmsg.VecReply](t, rt, op)
			got, err := k.Request(ctx, v)
			if err != nil {
				t.Fatal(err)
			}
			cpuH, _ := ringmsg.Handler[ringmsg.VecMsg, ringmsg.VecReply](op)
			want, _ := cpuH(v)
			return got, want
		})
	}
	for _, op := range []ringmsg.Op{ringmsg.Scale, ringmsg.ReLU, ringmsg.LeakyReLU} {
		checkVec(op.String(), op, func(t *testing.T) (ringmsg.VecReply, ringmsg.VecReply) {
			k := deviceKernel[ringmsg.UnaryMsg, ringmsg.VecReply](t, rt, op)
			got, err := k.Request(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			cpuH, _ := ringmsg.Handler[ringmsg.UnaryMsg, ringmsg.VecReply](op)
			want, _ := cpuH(u)
			return got, want
		})
	}
	for _, op := range []ringmsg.Op{ringmsg.Sum, ringmsg.Min, ringmsg.Max} {
		t.Run(op.String(), func(t *testing.T) {
			k := deviceKernel[ringmsg.ReduceMsg, ringmsg.ScalarReply](t, rt, op)
			got, err := k.Request(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			cpuH, _ := ringmsg.Handler[ringmsg.ReduceMsg, ringmsg.ScalarReply](op)
			want, _ := cpuH(r)
			if math.Abs(got.Value-want.Value) > 1e-5*math.Max(1, math.Abs(want.Value)) {
				t.Fatalf("%v = %v, want %v", op, got.Value, want.Value)
			}
			if _, err := k.Request(ctx, ringmsg.ReduceMsg{N: ringmsg.VecMax + 1}); !errors.Is(err, gpu.ErrArgument) {
				t.Fatalf("n > VecMax on the device: %v, want ErrArgument", err)
			}
		})
	}
	t.Run("spmv", func(t *testing.T) {
		k := deviceKernel[ringmsg.SpMVMsg, ringmsg.SpMVReply](t, rt, ringmsg.SpMV)
		var s ringmsg.SpMVMsg
		s.Rows, s.Cols, s.NNZ = 2, 3, 3
		copy(s.RowPtr[:], []int32{0, 1, 3})
		copy(s.ColIdx[:], []int32{2, 0, 1})
		copy(s.Values[:], []float32{2, 3, 4})
		copy(s.X[:], []float32{1, 10, 100})
		got, err := k.Request(ctx, s)
		if err != nil || got.Y[0] != 200 || got.Y[1] != 43 {
			t.Fatalf("spmv: %v, %v", got.Y[:2], err)
		}
		s.RowPtr[2] = 9 // malformed CSR
		var ee *gpu.ExecutionError
		if _, err := k.Request(ctx, s); !errors.As(err, &ee) || !errors.Is(err, gpu.ErrArgument) {
			t.Fatalf("malformed CSR: %v", err)
		}
	})
}

// deviceKernel launches and activates a device kernel for op and checks
// that it runs on the simulated device; it is terminated at the end of the
// (sub)test, as the simulated device runs one persistent kernel at a time.
func deviceKernel[Req, Resp any](t *testing.T, rt *Runtime, op ringmsg.Op, opts ...KernelOption) *Kernel[Req, Resp] {
	t.Helper()
	def, err := NewDeviceKernel[Req, Resp]("dev-"+t.Name(), op, opts...)
	if err != nil {
		t.Fatal(err)
	}
	k := mustLaunch(t, rt, def, true)
	t.Cleanup(func() {
		if err := k.Terminate(context.Background()); err != nil && !errors.Is(err, ErrTerminated) {
			t.Errorf("terminate: %v", err)
		}
	})
	if k.Placement() != "cuda:sim" {
		t.Fatalf("placement %q, want the simulated device", k.Placement())
	}
	return k
}

// TestDeviceKernelPipelinedGateDrain: many messages in flight at once keep
// their order; messages sent while the gate is closed are handled after
// it reopens; a terminate drains what is queued; every message has one
// outcome.
func TestDeviceKernelPipelinedGateDrain(t *testing.T) {
	rt := simRuntime(t)
	ctx := testCtx(t)
	k := deviceKernel[ringmsg.ReduceMsg, ringmsg.ScalarReply](t, rt, ringmsg.Sum, WithCapacity(64))
	const n = 500
	var (
		mu   sync.Mutex
		got  []float64
		errs []error
		wg   sync.WaitGroup
	)
	send := func(from, to int) {
		for i := from; i < to; i++ {
			wg.Add(1)
			m := ringmsg.ReduceMsg{N: 1}
			m.X[0] = float32(i)
			if err := k.RequestAsync(ctx, m, func(r ringmsg.ScalarReply, err error) {
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					got = append(got, r.Value)
				}
				mu.Unlock()
				wg.Done()
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(0, n)
	wg.Wait()
	if err := k.Deactivate(ctx); err != nil {
		t.Fatal(err)
	}
	send(n, n+50) // queued behind the closed gate (the ring holds 64)
	if err := k.Reactivate(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	send(n+50, n+100)
	if err := k.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(errs) != 0 || len(got) != n+100 {
		t.Fatalf("%d replies, errors %v; want %d replies", len(got), errs, n+100)
	}
	for i, v := range got {
		if v != float64(i) {
			t.Fatalf("reply %d = %v: out of order", i, v)
		}
	}
}

// TestDeviceKernelRestart: a decider that restarts on errors makes a bad
// message fail the device incarnation; the kernel comes back on a fresh
// device ring kernel and serves again.
func TestDeviceKernelRestart(t *testing.T) {
	rt := simRuntime(t)
	ctx := testCtx(t)
	k := deviceKernel[ringmsg.VecMsg, ringmsg.VecReply](t, rt, ringmsg.Add, WithDecider(supervision.RestartOnError))
	if _, err := k.Request(ctx, ringmsg.VecMsg{N: ringmsg.VecMax + 1}); !errors.Is(err, gpu.ErrArgument) {
		t.Fatalf("bad message: %v", err)
	}
	for i := range 20 {
		r, err := k.Request(ctx, vecMsg(3, func(j int) (float32, float32) { return float32(i), float32(j) }))
		if err != nil || r.Y[2] != float32(i+2) {
			t.Fatalf("after the restart, request %d: %v, %v", i, r.Y[:3], err)
		}
	}
	if k.Telemetry().Restarts == 0 {
		t.Fatal("the bad message did not restart the kernel")
	}
	if k.Placement() != "cuda:sim" || k.Telemetry().Backend != "cuda:sim" {
		t.Fatalf("placement after the restart %q, telemetry backend %q", k.Placement(), k.Telemetry().Backend)
	}
}
