//go:build linux && cgo

package ringrt

import (
	"testing"

	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/messages"
)

// TestRingProgramLoadsOncePerDevice: loading a ring program whose source
// the simulated device has loaded already makes no module load, so no
// device epoch parks the rings that run (as on a GPU, whose modules are
// kept by source). A cluster activates each identity of a device kind by
// loading its kind's program again: with an epoch per load, every
// activation parked every ring of the device (after a member's device
// faulted, each of the hundreds of identities that moved to another
// member parked all of that member's rings in turn). The program loaded
// again launches and answers; a new source still loads in an epoch.
func TestRingProgramLoadsOncePerDevice(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	k := launchRing(t, b) // a ring runs: a module load needs an epoch
	k.Activate()
	p1 := loadSaxpy(t, b)
	first := b.EpochStats().Count
	if first != 1 {
		t.Fatalf("the first load beside a running ring made %d epochs, want 1", first)
	}
	for range 3 {
		p := loadSaxpy(t, b)
		if got := b.EpochStats().Count; got != first {
			t.Fatalf("loading the same source again made %d more epochs, want none", got-first)
		}
		if p.fn != p1.fn {
			t.Fatal("the program loaded again has another function than the first load")
		}
	}
	p := loadSaxpy(t, b)
	k2, err := b.Launch(p, Config{Capacity: 4, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	k2.Activate()
	req := saxpyReq{N: 2, A: 2}
	req.X[0], req.X[1], req.Y[0], req.Y[1] = 1, 2, 10, 20
	h, got := exchangeProgram(t, k2, 1, messages.FixedBytes(&req))
	if want := saxpyWant(req, 1); h.Status != ring.StatusOK || string(got) != string(messages.FixedBytes(&want)) {
		t.Fatalf("a ring of the program loaded again: status %d", h.Status)
	}
	ctx, cancel := hangCtx(t)
	defer cancel()
	if err := k2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	spec := saxpySpec()
	spec.Code += "\n// " + t.Name() + "\n" // another source: a module load of its own
	loadProgram(t, b, spec)
	if got := b.EpochStats().Count; got != first+1 {
		t.Fatalf("a new source beside a running ring made %d epochs, want 1", got-first)
	}
}
