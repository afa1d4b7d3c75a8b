//go:build linux && cgo

package ringrt

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/gpu/ringmsg"
	"github.com/ringactor/ringactor/internal/testutil/ringtest"
)

// The ring protocol of the loop template (kernels/ring_loop.cuh), checked
// through built-in ringmsg programs on the simulated device: what the
// removed switch kernel's protocol tests checked.

// awaitAck polls k's terminated ack (the memory stays live until Wait).
func awaitAck(t *testing.T, k *Kernel) uint64 {
	t.Helper()
	deadline := hangDeadline(t) // a hang guard, not a bound on speed
	for time.Now().Before(deadline) {
		if ack, err := k.ack(); err != nil || ack != 0 {
			if err != nil {
				t.Fatal(err)
			}
			return ack
		}
		runtime.Gosched()
	}
	t.Fatal("no terminated ack: hung")
	return 0
}

func waitRing(t *testing.T, k *Kernel) {
	t.Helper()
	ctx, cancel := hangCtx(t)
	defer cancel()
	if err := k.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRingProtocolGateClosedTerminateNow: with the gate closed nothing is
// consumed; a full ring refuses the next message; TerminateNow exits
// without touching what is queued.
func TestRingProtocolGateClosedTerminateNow(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	k, err := b.Launch(sumProgram(t, b), Config{Capacity: 16, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		if ok, err := k.TrySubmit(ringmsg.Sum.TypeID(), uint64(i), ringtest.SumMsg(float32(i))); !ok || err != nil {
			t.Fatalf("submit %d: %v, %v", i, ok, err)
		}
	}
	if ok, err := k.TrySubmit(ringmsg.Sum.TypeID(), 99, ringtest.SumMsg(99)); ok || err != nil {
		t.Fatalf("a full ring accepted a message: %v, %v", ok, err)
	}
	k.Terminate(ring.TerminateNow)
	if ack := awaitAck(t, k); ack != ring.Terminated {
		t.Fatalf("ack %d", ack)
	}
	if p, in := k.Control().Processed.Load(), k.in.Len(); p != 0 || in != 16 {
		t.Fatalf("gate closed, TerminateNow: processed %d, input left %d", p, in)
	}
	waitRing(t, k)
	if h, _, ok := k.TryPoll(); ok {
		t.Fatalf("a reply with the gate closed: %+v", h)
	}
}

// TestRingProtocolGateAndDrain: messages queued behind a closed gate are
// answered in order once it opens; closing it again stops consumption;
// TerminateDrain answers what is queued even with the gate closed, then
// acks.
func TestRingProtocolGateAndDrain(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	k, err := b.Launch(sumProgram(t, b), Config{Capacity: 16, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		if ok, _ := k.TrySubmit(ringmsg.Sum.TypeID(), uint64(i), ringtest.SumMsg(float32(i))); !ok {
			t.Fatalf("submit %d refused", i)
		}
	}
	k.Activate()
	check := func(i int, h ring.SlotHeader, p []byte) {
		t.Helper()
		r, err := hostsim.Decode[ringmsg.ScalarReply](p)
		if err != nil || h.CorrelationID != uint64(i) || h.Status != ring.StatusOK || r.Value != float64(i) {
			t.Fatalf("reply %d: %+v, value %v, %v", i, h, r.Value, err)
		}
	}
	for i := range 16 {
		h, p := ringtest.PollReply(t, k)
		check(i, h, p)
	}
	k.Deactivate()
	for i := 16; i < 21; i++ {
		if ok, _ := k.TrySubmit(ringmsg.Sum.TypeID(), uint64(i), ringtest.SumMsg(float32(i))); !ok {
			t.Fatalf("submit %d refused", i)
		}
	}
	k.Terminate(ring.TerminateDrain)
	if ack := awaitAck(t, k); ack != ring.Terminated {
		t.Fatalf("ack %d", ack)
	}
	if p, in := k.Control().Processed.Load(), k.in.Len(); p != 21 || in != 0 || !k.Control().Snapshot().Terminated {
		t.Fatalf("drain: processed %d, input left %d, snapshot %+v", p, in, k.Control().Snapshot())
	}
	waitRing(t, k)
	for i := 16; i < 21; i++ {
		h, p, ok := k.TryPoll()
		if !ok {
			t.Fatalf("drained reply %d missing", i)
		}
		check(i, h, p)
	}
	if _, _, ok := k.TryPoll(); ok {
		t.Fatal("an extra reply")
	}
}

// TestRingProtocolStress pushes thousands of add messages of random sizes
// from one goroutine while this one pops: no loss, no duplicate, no
// reordering, and the device's sums are the CPU handler's.
func TestRingProtocolStress(t *testing.T) {
	const total = 3000
	b, _ := newSimBackend(t, nil)
	k, err := b.Launch(builtinProgram[ringmsg.VecMsg, ringmsg.VecReply](t, b, ringmsg.Add), Config{Capacity: 32, Threads: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer waitRing(t, k)
	defer k.Terminate(ring.TerminateDrain)
	k.Activate()
	msgs := make([]ringmsg.VecMsg, total)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range msgs {
		n := rng.IntN(ringmsg.VecMax + 1)
		msgs[i].N = uint32(n)
		for j := range n {
			msgs[i].A[j], msgs[i].B[j] = rng.Float32()*8-4, rng.Float32()*8-4
		}
	}
	errc := make(chan error, 1)
	go func() {
		for i := range msgs {
			raw := unsafe.Slice((*byte)(unsafe.Pointer(&msgs[i])), unsafe.Sizeof(msgs[i]))
			for {
				ok, err := k.TrySubmit(ringmsg.Add.TypeID(), uint64(i), raw)
				if err != nil {
					errc <- err
					return
				}
				if ok {
					break
				}
				runtime.Gosched()
			}
		}
		errc <- nil
	}()
	cpu, err := ringmsg.Handler[ringmsg.VecMsg, ringmsg.VecReply](ringmsg.Add)
	if err != nil {
		t.Fatal(err)
	}
	for i := range total {
		h, p := ringtest.PollReply(t, k)
		got, err := hostsim.Decode[ringmsg.VecReply](p)
		if err != nil || h.CorrelationID != uint64(i) || h.Status != ring.StatusOK {
			t.Fatalf("reply %d: %+v, %v", i, h, err)
		}
		want, err := cpu(msgs[i])
		if err != nil || got != want {
			t.Fatalf("reply %d: device %v, CPU %v (%v)", i, got.Y[:got.N], want.Y[:want.N], err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if p := k.Control().Processed.Load(); p != total {
		t.Fatalf("processed %d", p)
	}
}
