//go:build linux && cgo

package hostsim

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu/ring"
)

// h100 are the limits of an H100 SXM5 (gpu/cuda's H100Profile).
var h100 = Limits{SMs: 132, ResidentGrids: 128, BlocksPerSM: 32, ThreadsPerSM: 2048, SharedMemPerSM: 228 << 10,
	SharedMemReservedPerBlock: 1 << 10, RegistersPerSM: 64 << 10, HardwareQueues: 8}

// TestResidentGridLimit: under the H100 limits 128 persistent one-block
// grids become resident; the 129th persistent launch, and a one-shot
// launch too, fail in strict mode with a residency hazard naming the
// resident-grid limit and the oldest holder; once one holder is asked to
// exit, both launch again.
func TestResidentGridLimit(t *testing.T) {
	h := NewHazards()
	h.SetLimits(h100)
	h.MarkPersistent("rc_ring_test", 0)
	var first *ring.ControlBlock
	var launches []*Tracked
	for i := range 128 {
		cb, addr := controlBlock(t)
		if i == 0 {
			first = cb
		}
		l, err := h.BeginGrid(uint64(i+1), "rc_ring_test", Grid{Blocks: 1, Threads: 32, SharedMem: 256}, []uint64{addr})
		if err != nil {
			t.Fatalf("persistent grid %d: %v", i+1, err)
		}
		launches = append(launches, l)
	}
	_, addr := controlBlock(t)
	_, err := h.BeginGrid(200, "rc_ring_test", Grid{Blocks: 1, Threads: 32}, []uint64{addr})
	var he *HazardError
	if !errors.As(err, &he) || !errors.Is(err, ErrResidency) || !errors.Is(err, ErrHazard) || errors.Is(err, ErrFalseDependency) ||
		he.Limit != LimitResidentGrids || he.LimitValue != 128 || he.Holders != 128 || he.Launch != 1 ||
		he.Launching != "rc_ring_test" || he.Call != "cuLaunchKernel" {
		t.Fatalf("129th persistent grid = %#v", err)
	}
	if !strings.Contains(err.Error(), "resident grids per device (128)") {
		t.Fatalf("message %q", err)
	}
	if _, err := h.BeginGrid(200, "rc_add_f32", Grid{Blocks: 4, Threads: 256}, nil); !errors.Is(err, ErrResidency) {
		t.Fatalf("one-shot launch beside 128 persistent grids = %v", err)
	}
	first.Terminate.Store(uint64(ring.TerminateNow))
	if _, err := h.BeginGrid(200, "rc_add_f32", Grid{Blocks: 4, Threads: 256}, nil); err != nil {
		t.Fatalf("one-shot launch once a holder exits: %v", err)
	}
	h.End(launches[0])
	if _, err := h.BeginGrid(200, "rc_ring_test", Grid{Blocks: 1, Threads: 32}, []uint64{addr}); err != nil {
		t.Fatalf("persistent grid once a holder exited: %v", err)
	}
	if n := len(h.Raised()); n != 2 {
		t.Fatalf("%d hazards, want 2", n)
	}
}

