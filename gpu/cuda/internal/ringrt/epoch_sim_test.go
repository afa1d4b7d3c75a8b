//go:build linux && cgo

package ringrt

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/gpu/ringmsg"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
	"github.com/ringactor/ringactor/internal/testutil/ringtest"
	"github.com/ringactor/ringactor/messages"
)

// TestTerminateDuringEpoch: an owner's Terminate made while its ring is
// parked is applied at the relaunch: drain answers what was queued, now
// leaves it queued; Wait sees neither the park's ack nor a relaunch.
func TestTerminateDuringEpoch(t *testing.T) {
	for _, mode := range []ring.TerminateMode{ring.TerminateDrain, ring.TerminateNow} {
		b, _ := newSimBackend(t, nil)
		k := launchRing(t, b)
		for i := range 3 {
			if ok, err := k.TrySubmit(ringmsg.Sum.TypeID(), uint64(i), ringtest.SumMsg(float32(i))); !ok || err != nil {
				t.Fatal(ok, err)
			}
		}
		d := b.d
		err := d.Do(func() error {
			return d.Epoch(context.Background(), "test", func() error {
				k.Terminate(mode)
				if ack, _ := k.ack(); ack != 0 {
					t.Errorf("the owner sees the park's ack %d", ack)
				}
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := hangCtx(t)
		if err := k.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		n := 0
		for {
			h, _, ok := k.TryPoll()
			if !ok {
				break
			}
			if h.CorrelationID != uint64(n) {
				t.Fatalf("%v: reply %d has correlation %d", mode, n, h.CorrelationID)
			}
			n++
		}
		if want := map[ring.TerminateMode]int{ring.TerminateDrain: 3, ring.TerminateNow: 0}[mode]; n != want {
			t.Fatalf("%v during an epoch: %d replies, want %d", mode, n, want)
		}
	}
}

// TestEpochParkTimeout: a ring that does not acknowledge its park (here a
// control block no loop serves) fails the epoch with devcore.ErrEpochTimeout
// before the synchronising call is made; the rings that did park run
// again. The epoch gives up when the test ends its context, once the live
// ring has acknowledged its park: with a park timeout of 20 ms instead, a
// loaded machine (-race, other builds) let the timeout expire before the
// live ring's ack, which left it stopped and the exchange unanswered
// (devcore's TestEpochsParkTimeout checks the timeout itself).
func TestEpochParkTimeout(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	k := launchRing(t, b)
	k.Activate()
	cb := k.Control()
	ctx, giveUp := context.WithCancel(hangguard.Context(t))
	defer giveUp()
	go func() {
		for cb.TerminatedAck.Load() == 0 && ctx.Err() == nil {
			runtime.Gosched()
		}
		giveUp()
	}()
	d := b.d
	called := false
	err := d.Do(func() error {
		ghost := &Kernel{d: d, cb: &ring.ControlBlock{}}
		ghost.addLive()
		defer d.Epochs.Remove((*parkedRing)(ghost))
		return d.Epoch(ctx, "test", func() error { called = true; return nil })
	})
	if !errors.Is(err, devcore.ErrEpochTimeout) || !errors.Is(err, context.Canceled) || called {
		t.Fatalf("epoch with a ring that never parks = %v (call made: %v)", err, called)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("ring %d ", 2)) {
		t.Errorf("the error does not name the ghost ring: %v", err)
	}
	ringtest.Exchange(t, k, 10, 3)
}

// TestAbandonedParkLateAck: an epoch that gives up waiting for a ring's
// ack hands its owner's terminate word back, but the loop may have read
// TerminateNow already and ack after the hand-back. The test drives that
// interleaving deterministically: the ring's loop acks its park, the test
// hides the ack from the epoch's Resume (as if it came later) and then
// shows it. The host must relaunch the ring: every message queued before
// the park and sent after it gets exactly one reply, the ring stays live,
// and the next epoch parks and relaunches it as usual.
func TestAbandonedParkLateAck(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	k := launchRing(t, b)
	cb := k.Control()
	const before, after = 3, 3
	submit := func(i int) {
		t.Helper()
		if ok, err := k.TrySubmit(ringmsg.Sum.TypeID(), uint64(i), ringtest.SumMsg(float32(i))); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	for i := range before {
		submit(i) // the gate is closed: they stay queued across the park
	}
	abandonPark(t, b, k)
	deadline := hangDeadline(t)
	k.Activate()
	for i := range after {
		submit(before + i)
	}
	seen := map[uint64]int{}
	for len(seen) < before+after {
		h, _, ok := k.TryPoll()
		if !ok {
			if time.Now().After(deadline) {
				t.Fatalf("replies %v of %d: the ring stopped for the abandoned park (ack %d, processed %d)",
					seen, before+after, cb.TerminatedAck.Load(), cb.Processed.Load())
			}
			runtime.Gosched()
			continue
		}
		seen[h.CorrelationID]++
		if seen[h.CorrelationID] > 1 || h.CorrelationID >= before+after {
			t.Fatalf("reply for correlation %d (seen %v)", h.CorrelationID, seen)
		}
	}
	if ack, err := k.ack(); ack != 0 || err != nil {
		t.Fatalf("the ring is not live after its relaunch: ack %d, %v", ack, err)
	}
	if _, err := b.Epoch(context.Background()); err != nil {
		t.Fatalf("the next epoch: %v", err)
	}
	ringtest.Exchange(t, k, 10, 3)
	if _, _, ok := k.TryPoll(); ok {
		t.Fatal("an extra reply")
	}
}

// abandonPark drives the interleaving of TestAbandonedParkLateAck: the
// ring's loop acks its park after the epoch's Resume handed its terminate
// word back.
func abandonPark(t *testing.T, b *Runtime, k *Kernel) {
	t.Helper()
	deadline := hangDeadline(t)
	cb := k.Control()
	err := b.d.Do(func() error {
		p := (*parkedRing)(k)
		if !p.Terminate() {
			return errors.New("the live ring was not parked")
		}
		for !p.Acked() {
			if time.Now().After(deadline) {
				return errors.New("the ring never acknowledged its park")
			}
			runtime.Gosched()
		}
		ack := cb.TerminatedAck.Swap(0)
		if err := p.Resume(); err != nil {
			return err
		}
		cb.TerminatedAck.Store(ack)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAbandonedParkRecovery: the ring whose loop acked an abandoned park
// is relaunched by the next epoch when its owner does not poll meanwhile,
// and an owner's TerminateDrain made after the late ack drains what was
// queued (Wait relaunches the loop to drain it) instead of dropping it.
func TestAbandonedParkRecovery(t *testing.T) {
	const queued = 3
	setup := func(t *testing.T) (*Runtime, *Kernel) {
		b, _ := newSimBackend(t, nil)
		k := launchRing(t, b)
		for i := range queued {
			if ok, err := k.TrySubmit(ringmsg.Sum.TypeID(), uint64(i), ringtest.SumMsg(float32(i))); !ok || err != nil {
				t.Fatal(ok, err)
			}
		}
		abandonPark(t, b, k)
		return b, k
	}
	drainReplies := func(t *testing.T, k *Kernel) int {
		n := 0
		for {
			h, _, ok := k.tryPoll() // no relaunch from the poll
			if !ok {
				return n
			}
			if h.CorrelationID != uint64(n) {
				t.Fatalf("reply %d has correlation %d", n, h.CorrelationID)
			}
			n++
		}
	}
	t.Run("epoch", func(t *testing.T) {
		b, k := setup(t)
		ctx, cancel := hangCtx(t)
		defer cancel()
		if _, err := b.Epoch(ctx); err != nil {
			t.Fatalf("the next epoch: %v", err)
		}
		if ack := k.Control().TerminatedAck.Load(); ack != 0 {
			t.Fatalf("the next epoch left the ring stopped (ack %d)", ack)
		}
		if st := b.EpochStats(); st.RingsParked != 1 {
			t.Errorf("epoch stats %+v: want the ring parked and relaunched once", st)
		}
		k.Activate()
		deadline := hangDeadline(t)
		for n := 0; n < queued; {
			h, _, ok := k.tryPoll() // no relaunch from the poll
			if !ok {
				if time.Now().After(deadline) {
					t.Fatalf("answered %d of the %d queued", n, queued)
				}
				runtime.Gosched()
				continue
			}
			if h.CorrelationID != uint64(n) {
				t.Fatalf("reply %d has correlation %d", n, h.CorrelationID)
			}
			n++
		}
		ringtest.Exchange(t, k, 10, 3)
	})
	t.Run("drain", func(t *testing.T) {
		_, k := setup(t)
		k.Activate()
		k.Terminate(ring.TerminateDrain)
		ctx, cancel := hangCtx(t)
		defer cancel()
		if err := k.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if n := drainReplies(t, k); n != queued {
			t.Fatalf("TerminateDrain after an abandoned park answered %d of %d", n, queued)
		}
	})
}

// TestAbandonedGridParkLateAck: a grid whose loop acked an abandoned park
// is relaunched when a mailbox's owner polls: each mailbox keeps being
// answered, with its state, as across any epoch.
func TestAbandonedGridParkLateAck(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	p := loadSaxpy(t, b)
	k, err := b.Open(p, Config{})
	if err != nil {
		t.Fatal(err)
	}
	ringtest.CloseAtEnd(t, k)
	k.Activate()
	for m := range 4 {
		if m == 1 {
			abandonPark(t, b, k.grid.k)
		}
		req := saxpyReq{N: 3, A: 2, X: [64]float32{1, 2, 3}, Y: [64]float32{float32(m)}}
		_, got := exchangeProgram(t, k, uint64(m), messages.FixedBytes(&req))
		if want := saxpyWant(req, uint64(m+1)); string(got) != string(messages.FixedBytes(&want)) {
			t.Fatalf("message %d: wrong reply or lost state", m)
		}
	}
	if ack := k.grid.k.Control().TerminatedAck.Load(); ack != 0 {
		t.Fatalf("the grid is stopped (ack %d)", ack)
	}
}
