//go:build linux && cgo

package ringrt

import (
	"context"
	"testing"

	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// prioritySim is what TestPersistentStreamsAndCarveout uses of the
// simulated device beyond simDevice.
type prioritySim interface {
	driverapi.FuncAttributeAPI
	SetStreamPriorityRange(least, greatest int)
	StreamPriority(s driverapi.Stream) (int, bool)
}

// TestPersistentStreamsAndCarveout: a ring kernel's stream and a program
// grid's are created at the device's least stream priority, the one-shot
// stream at its greatest (the range here is 2..-4, so that a stream of
// plain cuStreamCreate, priority 0, would show); the ring loop's and the
// grid's functions prefer the most shared memory (carveout 100).
func TestPersistentStreamsAndCarveout(t *testing.T) {
	fd := newFakeDevice(256 << 20)
	ps := fd.(prioritySim)
	ps.SetStreamPriorityRange(2, -4)
	b, _ := newSimBackend(t, fd)
	d := b.d
	if want := (devcore.StreamPriorities{Supported: true, Least: 2, Greatest: -4, OneShot: -4}); d.Priorities != want {
		t.Fatalf("priorities %+v, want %+v", d.Priorities, want)
	}
	prio := func(what string, s driverapi.Stream, want int) {
		t.Helper()
		if p, ok := ps.StreamPriority(s); !ok || p != want {
			t.Errorf("%s stream: priority %d (%v), want %d", what, p, ok, want)
		}
	}
	carveout := func(what string, fn driverapi.Function, want int) {
		t.Helper()
		if v, err := ps.FuncGetAttribute(fn, driverapi.FuncAttrPreferredSharedMemoryCarveout); err != nil || v != want {
			t.Errorf("%s function: carveout %d (%v), want %d", what, v, err, want)
		}
	}
	prio("one-shot", d.Stream, -4)

	p := loadSaxpy(t, b)
	carveout("ring loop", p.fn, driverapi.SharedmemCarveoutMaxShared)
	k, err := b.Launch(p, Config{Capacity: 8, Threads: 4})
	if err != nil {
		t.Fatal(err)
	}
	prio("ring kernel", k.stream, 2)
	if err := k.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	if err := b.StartGrid(p, 4); err != nil {
		t.Fatal(err)
	}
	var grid *ringGrid
	_ = d.Do(func() error {
		for _, g := range b.grids {
			grid = g
		}
		return nil
	})
	if grid == nil {
		t.Fatal("no grid")
	}
	prio("program grid", grid.k.stream, 2)
	carveout("program grid", p.gridFn, driverapi.SharedmemCarveoutMaxShared)
}
