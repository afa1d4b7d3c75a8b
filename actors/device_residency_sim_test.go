//go:build linux && cgo

package actors

import (
	"fmt"
	"testing"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
)

// TestDeviceRingKernels129Residency: 129 device ring kernels on the
// simulated device, an H100 by default (128 resident grids). When every
// kernel was a persistent grid of its own, the 129th launch failed with
// the residency hazard (on an H100 it would have waited forever) and ran
// on its fallback (gpu/cuda's 129-grid test still shows that of
// LaunchRingProgram). Now one grid serves every kernel of the program as a
// mailbox: all 129 run on the device, no hazard is raised, one grid runs.
func TestDeviceRingKernels129Residency(t *testing.T) {
	b := simdevice.NewBackend(256<<20, cuda.WithArenaBytes(96<<20))
	hz := simdevice.Hazards(b)
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
	for i, k := range kernels {
		if k.Placement() != "cuda:sim" {
			t.Fatalf("kernel %d placed on %q", i, k.Placement())
		}
	}
	if raised := hz.Raised(); len(raised) != 0 {
		t.Fatalf("hazards %v, want none", raised)
	}
	if s := b.MailboxStats(); s.Grids != 1 || s.Mailboxes != 129 {
		t.Fatalf("mailbox stats %+v: want one grid of 129 mailboxes", s)
	}
	for _, k := range []*Kernel[saxpyReq, saxpyResp]{kernels[0], kernels[127], kernels[128]} {
		q := saxpyReq{A: 2, N: 2}
		q.X[0], q.X[1], q.Y[0], q.Y[1] = 1, 2, 10, 20
		if got, err := k.Request(testCtx(t), q); err != nil || got.N != 2 || got.Z[0] != 12 || got.Z[1] != 24 {
			t.Fatalf("%s: %+v, %v", k.ID(), got.Z[:2], err)
		}
	}
}
