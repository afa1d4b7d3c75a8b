//go:build linux && cgo

package actors

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cpu"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
)

// TestDeviceBudgetRefusesAtOnce: on a small simulated device (4 SMs of 3
// resident blocks, the default reserve keeping 2 of them for one-shot
// kernels) the budget holds one program's grid of one block per SM; the
// second program's kernel is refused by the runtime at once — with
// WithOnDeviceCapacity(CapacityError) Launch fails with the budget's
// error, by default it runs on its fallback and says why — and the
// simulator raises no hazard: nothing was left for it to catch. An
// Execute beside the grids completes.
func TestDeviceBudgetRefusesAtOnce(t *testing.T) {
	p := cuda.H200Profile()
	p.SMs, p.MaxBlocksPerSM = 4, 3
	b := simdevice.NewBackend(256<<20, cuda.WithDeviceProfile(p))
	hz := simdevice.Hazards(b)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("closing the simulated backend: %v", err)
		}
	})
	rt := newTestRuntime(t, WithBackends(b))
	var ks []*Kernel[saxpyReq, saxpyResp]
	for i := range 2 {
		id := fmt.Sprintf("saxpy-%d", i)
		opts := []KernelOption{}
		if i == 1 {
			opts = append(opts, WithOnDeviceCapacity(CapacityError))
		}
		def, err := NewDeviceRingKernel(id, DeviceSource{Code: fmt.Sprintf("// program %d\n", i) + saxpyCUDA, Entry: "saxpy"}, newSaxpyFallback(id), opts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := PrepareDevice(rt, def); err != nil {
			t.Fatal(err)
		}
		k, err := Launch(testCtx(t), rt, def)
		if i < 1 {
			if err != nil || k.Placement() != b.Name() {
				t.Fatalf("program %d: %v on %q", i, err, k.Placement())
			}
			ks = append(ks, k)
			continue
		}
		var be *cuda.BudgetError
		if !errors.Is(err, gpu.ErrDeviceCapacity) || !errors.As(err, &be) || be.Limit != "blocks per SM" {
			t.Fatalf("the second program's kernel: %v", err)
		}
		// The same program without CapacityError runs on its fallback and says why.
		fb, err := NewDeviceRingKernel(id+"-fallback", DeviceSource{Code: fmt.Sprintf("// program %d\n", i) + saxpyCUDA, Entry: "saxpy"}, newSaxpyFallback(id))
		if err != nil {
			t.Fatal(err)
		}
		if err := PrepareDevice(rt, fb); err != nil {
			t.Fatal(err)
		}
		k = mustLaunch(t, rt, fb, true)
		if k.Placement() != PlacementCPU || !errors.Is(k.PlacementReason(), cuda.ErrBudget) {
			t.Fatalf("the second program's kernel by default: %q, %v", k.Placement(), k.PlacementReason())
		}
		ks = append(ks, k)
	}
	for _, k := range ks {
		if err := k.Activate(testCtx(t)); err != nil && k.Placement() != PlacementCPU {
			t.Fatal(err)
		}
		q := saxpyReq{A: 2, N: 2}
		q.X[0], q.X[1], q.Y[0], q.Y[1] = 1, 2, 10, 20
		if got, err := k.Request(testCtx(t), q); err != nil || got.Z[0] != 12 || got.Z[1] != 24 {
			t.Fatalf("%s: %+v, %v", k.ID(), got.Z[:2], err)
		}
	}
	x, _ := gpu.NewBuffer([]float32{-1, 2})
	defer x.Free()
	var spec *gpu.KernelSpec
	for _, s := range cpu.BuiltinKernels() {
		if s.Name == "relu" {
			spec = s
		}
	}
	if err := b.Execute(context.Background(), spec, []*gpu.UnifiedBuffer{x}, x, nil); err != nil {
		t.Fatalf("Execute beside the grids: %v", err)
	}
	if raised := hz.Raised(); len(raised) != 0 {
		t.Fatalf("hazards %v, want none", raised)
	}
	if s, err := b.DeviceBudget(); err != nil || s.Grids != 1 || s.Refused == 0 {
		t.Fatalf("budget %+v, %v", s, err)
	}
}
