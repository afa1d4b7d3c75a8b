//go:build linux && cgo

package actors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
)

// benchSaxpy launches the SAXPY device ring kernel on rt (the simulated
// device, or its fallback on a CPU-only runtime).
func benchSaxpy(b *testing.B, rt *Runtime, want string) *Kernel[saxpyReq, saxpyResp] {
	def, err := NewDeviceRingKernel("saxpy-bench", DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}, newSaxpyFallback("saxpy-bench"))
	if err != nil {
		b.Fatal(err)
	}
	k := mustLaunch(b, rt, def, true)
	if k.Placement() != want {
		b.Skipf("placement %q, want %q (no host compiler?)", k.Placement(), want)
	}
	b.Cleanup(func() { _ = k.Terminate(context.Background()) })
	return k
}

func benchSimRuntime(b *testing.B) *Runtime {
	sim := simdevice.NewBackend(64 << 20)
	b.Cleanup(func() { _ = sim.Close() })
	return newTestRuntime(b, WithBackends(sim))
}

// BenchmarkDeviceRingKernel measures a user's device ring kernel (SAXPY on
// 64 elements) on the simulated device against the same kernel's Go
// fallback on a CPU-only runtime, in one run: a sequential round trip
// (rtt) and a stream of Send/Receive (pipelined). allocs/op is the host
// side per message (the pump, the Go ring, the reply).
func BenchmarkDeviceRingKernel(b *testing.B) {
	req := saxpyReq{A: 1.5, N: 64}
	for i := range 64 {
		req.X[i], req.Y[i] = float32(i), 1
	}
	for _, place := range []string{"cuda:sim", PlacementCPU} {
		newRT := func(b *testing.B) *Runtime {
			if place == PlacementCPU {
				return newTestRuntime(b)
			}
			return benchSimRuntime(b)
		}
		b.Run(place+"/rtt", func(b *testing.B) {
			k := benchSaxpy(b, newRT(b), place)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := k.Request(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(place+"/pipelined", func(b *testing.B) {
			k := benchSaxpy(b, newRT(b), place)
			ctx := context.Background()
			done := make(chan error, 1)
			b.ReportAllocs()
			b.ResetTimer()
			go func() {
				for range b.N {
					if _, err := k.Receive(ctx); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			for range b.N {
				if _, err := k.Send(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkDeviceRingKernelRegister measures registering a device ring
// kernel on the simulated device: cold (a source never compiled: NVRTC,
// g++ into a shared library, load) and cached (the same source again in
// this process).
func BenchmarkDeviceRingKernelRegister(b *testing.B) {
	b.Run("cold", func(b *testing.B) {
		b.Setenv(hostsim.CacheDirEnv, b.TempDir())
		rt := benchSimRuntime(b)
		for i := range b.N {
			code := fmt.Sprintf("%s\n// cold %d %d\n", saxpyCUDA, time.Now().UnixNano(), i)
			def, err := NewDeviceRingKernel(fmt.Sprintf("cold-%d", i), DeviceSource{Code: code, Entry: "saxpy"}, newSaxpyFallback("cold"))
			if err != nil {
				b.Fatal(err)
			}
			if err := rt.Register(def); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		rt := benchSimRuntime(b)
		for i := range b.N {
			def, err := NewDeviceRingKernel(fmt.Sprintf("warm-%d", i), DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}, newSaxpyFallback("warm"))
			if err != nil {
				b.Fatal(err)
			}
			if err := rt.Register(def); err != nil {
				b.Fatal(err)
			}
		}
	})
}
