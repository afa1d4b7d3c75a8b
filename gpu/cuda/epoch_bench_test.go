//go:build linux && cgo

package cuda

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

// benchDeviceEnv set to "device" makes the epoch and Execute benchmarks
// run on the real device 0 instead of the simulated one (the H100
// runbook in README.md).
const benchDeviceEnv = "RINGACTOR_CUDA_BENCH"

// benchBackend is the simulated backend, or device 0 when benchDeviceEnv
// says so.
func benchBackend(b *testing.B) *Backend {
	b.Helper()
	if os.Getenv(benchDeviceEnv) != "device" {
		be, _ := newSimBackend(b, nil)
		return be
	}
	be := NewBackend()
	if err := be.CheckPersistent(); err != nil {
		b.Fatalf("%s=device: %v", benchDeviceEnv, err)
	}
	b.Cleanup(func() {
		if err := be.Close(); err != nil {
			b.Error(err)
		}
	})
	return be
}

// BenchmarkDeviceEpoch measures one device epoch (park every live ring,
// an empty call, relaunch every ring) with 1, 4 and 16 idle rings on the
// simulated device. On the simulated device a ring's loop is host threads
// whose idle backoff sleeps up to 20 µs, so the figure is dominated by
// that wake-up and by thread start-up at the relaunch; the README's H100
// runbook measures the same thing on hardware.
func BenchmarkDeviceEpoch(b *testing.B) {
	for _, n := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("rings=%d", n), func(b *testing.B) {
			be := benchBackend(b)
			for range n {
				k, err := be.LaunchRingProgram(sumProgram(b, be), RingConfig{Capacity: 8, Threads: 1})
				if err != nil {
					b.Fatal(err)
				}
				k.Activate()
				b.Cleanup(func() {
					if err := k.Close(context.Background()); err != nil {
						b.Error(err)
					}
				})
			}
			ctx := context.Background()
			for b.Loop() {
				if _, err := be.DeviceEpoch(ctx); err != nil {
					b.Fatal(err)
				}
			}
			st := be.EpochStats()
			if st.RingsParked != st.Count*n {
				b.Fatalf("parked %d rings in %d epochs", st.RingsParked, st.Count)
			}
			b.ReportMetric(float64(st.Max.Microseconds()), "max-µs")
		})
	}
}

// BenchmarkExecuteBesideRing measures Execute (relu over 256 float32, inputs
// and output resident on the device) on the simulated device (see
// benchDeviceEnv) with no ring
// and beside one live, idle ring kernel: the ring must cost the one-shot
// path nothing but the CPU its loop uses.
func BenchmarkExecuteBesideRing(b *testing.B) {
	for _, ring := range []bool{false, true} {
		b.Run(fmt.Sprintf("live_ring=%v", ring), func(b *testing.B) {
			be := benchBackend(b)
			if ring {
				k, err := be.LaunchRingProgram(sumProgram(b, be), RingConfig{Capacity: 8, Threads: 1})
				if err != nil {
					b.Fatal(err)
				}
				k.Activate()
				b.Cleanup(func() {
					if err := k.Close(context.Background()); err != nil {
						b.Error(err)
					}
				})
			}
			x := make([]float32, 256)
			for i := range x {
				x[i] = float32(i%7) - 3
			}
			in, _ := gpu.NewBuffer(x)
			out, _ := gpu.Zeros(gpu.F32, gpu.Shape{256})
			defer in.Free()
			defer out.Free()
			spec := builtin(b, "relu")
			ctx := context.Background()
			for b.Loop() {
				if err := be.Execute(ctx, spec, []*gpu.UnifiedBuffer{in}, out, nil); err != nil {
					b.Fatal(err)
				}
			}
			if hz := SimulatedHazards(be); hz != nil && len(hz.Raised()) != 0 {
				b.Fatalf("hazards: %v", hz.Raised())
			}
		})
	}
}
