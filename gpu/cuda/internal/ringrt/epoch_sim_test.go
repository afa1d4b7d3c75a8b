//go:build linux && cgo

package ringrt

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/gpu/ringmsg"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
	"github.com/ringactor/ringactor/internal/testutil/ringtest"
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
