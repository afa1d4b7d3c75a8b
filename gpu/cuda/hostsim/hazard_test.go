//go:build linux && cgo

package hostsim

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/ring"
)

// controlBlock returns a zeroed control block in C memory and its
// simulated device address.
func controlBlock(t *testing.T) (*ring.ControlBlock, uint64) {
	t.Helper()
	d := NewDevice(1 << 20)
	p, err := d.HostAlloc(uint64(unsafe.Sizeof(ring.ControlBlock{})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.HostFree(p); err != nil {
			t.Error(err)
		}
	})
	a, err := d.DevicePointer(p)
	if err != nil {
		t.Fatal(err)
	}
	return (*ring.ControlBlock)(p), a
}

func TestCallClasses(t *testing.T) {
	for call, want := range map[string]CallClass{
		"cuMemFree_v2": CallSynchronizing, "cuMemFreeHost": CallSynchronizing, "cuModuleLoadDataEx": CallSynchronizing,
		"cuModuleUnload": CallSynchronizing, "cuCtxSynchronize": CallSynchronizing,
		"cuMemAlloc_v2": CallBarrier, "cuMemHostAlloc": CallBarrier,
		"cuMemAllocFromPoolAsync": CallFree, "cuMemFreeAsync": CallFree, "cuEventRecord": CallFree, "cuStreamCreate": CallFree,
	} {
		if got := ClassOf(call); got != want {
			t.Errorf("ClassOf(%s) = %v, want %v", call, got, want)
		}
	}
}

// TestStrictHazards: with a persistent launch in flight that was not asked
// to exit, a synchronising call fails at once naming the call and the
// kernel; a barrier passes but holds back later stream work on any
// stream; free calls and other streams' synchronisation pass; after the
// launch ends everything passes again.
func TestStrictHazards(t *testing.T) {
	h := NewHazards()
	h.MarkPersistent("rc_ring_test", 0)
	cb, addr := controlBlock(t)
	one, err := h.Begin(1, "rc_add_f32", nil) // a one-shot kernel never holds anything
	if err != nil {
		t.Fatal(err)
	}
	l, err := h.Begin(7, "rc_ring_test", []uint64{addr, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.InFlight(); len(got) != 1 || got[0] != "rc_ring_test" {
		t.Fatalf("in flight %v", got)
	}
	err = h.Call("cuMemFree_v2")
	var he *HazardError
	if !errors.As(err, &he) || !errors.Is(err, ErrHazard) || he.Call != "cuMemFree_v2" || he.Class != CallSynchronizing ||
		he.Kernel != "rc_ring_test" || he.Stream != 7 || he.Control != addr || he.Launch != 2 || he.Waited != 0 {
		t.Fatalf("cuMemFree beside a ring = %#v", err)
	}
	if !strings.Contains(err.Error(), "cuMemFree_v2") || !strings.Contains(err.Error(), "rc_ring_test") {
		t.Fatalf("message %q", err)
	}
	for _, free := range []string{"cuMemFreeAsync", "cuMemAllocFromPoolAsync", "cuStreamCreate"} {
		if err := h.Call(free); err != nil {
			t.Fatalf("%s: %v", free, err)
		}
	}
	if err := h.StreamSync("cuStreamSynchronize", 1); err != nil {
		t.Fatalf("sync of another stream: %v", err)
	}
	if err := h.StreamSync("cuStreamSynchronize", 7); !errors.As(err, &he) || he.Call != "cuStreamSynchronize" {
		t.Fatalf("sync of the ring's stream = %v", err)
	}
	if err := h.Enqueue("cuMemcpyHtoDAsync_v2", 0); !errors.As(err, &he) || he.Class != CallSynchronizing {
		t.Fatalf("NULL-stream copy = %v", err)
	}
	// A barrier passes, then holds back the next launch and copy.
	if err := h.Enqueue("cuMemcpyHtoDAsync_v2", 3); err != nil {
		t.Fatal(err)
	}
	if err := h.Call("cuMemHostAlloc"); err != nil {
		t.Fatalf("barrier call: %v", err)
	}
	if _, err := h.Begin(3, "rc_add_f32", nil); !errors.As(err, &he) || he.HeldBy != "cuMemHostAlloc" || he.Call != "cuLaunchKernel" {
		t.Fatalf("launch after a barrier = %v", err)
	}
	if err := h.Enqueue("cuMemcpyDtoHAsync_v2", 3); !errors.As(err, &he) || he.HeldBy != "cuMemHostAlloc" {
		t.Fatalf("copy after a barrier = %v", err)
	}
	h.End(one)
	// Asked to exit: the wait is bounded, so the call waits for the end.
	cb.Terminate.Store(uint64(ring.TerminateNow))
	done := make(chan error, 1)
	go func() { done <- h.Call("cuModuleUnload") }()
	h.End(l)
	if err := <-done; err != nil {
		t.Fatalf("synchronising call beside an exiting ring: %v", err)
	}
	if _, err := h.Begin(3, "rc_add_f32", nil); err != nil {
		t.Fatalf("launch after the fenced kernel ended: %v", err)
	}
	if n := len(h.Raised()); n != 5 {
		t.Fatalf("%d hazards recorded, want 5", n)
	}
	if h.Calls("cuMemFree_v2") != 1 || h.Calls("cuLaunchKernel") != 4 {
		t.Fatalf("calls: free %d launch %d", h.Calls("cuMemFree_v2"), h.Calls("cuLaunchKernel"))
	}
}

// TestBlockingHazards: in blocking mode a synchronising call really
// waits until the persistent kernel ends, and the watchdog turns a wait
// that never ends into a HazardError with Waited set.
func TestBlockingHazards(t *testing.T) {
	h := NewHazards()
	h.SetMode(HazardBlocking, 50*time.Millisecond)
	h.MarkPersistent("rc_ring_test", 0)
	_, addr := controlBlock(t)
	l, err := h.Begin(7, "rc_ring_test", []uint64{addr, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	err = h.Call("cuCtxSynchronize")
	var he *HazardError
	if !errors.As(err, &he) || he.Waited < 50*time.Millisecond || !strings.Contains(err.Error(), "watchdog") {
		t.Fatalf("blocking call beside a ring that never exits = %v", err)
	}
	h.SetMode(HazardBlocking, 2*time.Minute) // the watchdog as a hang guard: the ring exits
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		close(started)
		done <- h.Call("cuModuleLoadDataEx")
	}()
	<-started
	select {
	case err := <-done:
		t.Fatalf("the call returned (%v) while the ring runs", err)
	default:
	}
	h.End(l)
	if err := <-done; err != nil {
		t.Fatalf("after the ring ended: %v", err)
	}
}
