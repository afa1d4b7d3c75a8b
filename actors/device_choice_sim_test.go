//go:build linux && cgo

package actors

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/messages"
)

// simDevices returns n simulated devices closed at the test's end.
func simDevices(t *testing.T, n int) []gpu.Backend {
	var out []gpu.Backend
	for _, b := range simdevice.NewBackends(n, 64<<20) {
		t.Cleanup(func() { _ = b.Close() })
		out = append(out, b)
	}
	return out
}

// checkSaxpy asks k once and compares the reply with the fallback's.
func checkSaxpy(t *testing.T, k *Kernel[saxpyReq, saxpyResp], a float32) {
	t.Helper()
	ctx := testCtx(t)
	req := saxpyReq{A: a, N: 8}
	for j := range 8 {
		req.X[j], req.Y[j] = float32(j), 1
	}
	got, err := k.Request(ctx, req)
	want, _ := newSaxpyFallback("x")()(ctx, req)
	if err != nil || !bytes.Equal(messages.FixedBytes(&got), messages.FixedBytes(&want)) {
		t.Fatalf("%s on %s: %v (%v), want %v", k.ID(), k.Placement(), got.Z[:8], err, want.Z[:8])
	}
}

// TestDeviceRingKernelsSpreadOverDevices: a runtime with several CUDA
// devices places each device ring kernel on the one with the fewest
// mailboxes (so 6 kernels on 2 devices split 3:3), WithDevice pins one,
// a pin past the last device runs the fallback, and DeviceKernels counts
// the kernels of each device.
func TestDeviceRingKernelsSpreadOverDevices(t *testing.T) {
	rt := newTestRuntime(t, WithBackends(simDevices(t, 2)...))
	ctx := testCtx(t)
	if n := len(rt.Devices()); n != 2 {
		t.Fatalf("%d devices, want 2", n)
	}
	var ks []*Kernel[saxpyReq, saxpyResp]
	for i := range 6 {
		id := fmt.Sprintf("spread-%d", i)
		def, err := NewDeviceRingKernel(id, DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}, newSaxpyFallback(id))
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, mustLaunch(t, rt, def, true))
	}
	if ks[0].Placement() == PlacementCPU {
		t.Skip("no host compiler for the simulated device")
	}
	per := map[string]int{}
	for i, k := range ks {
		per[k.Placement()]++
		checkSaxpy(t, k, float32(i+1))
	}
	if per["cuda:sim0"] != 3 || per["cuda:sim1"] != 3 {
		t.Fatalf("placements %v, want 3 on each device", per)
	}
	def, err := NewDeviceRingKernel("pinned", DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}, newSaxpyFallback("pinned"), WithDevice(1))
	if err != nil {
		t.Fatal(err)
	}
	pinned := mustLaunch(t, rt, def, true)
	if pinned.Placement() != "cuda:sim1" {
		t.Fatalf("WithDevice(1): placement %q", pinned.Placement())
	}
	checkSaxpy(t, pinned, 2)
	def, err = NewDeviceRingKernel("pinned-far", DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}, newSaxpyFallback("pinned-far"), WithDevice(5))
	if err != nil {
		t.Fatal(err)
	}
	far := mustLaunch(t, rt, def, true)
	if far.Placement() != PlacementCPU {
		t.Fatalf("WithDevice(5) of 2 devices: placement %q, want the fallback", far.Placement())
	}
	checkSaxpy(t, far, 3)
	got := rt.DeviceKernels()
	if got["cuda:sim0"] != 3 || got["cuda:sim1"] != 4 || got[PlacementCPU] != 1 {
		t.Fatalf("DeviceKernels %v, want sim0 3, sim1 4, cpu 1", got)
	}
	for _, k := range append(ks, pinned, far) {
		if err := k.Terminate(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeviceFaultMovesOnlyItsKernels: a kernel that traps on one device
// moves that device's kernels to their fallbacks; the kernel on the other
// device stays there and answers from it, and kernels launched later go
// to the healthy device.
func TestDeviceFaultMovesOnlyItsKernels(t *testing.T) {
	devs := simDevices(t, 2)
	rt := newTestRuntime(t, WithBackends(devs...))
	ctx := testCtx(t)
	mk := func(id, code, entry string, dev int) *Kernel[saxpyReq, saxpyResp] {
		def, err := NewDeviceRingKernel(id, DeviceSource{Code: code, Entry: entry}, newSaxpyFallback(id), WithDevice(dev))
		if err != nil {
			t.Fatal(err)
		}
		return mustLaunch(t, rt, def, true)
	}
	trap := mk("trap1", trapCUDA, "trapper", 1)
	beside := mk("beside1", saxpyCUDA, "saxpy", 1)
	other := mk("other0", saxpyCUDA, "saxpy", 0)
	if trap.Placement() != "cuda:sim1" || beside.Placement() != "cuda:sim1" || other.Placement() != "cuda:sim0" {
		t.Skipf("placements %q %q %q (no host compiler?)", trap.Placement(), beside.Placement(), other.Placement())
	}
	if _, err := trap.Request(ctx, saxpyReq{A: 13, N: 8}); err == nil {
		t.Fatal("the trapping message succeeded")
	}
	checkSaxpy(t, beside, 4) // answered by its fallback once the fault is seen
	checkSaxpy(t, trap, 5)
	if trap.Placement() != PlacementCPU || beside.Placement() != PlacementCPU {
		t.Fatalf("kernels of the faulted device: %q, %q, want the fallback", trap.Placement(), beside.Placement())
	}
	var de *gpu.DeviceError
	if err := devs[1].Available(); !errors.As(err, &de) || de.Kind != gpu.DeviceFailed {
		t.Fatalf("faulted device: %v", err)
	}
	if err := devs[0].Available(); err != nil {
		t.Fatalf("the other device after the fault: %v", err)
	}
	checkSaxpy(t, other, 6)
	if other.Placement() != "cuda:sim0" {
		t.Fatalf("kernel of the healthy device: %q", other.Placement())
	}
	def, err := NewDeviceRingKernel("later", DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}, newSaxpyFallback("later"))
	if err != nil {
		t.Fatal(err)
	}
	later := mustLaunch(t, rt, def, true)
	if later.Placement() != "cuda:sim0" {
		t.Fatalf("kernel launched after the fault: %q, want the healthy device", later.Placement())
	}
	checkSaxpy(t, later, 7)
	for _, k := range []*Kernel[saxpyReq, saxpyResp]{trap, beside, other, later} {
		if err := k.Terminate(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
