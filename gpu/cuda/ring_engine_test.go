//go:build linux && cgo

package cuda

import (
	"context"
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/gpu/ringmsg"
	"github.com/ringactor/ringactor/internal/testutil/ringtest"
)

// TestRingKernelOnSimulatedDevice launches the built-in add program
// through the backend's ring engine on the simulated device (the host-compiled kernel
// reads the same mapped memory), exchanges messages and terminates it.
func TestRingKernelOnSimulatedDevice(t *testing.T) {
	b, fd := newSimBackend(t, nil)
	add := builtinProgram[ringmsg.VecMsg, ringmsg.VecReply](t, b, ringmsg.Add)
	k, err := b.LaunchRingProgram(add, RingConfig{Capacity: 8, Threads: 4})
	if err != nil {
		t.Fatal(err)
	}
	if fd.Sim().HostAllocs() == 0 {
		t.Fatal("no mapped host allocation")
	}
	var msg ringmsg.VecMsg
	msg.N = 5
	for i := range 5 {
		msg.A[i], msg.B[i] = float32(i), float32(10*i)
	}
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&msg)), unsafe.Sizeof(msg))
	// Gate closed: the message waits.
	if ok, err := k.TrySubmit(ringmsg.Add.TypeID(), 42, raw); !ok || err != nil {
		t.Fatalf("TrySubmit = %v, %v", ok, err)
	}
	if _, _, ok := k.TryPoll(); ok {
		t.Fatal("a reply with the gate closed")
	}
	k.Activate()
	h, p := ringtest.PollReply(t, k)
	if h.CorrelationID != 42 || h.Flags&ring.FlagReply == 0 || h.Status != ring.StatusOK {
		t.Fatalf("reply header %+v", h)
	}
	rep, err := hostsim.Decode[ringmsg.VecReply](p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if rep.Y[i] != float32(11*i) {
			t.Fatalf("y = %v", rep.Y[:5])
		}
	}
	// One-shot kernels run beside the persistent one (its own stream).
	x, _ := gpu.NewBuffer([]float32{-1, 2})
	defer x.Free()
	if err := b.Execute(context.Background(), builtin(t, "relu"), []*gpu.UnifiedBuffer{x}, x, nil); err != nil {
		t.Fatal(err)
	}
	if v := values(t, x); v[0] != 0 || v[1] != 2 {
		t.Fatalf("relu beside the ring kernel: %v", v)
	}
	if got := k.Control().Processed.Load(); got != 1 {
		t.Fatalf("processed = %d", got)
	}
	if _, err := k.TrySubmit(ringmsg.Add.TypeID(), 1, make([]byte, k.PayloadMax()+1)); !errors.Is(err, gpu.ErrArgument) {
		t.Fatalf("oversized payload = %v", err)
	}
	// Drain: a queued message is still answered, then the loop exits.
	k.Deactivate()
	if ok, _ := k.TrySubmit(ringmsg.Add.TypeID(), 43, raw); !ok {
		t.Fatal("ring full")
	}
	k.Terminate(ring.TerminateDrain)
	ctx, cancel := hangCtx(t)
	defer cancel()
	if err := k.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	// The drained reply outlives the ring's memory.
	if h, _, ok := k.TryPoll(); !ok || h.CorrelationID != 43 {
		t.Fatalf("drained reply: %+v, %v", h, ok)
	}
	if _, _, ok := k.TryPoll(); ok {
		t.Fatal("a second drained reply")
	}
	if _, err := k.TrySubmit(ringmsg.Add.TypeID(), 44, raw); !errors.Is(err, ErrRingClosed) {
		t.Fatalf("TrySubmit after Wait = %v", err)
	}
}

// TestRingKernelNotAcknowledged: Wait gives up at its deadline with
// ErrRingTimeout when the kernel has not been asked to stop.
func TestRingKernelNotAcknowledged(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	k, err := b.LaunchRingProgram(sumProgram(t, b), RingConfig{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := k.Wait(ctx); !errors.Is(err, ErrRingTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait without Terminate = %v", err)
	}
	if err := k.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestRingKernelRefusedOnWatchdogDevice(t *testing.T) {
	fd := newFakeDevice(1 << 20)
	fd.SetAttribute(AttrKernelExecTimeout, 1)
	b, _ := newSimBackend(t, fd)
	if _, err := b.LaunchRingProgram(&RingProgram{}, RingConfig{}); !errors.Is(err, ErrKernelExecTimeout) {
		t.Fatalf("LaunchRingProgram on a watchdog device = %v", err)
	}
	if _, err := NewBackend().LaunchRingProgram(&RingProgram{}, RingConfig{}); err == nil {
		t.Fatal("LaunchRingProgram without a device succeeded")
	}
}
