//go:build linux && cgo

package actors

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
)

// TestDeviceRingKernels129Residency documents the gap the mailbox runtime
// closes (issue 27): today every device ring kernel is a persistent grid
// of its own, and the simulated device, an H100 by default, holds 128
// resident grids. 128 device ring kernels run on the device; the 129th
// launch fails at once with the residency hazard (on an H100 it would
// wait forever) and that kernel runs on its Go fallback, still answering.
//
// When one persistent grid serves every kernel of a program, flip the
// expectations: all 129 placed on "cuda:sim" and no hazard raised.
func TestDeviceRingKernels129Residency(t *testing.T) {
	// 128 rings of 2 × 64 slots of 4 KiB: the pinned arena is sized for them.
	b := cuda.NewSimulatedBackend(256<<20, cuda.WithArenaBytes(96<<20))
	hz := cuda.SimulatedHazards(b)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("closing the simulated backend: %v", err)
		}
	})
	rt := newTestRuntime(t, WithBackends(b))
	// Every program is loaded before the first ring runs, so no launch
	// waits for a device epoch that parks the rings already running.
	var defs []*KernelDef[saxpyReq, saxpyResp]
	for i := range 129 {
		id := fmt.Sprintf("saxpy-%d", i)
		def, err := NewDeviceRingKernel(id, DeviceSource{Code: saxpyCUDA, Entry: "saxpy", Threads: 1}, newSaxpyFallback(id))
		if err != nil {
			t.Fatal(err)
		}
		if err := PrepareDevice(rt, def); err != nil {
			t.Fatal(err)
		}
		defs = append(defs, def)
	}
	epochs := b.EpochStats().Count
	var kernels []*Kernel[saxpyReq, saxpyResp]
	for _, def := range defs {
		kernels = append(kernels, mustLaunch(t, rt, def, true))
	}
	if n := b.EpochStats().Count; n != epochs {
		t.Fatalf("%d device epochs while launching", n-epochs)
	}
	for i, k := range kernels[:128] {
		if k.Placement() != "cuda:sim" {
			t.Fatalf("kernel %d placed on %q", i, k.Placement())
		}
	}
	// The gap: the 129th persistent grid cannot become resident.
	if p := kernels[128].Placement(); p != PlacementCPU {
		t.Fatalf("the 129th kernel placed on %q", p)
	}
	raised := hz.Raised()
	if len(raised) != 1 || !errors.Is(raised[0], hostsim.ErrResidency) || raised[0].Limit != hostsim.LimitResidentGrids ||
		raised[0].LimitValue != 128 {
		t.Fatalf("hazards %v, want one of the resident-grid limit", raised)
	}
	for _, k := range []*Kernel[saxpyReq, saxpyResp]{kernels[0], kernels[127], kernels[128]} {
		q := saxpyReq{A: 2, N: 2}
		q.X[0], q.X[1], q.Y[0], q.Y[1] = 1, 2, 10, 20
		if got, err := k.Request(testCtx(t), q); err != nil || got.N != 2 || got.Z[0] != 12 || got.Z[1] != 24 {
			t.Fatalf("%s: %+v, %v", k.ID(), got.Z[:2], err)
		}
	}
}
