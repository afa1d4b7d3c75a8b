//go:build linux && cgo

package cuda

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/internal/testutil/ringtest"
)

// benchDeviceEnv set to "device" makes the epoch and Execute benchmarks
// run on the real device 0 instead of the simulated one (the H100
// runbook in README.md).
const benchDeviceEnv = "RINGACTOR_CUDA_BENCH"

// benchBackend is the simulated backend, or device 0 when benchDeviceEnv
// says so, with opts applied before its device opens.
func benchBackend(b *testing.B, opts ...BackendOption) *Backend {
	b.Helper()
	if os.Getenv(benchDeviceEnv) != "device" {
		be, _ := newSimBackend(b, nil)
		for _, o := range opts {
			o(be)
		}
		return be
	}
	be := NewBackend(opts...)
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
// simulated device: epoch-µs is the mean time the rings were parked
// (EpochStats). ns/op is per DeviceEpoch call back to back, which also
// waits for the pacing (no spacing here, but each epoch parks no sooner
// than the previous one's duration after it: about twice epoch-µs). On
// the simulated device a ring's loop is host threads whose idle backoff
// sleeps up to 20 µs, so the figure is dominated by that wake-up and by
// thread start-up at the relaunch; the README's H100 runbook measures the
// same thing on hardware.
func BenchmarkDeviceEpoch(b *testing.B) {
	for _, n := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("rings=%d", n), func(b *testing.B) {
			be := benchBackend(b, WithEpochSpacing(0))
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
			b.ReportMetric(float64(st.Total.Microseconds())/float64(max(1, st.Count)), "epoch-µs")
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
			if hz := simHazards(be); hz != nil && len(hz.Raised()) != 0 {
				b.Fatalf("hazards: %v", hz.Raised())
			}
		})
	}
}

// BenchmarkRingUnderEpochStorm measures one ring's throughput (a Sum
// message each, pipelined: one goroutine submits, one polls) with no
// epochs, and under a continuous storm of DeviceEpoch calls back to back
// with the default spacing and with none (only the previous epoch's own
// duration and each ring's backlog pace them). msgs/s is the ring's
// throughput; epochs/s and parked-% (the rings' time parked, from
// EpochStats, over the run) say what the storm cost. ns/op is per message.
func BenchmarkRingUnderEpochStorm(b *testing.B) {
	for _, c := range []struct {
		name    string
		storm   bool
		spacing time.Duration
	}{
		{"storm=none", false, DefaultEpochSpacing},
		{"storm=on/spacing=1ms", true, DefaultEpochSpacing},
		{"storm=on/spacing=0", true, 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			be := benchBackend(b, WithEpochSpacing(c.spacing))
			k, err := be.LaunchRingProgram(sumProgram(b, be), RingConfig{Capacity: 64, Threads: 1})
			if err != nil {
				b.Fatal(err)
			}
			k.Activate()
			b.Cleanup(func() {
				if err := k.Close(context.Background()); err != nil {
					b.Error(err)
				}
			})
			if err := ringtest.ExchangeErr(k, 64, 0); err != nil { // warm: the loop runs
				b.Fatal(err)
			}
			stop, stormed := make(chan struct{}), make(chan error, 1)
			before := be.EpochStats()
			b.ResetTimer()
			start := time.Now()
			go func() {
				for c.storm {
					select {
					case <-stop:
						stormed <- nil
						return
					default:
					}
					if _, err := be.DeviceEpoch(context.Background()); err != nil {
						stormed <- err
						return
					}
				}
				stormed <- nil
			}()
			err = ringtest.ExchangeErr(k, b.N, 1)
			el := time.Since(start)
			close(stop)
			if serr := <-stormed; err != nil || serr != nil {
				b.Fatal(err, serr)
			}
			b.StopTimer()
			st := be.EpochStats()
			b.ReportMetric(float64(b.N)/el.Seconds(), "msgs/s")
			b.ReportMetric(float64(st.Count-before.Count)/el.Seconds(), "epochs/s")
			b.ReportMetric(100*float64(st.Total-before.Total)/float64(el), "parked-%")
		})
	}
}
