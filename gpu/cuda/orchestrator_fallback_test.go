package cuda_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda"
)

// TestNoDeviceFallsBackToCPU: on a machine without a usable device (this
// one: libcuda1 installed, cuInit fails with CUDA_ERROR_NO_DEVICE) the
// backend reports why, Allocator and Execute return that error without
// panicking, and the orchestrator keeps computing on the CPU.
func TestNoDeviceFallsBackToCPU(t *testing.T) {
	b := cuda.NewBackend()
	if len(b.Report().Devices) > 0 {
		t.Skip("a CUDA device is present")
	}
	defer b.Close()
	err := b.Available()
	var de *gpu.DeviceError
	if !errors.As(err, &de) || de.Kind != gpu.DeviceUnavailable || !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("Available = %#v", err)
	}
	if r := b.Report(); r.LibraryLoaded && !strings.Contains(err.Error(), "cuInit") {
		t.Fatalf("Available does not carry the driver's error: %v", err)
	}
	t.Logf("Available: %v", err)
	ctx := context.Background()
	x, _ := gpu.NewBuffer([]float32{1, -2, 3})
	out, _ := gpu.Zeros(gpu.F32, gpu.Shape{3})
	defer x.Free()
	defer out.Free()
	if _, aerr := x.EnsureOnDevice(ctx, b.Allocator()); !errors.Is(aerr, gpu.ErrDeviceNotAvailable) || aerr.Error() != err.Error() {
		t.Fatalf("Alloc without a device = %v", aerr)
	}
	relu := &gpu.KernelSpec{Name: "relu", Inputs: 1, DTypes: []gpu.DType{gpu.F32}}
	if b.Supports(relu, gpu.F32) {
		t.Fatal("supports a kernel without a device")
	}
	if eerr := b.Execute(ctx, relu, []*gpu.UnifiedBuffer{x}, out, nil); !errors.Is(eerr, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("Execute without a device = %v", eerr)
	}
	if rerr := b.RunPTX(ctx, cuda.OneShotPTX, "rc_relu_f32", []*gpu.UnifiedBuffer{x}, out, nil); !errors.Is(rerr, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("RunPTX without a device = %v", rerr)
	}
	if perr := b.CheckPersistent(); !errors.Is(perr, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("CheckPersistent without a device = %v", perr)
	}

	rt, err := actors.NewRuntime(actors.WithTelemetry(false))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	big := make([]float32, 1<<20)
	for i := range big {
		big[i] = float32(i%7) - 3
	}
	in, _ := gpu.NewBuffer(big)
	defer in.Free()
	var p actors.ExecProfile
	y, err := rt.Execute(ctx, "relu", []*gpu.UnifiedBuffer{in}, nil, actors.Profiled(&p))
	if err != nil {
		t.Fatal(err)
	}
	defer y.Free()
	if p.Backend != "cpu" {
		t.Fatalf("ran on %q", p.Backend)
	}
	got, _ := gpu.ToSlice[float32](ctx, y)
	for i, v := range got {
		if want := max(big[i], 0); v != want {
			t.Fatalf("[%d] = %v, want %v", i, v, want)
		}
	}
	if _, err := rt.Execute(ctx, "relu", []*gpu.UnifiedBuffer{in}, nil, actors.OnBackend("cuda:0")); !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("pinned to cuda:0 without a device = %v", err)
	}
}