// TestSMResidency: a persistent grid needs all its blocks resident at
// once; the limit that refuses it is named (threads, shared memory,
// blocks per SM); a block that an empty SM cannot hold is
// ErrOutOfResources; one-shot grids run in waves and need one block.
func TestSMResidency(t *testing.T) {
	lim := Limits{SMs: 2, ResidentGrids: 16, BlocksPerSM: 4, ThreadsPerSM: 1024, SharedMemPerSM: 64 << 10}
	h := NewHazards()
	h.SetLimits(lim)
	h.MarkPersistent("grid", -1)
	if _, err := h.BeginGrid(1, "grid", Grid{Blocks: 1, Threads: 2048}, nil); !errors.Is(err, ErrOutOfResources) {
		t.Fatalf("a block larger than an SM = %v", err)
	}
	// Two SMs of 1,024 threads: a grid of 4 blocks × 512 fills them.
	if _, err := h.BeginGrid(1, "grid", Grid{Blocks: 4, Threads: 512}, nil); err != nil {
		t.Fatal(err)
	}
	var he *HazardError
	if _, err := h.BeginGrid(2, "grid", Grid{Blocks: 1, Threads: 32}, nil); !errors.As(err, &he) || he.Limit != LimitThreadsPerSM {
		t.Fatalf("a block beside full SMs = %v", err)
	}
	h2 := NewHazards()
	h2.SetLimits(lim)
	h2.MarkPersistent("grid", -1)
	if _, err := h2.BeginGrid(1, "grid", Grid{Blocks: 2, Threads: 32, SharedMem: 40 << 10}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h2.BeginGrid(2, "grid", Grid{Blocks: 1, Threads: 32, SharedMem: 40 << 10}, nil); !errors.As(err, &he) ||
		he.Limit != LimitSharedMemPerSM || he.LimitValue != 64<<10 {
		t.Fatalf("shared memory = %v", err)
	}
	// A grid larger than the whole empty device can never be resident.
	h3 := NewHazards()
	h3.SetLimits(lim)
	h3.MarkPersistent("grid", -1)
	if _, err := h3.BeginGrid(1, "grid", Grid{Blocks: 9, Threads: 32}, nil); !errors.As(err, &he) ||
		he.Limit != LimitBlocksPerSM || he.Holders != 0 || !strings.Contains(err.Error(), "even on an empty device") {
		t.Fatalf("a grid larger than the device = %v", err)
	}
	// A one-shot grid of the same size runs in waves.
	if _, err := h3.BeginGrid(1, "oneshot", Grid{Blocks: 9, Threads: 32}, nil); err != nil {
		t.Fatalf("one-shot grid larger than the device: %v", err)
	}
}

// TestFalseDependency: with 2 hardware queues, streams 1 and 3 share queue
// 0. In strict mode a command behind a persistent kernel that never exits
// on stream 1 fails at once with a hardware-queue hazard; on a stream
// whose queue nobody shares it is no false dependency; a kernel launched
// on stream 3 beside the running one still starts.
func TestFalseDependency(t *testing.T) {
	h := NewHazards()
	h.SetLimits(Limits{HardwareQueues: 2})
	h.MarkPersistent("rc_ring_test", 0)
	for s := uint64(1); s <= 3; s++ {
		h.StreamCreated(s)
	}
	if q, n := h.Queue(3); q != 0 || n != 2 {
		t.Fatalf("stream 3 on queue %d of %d", q, n)
	}
	_, addr := controlBlock(t)
	l, err := h.Begin(1, "rc_ring_test", []uint64{addr})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := h.Ticket("cuLaunchKernel", 1, l)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Dispatch(tk); err != nil {
		t.Fatalf("dispatching the persistent kernel: %v", err)
	}
	_, err = h.Ticket("cuEventRecord", 1, nil)
	var he *HazardError
	if !errors.As(err, &he) || !errors.Is(err, ErrFalseDependency) || errors.Is(err, ErrResidency) || he.Limit != LimitHardwareQueue ||
		he.Queue != 0 || he.LimitValue != 2 || he.OnStream != 1 || he.Kernel != "rc_ring_test" || he.Control != addr {
		t.Fatalf("event behind the ring = %#v", err)
	}
	if !strings.Contains(err.Error(), "false dependency") {
		t.Fatalf("message %q", err)
	}
	// Independent work on stream 3 (same queue) and 2 (the other) starts.
	for _, s := range []uint64{3, 2} {
		k, err := h.Begin(s, "rc_add_f32", nil)
		if err != nil {
			t.Fatal(err)
		}
		tk, err := h.Ticket("cuLaunchKernel", s, k)
		if err != nil {
			t.Fatalf("kernel on stream %d beside the ring: %v", s, err)
		}
		if err := h.Dispatch(tk); err != nil {
			t.Fatalf("kernel on stream %d beside the ring: %v", s, err)
		}
		h.End(k)
	}
	// Alone on its queue, stream 2's ring blocks nobody.
	h.StreamDestroyed(3)
	h.StreamDestroyed(1)
	_, addr2 := controlBlock(t)
	l2, err := h.Begin(2, "rc_ring_test", []uint64{addr2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Ticket("cuEventRecord", 2, nil); err != nil {
		t.Fatalf("event behind a ring on an unshared queue: %v", err)
	}
	h.End(l2)
	h.End(l)
}

// TestBlockingFalseDependency: in blocking mode the command behind the
// never-ending kernel waits in its queue, a command of another stream on
// that queue waits behind it (QueueWaiting), a command on the other queue
// does not; when the kernel exits both go, in order; a wait the kernel
// never ends is cut by the watchdog.
func TestBlockingFalseDependency(t *testing.T) {
	h := NewHazards()
	h.SetMode(HazardBlocking, time.Minute)
	h.SetLimits(Limits{HardwareQueues: 2})
	h.MarkPersistent("rc_ring_test", 0)
	for s := uint64(1); s <= 3; s++ {
		h.StreamCreated(s)
	}
	_, addr := controlBlock(t)
	l, _ := h.Begin(1, "rc_ring_test", []uint64{addr})
	tk, _ := h.Ticket("cuLaunchKernel", 1, l)
	if err := h.Dispatch(tk); err != nil {
		t.Fatal(err)
	}
	behind, err := h.Ticket("cuEventRecord", 1, nil) // dispatched when stream 1 reaches it: after the ring
	if err != nil {
		t.Fatal(err)
	}
	held, err := h.Ticket("cuMemcpyHtoDAsync_v2", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.Dispatch(held) }()
	other, _ := h.Ticket("cuMemcpyHtoDAsync_v2", 2, nil)
	if err := h.Dispatch(other); err != nil {
		t.Fatalf("the other queue: %v", err)
	}
	for h.QueueWaiting() != 1 {
		select {
		case err := <-done:
			t.Fatalf("the command behind the blocked queue went (%v)", err)
		default:
		}
		runtime.Gosched()
	}
	h.End(l) // the ring exits: its stream reaches the event
	if err := h.Dispatch(behind); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("after the ring exited: %v", err)
	}
	// The watchdog.
	h.SetMode(HazardBlocking, 20*time.Millisecond)
	l, _ = h.Begin(1, "rc_ring_test", []uint64{addr})
	tk, _ = h.Ticket("cuLaunchKernel", 1, l)
	if err := h.Dispatch(tk); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Ticket("cuEventRecord", 1, nil); err != nil {
		t.Fatal(err)
	}
	held, _ = h.Ticket("cuMemcpyHtoDAsync_v2", 3, nil)
	var he *HazardError
	if err := h.Dispatch(held); !errors.As(err, &he) || he.Limit != LimitHardwareQueue || he.Waited < 20*time.Millisecond {
		t.Fatalf("a false dependency that never ends = %v", err)
	}
}

// TestBlockingResidency: in blocking mode a launch past the resident-grid
// limit is accepted and waits, as on a GPU, until a persistent grid exits;
// one that no grid makes room for is cut by the watchdog.
func TestBlockingResidency(t *testing.T) {
	h := NewHazards()
	h.SetMode(HazardBlocking, time.Minute)
	h.SetLimits(Limits{ResidentGrids: 2})
	h.MarkPersistent("rc_ring_test", -1)
	start := func(stream uint64, entry string) (*Tracked, *Ticket) {
		t.Helper()
		l, err := h.Begin(stream, entry, nil)
		if err != nil {
			t.Fatal(err)
		}
		tk, err := h.Ticket("cuLaunchKernel", stream, l)
		if err != nil {
			t.Fatal(err)
		}
		return l, tk
	}
	var held []*Tracked
	for s := uint64(1); s <= 2; s++ {
		l, tk := start(s, "rc_ring_test")
		if err := h.Dispatch(tk); err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	oneShot, tk := start(3, "rc_add_f32")
	done := make(chan error, 1)
	go func() { done <- h.Dispatch(tk) }()
	select {
	case err := <-done:
		t.Fatalf("a launch past the resident grids started (%v)", err)
	default:
	}
	h.End(held[0])
	if err := <-done; err != nil {
		t.Fatalf("after a grid exited: %v", err)
	}
	if grids, _ := h.Resident(); grids != 2 {
		t.Fatalf("%d grids resident", grids)
	}
	h.End(oneShot)
	_, tk = start(4, "rc_ring_test")
	if err := h.Dispatch(tk); err != nil {
		t.Fatal(err)
	}
	h.SetMode(HazardBlocking, 20*time.Millisecond)
	_, tk = start(5, "rc_ring_test")
	var he *HazardError
	if err := h.Dispatch(tk); !errors.As(err, &he) || he.Limit != LimitResidentGrids || he.Waited < 20*time.Millisecond {
		t.Fatalf("a wait no grid ends = %v", err)
	}
}
