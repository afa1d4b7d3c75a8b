//go:build linux && cgo

package actors

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/messages"
)

// TestDeviceFaultMovesToFallback: a device ring kernel that faults gives
// the message in flight an ExecutionError wrapping the device fault; the
// messages it had queued are answered by its fallback, in order; every
// other device ring kernel of the backend moves to its fallback too, and
// the backend reports the failure.
func TestDeviceFaultMovesToFallback(t *testing.T) {
	sim := simdevice.NewBackend(64 << 20)
	t.Cleanup(func() { _ = sim.Close() }) // a faulted context may report its fault again at close
	rt := newTestRuntime(t, WithBackends(sim))
	ctx := testCtx(t)
	defT, err := NewDeviceRingKernel("trapper", DeviceSource{Code: trapCUDA, Entry: "trapper"}, newSaxpyFallback("trapper"))
	if err != nil {
		t.Fatal(err)
	}
	defS, err := NewDeviceRingKernel("saxpy-beside", DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}, newSaxpyFallback("saxpy-beside"))
	if err != nil {
		t.Fatal(err)
	}
	kt, ks := mustLaunch(t, rt, defT, true), mustLaunch(t, rt, defS, true)
	if kt.Placement() != "cuda:sim" || ks.Placement() != "cuda:sim" {
		t.Skipf("placements %q, %q (no host compiler?)", kt.Placement(), ks.Placement())
	}
	msgs := make([]saxpyReq, 12)
	for i := range msgs {
		msgs[i] = saxpyReq{A: float32(i + 1), N: 8}
		for j := range 8 {
			msgs[i].X[j], msgs[i].Y[j] = float32(j), float32(i)
		}
	}
	msgs[3].A = 13                  // traps on the device
	out := stream(t, kt, msgs, nil) // one outcome per message, in order
	fallback := newSaxpyFallback("trapper")()
	for j, o := range out {
		if j == 3 {
			var ee *gpu.ExecutionError
			var de *gpu.DeviceError
			if !errors.As(o.err, &ee) || !errors.As(o.err, &de) || de.Kind != gpu.DeviceFailed {
				t.Fatalf("the trapping message: %v, want an ExecutionError wrapping the device fault", o.err)
			}
			continue
		}
		want, _ := fallback(ctx, msgs[j])
		if o.err != nil || !bytes.Equal(messages.FixedBytes(&o.resp), messages.FixedBytes(&want)) {
			t.Fatalf("message %d: %v (%v), want the fallback's reply", j, o.resp.Z[:8], o.err)
		}
	}
	if kt.Placement() != PlacementCPU {
		t.Fatalf("faulted kernel placement %q", kt.Placement())
	}
	var de *gpu.DeviceError
	if err := sim.Available(); !errors.As(err, &de) || de.Kind != gpu.DeviceFailed {
		t.Fatalf("backend after the fault: %v", err)
	}
	// The other kernel of the context answers, from its fallback.
	r, err := ks.Request(ctx, msgs[0])
	want, _ := fallback(ctx, msgs[0])
	if err != nil || !bytes.Equal(messages.FixedBytes(&r), messages.FixedBytes(&want)) {
		t.Fatalf("kernel beside: %v, %v", r.Z[:8], err)
	}
	if ks.Placement() != PlacementCPU {
		t.Fatalf("kernel beside placement %q after the fault", ks.Placement())
	}
	// A device kernel declared now runs its fallback.
	defN, err := NewDeviceRingKernel("after-fault", DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}, newSaxpyFallback("after-fault"))
	if err != nil {
		t.Fatal(err)
	}
	if kn := mustLaunch(t, rt, defN, true); kn.Placement() != PlacementCPU {
		t.Fatalf("kernel launched after the fault: placement %q", kn.Placement())
	}
	for _, k := range []*Kernel[saxpyReq, saxpyResp]{kt, ks} {
		if err := k.Terminate(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
