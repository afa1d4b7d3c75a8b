//go:build linux && cgo

package actors

import (
	"fmt"
	"sync"
	"testing"

	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/gpu/ringmsg"
)

// TestDeviceKernelLatencyHistograms: a device ring kernel on the simulated
// device fills its three latency histograms as a CPU kernel does. Made to
// sample (one admission in timedEvery timed) and with hundreds of messages
// on the device at once, its histograms count every answered message up to
// the last timed one, each timed message standing for the untimed ones
// submitted before it; a message's queueing delay (admission → its
// submission to the device) and device time (submission → its reply's
// hand-off) add up to its latency, so the sums do too; and Telemetry
// reports non-zero percentiles.
func TestDeviceKernelLatencyHistograms(t *testing.T) {
	rt := simRuntime(t, WithTelemetry(true))
	ctx := testCtx(t)
	def, err := NewDeviceKernel[ringmsg.ReduceMsg, ringmsg.ScalarReply]("dev-timing", ringmsg.Sum, WithCapacity(64))
	if err != nil {
		t.Fatal(err)
	}
	k := mustLaunch(t, rt, def, false)
	forceSampling(k)
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	if k.Placement() != "cuda:sim" {
		t.Fatalf("placement %q, want the simulated device", k.Placement())
	}
	const n = 40*timedEvery + 5
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for i := range n {
		m := ringmsg.ReduceMsg{N: 1}
		m.X[0] = float32(i)
		wg.Add(1)
		if err := k.RequestAsync(ctx, m, func(r ringmsg.ScalarReply, err error) {
			if err == nil && r.Value != float64(i) {
				err = fmt.Errorf("message %d answered %v", i, r.Value)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			wg.Done()
		}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if len(errs) != 0 {
		t.Fatalf("%d errors, the first %v", len(errs), errs[0])
	}
	if err := k.Terminate(ctx); err != nil { // every outcome recorded
		t.Fatal(err)
	}
	st := k.Telemetry()
	if st.Processed != n || st.Backend != "cuda:sim" {
		t.Fatalf("processed %d on %q, want %d on cuda:sim", st.Processed, st.Backend, n)
	}
	// As TestSampledHistogramsCountEveryMessage: the first two admissions
	// are timed, then the last of each period of timedEvery.
	const counted = 2 + (n-2)/timedEvery*timedEvery
	for name, h := range map[string]uint64{"latency": st.Latency.Count, "queue delay": st.QueueDelay.Count, "handler": st.HandlerTime.Count} {
		if h != counted {
			t.Errorf("%s histogram counts %d messages, want %d (of %d answered by the device)", name, h, counted, n)
		}
	}
	if st.QueueDelay.Sum+st.HandlerTime.Sum != st.Latency.Sum {
		t.Errorf("queue delay %v + device time %v = %v, latency %v", st.QueueDelay.Sum, st.HandlerTime.Sum, st.QueueDelay.Sum+st.HandlerTime.Sum, st.Latency.Sum)
	}
	if st.LatencyMin <= 0 || st.Latency.Sum < counted*st.LatencyMin {
		t.Errorf("latency sum %v below %d × the least latency %v", st.Latency.Sum, counted, st.LatencyMin)
	}
	if p50, p99 := st.Latency.Quantile(0.5), st.Latency.Quantile(0.99); p50 <= 0 || p99 < p50 || st.HandlerTime.Quantile(0.5) <= 0 {
		t.Errorf("latency p50 %v p99 %v, device time p50 %v: want positive", p50, p99, st.HandlerTime.Quantile(0.5))
	}
}

// TestDeviceFaultKeepsHistogramCounts: when a device ring kernel faults
// with messages on the device, those it hands back run on its fallback and
// are timed there; the histograms still count every answered message up
// to the last timed one, none twice (a timed message handed back keeps
// the weight of the untimed ones before it).
func TestDeviceFaultKeepsHistogramCounts(t *testing.T) {
	sim := simdevice.NewBackend(64 << 20)
	t.Cleanup(func() { _ = sim.Close() }) // a faulted context may report its fault again at close
	rt := newTestRuntime(t, WithBackends(sim), WithTelemetry(true))
	ctx := testCtx(t)
	def, err := NewDeviceRingKernel("trap-timing", DeviceSource{Code: trapCUDA, Entry: "trapper"}, newSaxpyFallback("trap-timing"))
	if err != nil {
		t.Fatal(err)
	}
	k := mustLaunch(t, rt, def, false)
	forceSampling(k)
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	if k.Placement() != "cuda:sim" {
		t.Fatalf("placement %q, want the simulated device", k.Placement())
	}
	const n, trap = 20*timedEvery + 7, 3*timedEvery + 4
	msgs := make([]saxpyReq, n)
	for i := range msgs {
		msgs[i] = saxpyReq{A: float32(i%11 + 1), N: 8}
	}
	msgs[trap].A = 13 // traps on the device
	for i, o := range stream(t, k, msgs, nil) {
		if (o.err != nil) != (i == trap) {
			t.Fatalf("message %d: %v", i, o.err)
		}
	}
	if k.Placement() != PlacementCPU {
		t.Fatalf("placement %q after the fault, want the fallback", k.Placement())
	}
	if err := k.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	st := k.Telemetry()
	const counted = 2 + (n-2)/timedEvery*timedEvery
	for name, h := range map[string]uint64{"latency": st.Latency.Count, "queue delay": st.QueueDelay.Count, "handler": st.HandlerTime.Count} {
		if h != counted {
			t.Errorf("%s histogram counts %d messages, want %d (of %d answered)", name, h, counted, n)
		}
	}
}
