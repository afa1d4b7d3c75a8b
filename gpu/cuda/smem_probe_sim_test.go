//go:build linux && cgo

package cuda

import (
	"context"
	"errors"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

// attrSim is what these tests use of the simulated device beyond
// simDevice: its function attributes and stream priorities.
type attrSim interface {
	FuncAttributeAPI
	SetFuncStaticShared(name string, bytes int)
	StreamPriority(s Stream) (int, bool)
}

// probeMaxDynamic is rc_smem_probe's FuncAttrMaxDynamicSharedSizeBytes on
// b's simulated device.
func probeMaxDynamic(t *testing.T, b *Backend, fd simDevice) int {
	t.Helper()
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	if err := d.Do(func() error {
		var err error
		v, err = fd.(attrSim).FuncGetAttribute(d.fns[smemProbeEntry], FuncAttrMaxDynamicSharedSizeBytes)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSharedMemoryProbe: the probe runs with 1 KiB up to the H100
// profile's 227 KiB of dynamic shared memory a block, raising the
// kernel's bound only above 48 KiB; a size that is no multiple of 4 or
// below a word a thread is an argument error, one above the opt-in a
// capacity error, and a raise the device refuses (the kernel's static
// shared memory leaves too little) the driver's CUDA_ERROR_INVALID_VALUE.
func TestSharedMemoryProbe(t *testing.T) {
	b, fd := newSimBackend(t, nil)
	ctx := context.Background()
	for _, c := range []struct{ bytes, bound int }{
		{SharedMemoryProbeMin, DefaultMaxDynamicShared},
		{48 << 10, DefaultMaxDynamicShared},
		{100 << 10, 100 << 10},
		{227 << 10, 227 << 10},
	} {
		if err := b.SharedMemoryProbe(ctx, c.bytes); err != nil {
			t.Fatalf("%d bytes: %v", c.bytes, err)
		}
		if v := probeMaxDynamic(t, b, fd); v != c.bound {
			t.Fatalf("after %d bytes the kernel's bound is %d, want %d", c.bytes, v, c.bound)
		}
	}
	if n := fd.Sim().Launches(smemProbeEntry); n != 4 {
		t.Fatalf("%d launches of %s, want 4", n, smemProbeEntry)
	}
	for _, bytes := range []int{0, -4, SharedMemoryProbeMin - 4, 100<<10 + 2} {
		var ae *gpu.ArgumentError
		if err := b.SharedMemoryProbe(ctx, bytes); !errors.Is(err, gpu.ErrArgument) || !errors.As(err, &ae) || ae.Arg != "bytes" {
			t.Fatalf("%d bytes: %v", bytes, err)
		}
	}
	var de *gpu.DeviceError
	if err := b.SharedMemoryProbe(ctx, 227<<10+4); !errors.Is(err, gpu.ErrDeviceCapacity) || !errors.As(err, &de) ||
		de.Kind != gpu.DeviceCapacity {
		t.Fatalf("past the opt-in: %v", err)
	}
	fd.(attrSim).SetFuncStaticShared(smemProbeEntry, 200<<10)
	var drv *DriverError
	if err := b.SharedMemoryProbe(ctx, 64<<10); !errors.As(err, &drv) || drv.Result() != ErrInvalidValue ||
		drv.Call != "cuFuncSetAttribute" || !errors.Is(err, gpu.ErrDevice) {
		t.Fatalf("a raise past the opt-in less 200 KiB of static memory: %v", err)
	}
	if n := fd.Sim().Launches(smemProbeEntry); n != 4 {
		t.Fatalf("refused probes launched: %d launches", n)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.SharedMemoryProbe(ctx, 64<<10); !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("closed backend: %v", err)
	}
}

// TestSharedMemoryProbeBesideRings: beside a ring kernel and a program's
// persistent grid the probe's ~100 KiB one-shot kernel still runs, with no
// hazard. On a profile of one SM of 128 KiB of shared memory the residency
// budget counts the persistent block's shared memory (and the 1 KiB
// reserved per block): 127 KiB, which fits alone, could not become
// resident beside the ring, and the budget refuses it at once (no hazard
// left for the model to catch); 100 KiB runs.
func TestSharedMemoryProbeBesideRings(t *testing.T) {
	ctx := context.Background()
	t.Run("h100", func(t *testing.T) {
		b, _ := newSimBackend(t, nil)
		launchRing(t, b)
		if err := b.StartRingGrid(sumProgram(t, b), 0); err != nil {
			t.Fatal(err)
		}
		if err := b.SharedMemoryProbe(ctx, 100<<10); err != nil {
			t.Fatalf("100 KiB beside a ring and a grid: %v", err)
		}
		if raised := simHazards(b).Raised(); len(raised) != 0 {
			t.Fatalf("hazards: %v", raised)
		}
	})
	t.Run("one-sm", func(t *testing.T) {
		fd := newFakeDevice(64 << 20)
		p := H100Profile()
		p.SMs, p.SharedMemPerSM, p.SharedMemPerBlockOptin = 1, 128<<10, 127<<10
		fd.SetProfile(p)
		b, _ := newSimBackend(t, fd)
		if err := b.SharedMemoryProbe(ctx, 127<<10); err != nil {
			t.Fatalf("127 KiB alone: %v", err)
		}
		launchRing(t, b)
		var be *BudgetError
		if err := b.SharedMemoryProbe(ctx, 127<<10); !errors.Is(err, gpu.ErrDeviceCapacity) || !errors.As(err, &be) ||
			be.Limit != "shared memory per SM" || be.Grids != 1 {
			t.Fatalf("127 KiB beside the ring: %v", err)
		}
		if err := b.SharedMemoryProbe(ctx, 100<<10); err != nil {
			t.Fatalf("100 KiB beside the ring: %v", err)
		}
		if raised := simHazards(b).Raised(); len(raised) != 0 {
			t.Fatalf("hazards: %v", raised)
		}
	})
}

// TestStreamPrioritiesOnSimulatedDevice: the backend's one-shot stream is
// created at the device's greatest priority (-5 on the simulated H100), a
// ring kernel's at the least (0); the one-shot kernels keep the default
// carveout.
func TestStreamPrioritiesOnSimulatedDevice(t *testing.T) {
	b, fd := newSimBackend(t, nil)
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	if d.Priorities.OneShot != -5 || d.Priorities.Least != 0 || !d.Priorities.Supported {
		t.Fatalf("priorities %+v", d.Priorities)
	}
	as := fd.(attrSim)
	var oneShot, carveout int
	var ok bool
	if err := d.Do(func() error {
		oneShot, ok = as.StreamPriority(d.Stream)
		var err error
		carveout, err = as.FuncGetAttribute(d.fns["rc_add_f32"], FuncAttrPreferredSharedMemoryCarveout)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !ok || oneShot != -5 || carveout != SharedmemCarveoutDefault {
		t.Fatalf("one-shot stream priority %d (%v), rc_add_f32's carveout %d", oneShot, ok, carveout)
	}
	launchRing(t, b)
	if p, ok := as.StreamPriority(ringStream(t, b)); !ok || p != 0 {
		t.Fatalf("ring stream priority %d (%v), want 0", p, ok)
	}
}
