//go:build linux && cgo

package ringrt

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/messages"
)

// TestMailboxTableGrows: a grid's table starts small (4 entries here) and
// doubles, in a device epoch, each time it is full, up to its bound (64):
// 4 growths, the 65th mailbox is gpu.ErrDeviceCapacity at once. The
// kernels opened first keep their State across every move (their replies
// count on from before), one of them exchanges messages the whole time
// (its pump rings while tables are swapped), and every kernel answers on
// the final table.
func TestMailboxTableGrows(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	b.opt.Mailboxes, b.opt.MailboxInit = 64, 4
	p := loadSaxpy(t, b)
	req := func(m int) saxpyReq {
		return saxpyReq{N: 2, A: float32(m%7 + 1), X: [64]float32{1, 2}, Y: [64]float32{float32(m)}}
	}
	deadline := hangDeadline(t)
	exchange := func(k *Kernel, m int, seen uint64) error {
		r := req(m)
		if ok, err := k.TrySubmit(1, uint64(m), messages.FixedBytes(&r)); !ok || err != nil {
			return errors.Join(err, fmt.Errorf("submit %d refused", m))
		}
		var h ring.SlotHeader
		var got []byte
		for ok := false; !ok; {
			if h, got, ok = k.TryPoll(); !ok && time.Now().After(deadline) {
				return fmt.Errorf("no reply to %d: hung", m)
			}
			runtime.Gosched()
		}
		want := saxpyWant(r, seen)
		if h.CorrelationID != uint64(m) || h.Status != ring.StatusOK || string(got) != string(messages.FixedBytes(&want)) {
			return fmt.Errorf("reply %d: %+v, seen %d: the State did not move with the table", m, h, seen)
		}
		return nil
	}
	var ks []*Kernel
	open := func() error {
		k, err := b.Open(p, Config{})
		if err != nil {
			return err
		}
		k.Activate()
		ks = append(ks, k)
		return nil
	}
	for range 3 {
		if err := open(); err != nil {
			t.Fatal(err)
		}
	}
	for i, k := range ks {
		if err := exchange(k, i, 1); err != nil {
			t.Fatal(err)
		}
	}
	busy := ks[0]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var busyErr error
	var busySeen uint64 = 1
	wg.Add(1)
	go func() {
		defer wg.Done()
		for m := 1000; ; m++ {
			select {
			case <-stop:
				return
			default:
			}
			busySeen++
			if busyErr = exchange(busy, m, busySeen); busyErr != nil {
				return
			}
		}
	}()
	for len(ks) < 64 {
		if err := open(); err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("mailbox %d: %v", len(ks), err)
		}
	}
	err := open()
	close(stop)
	wg.Wait()
	if busyErr != nil {
		t.Fatal(busyErr)
	}
	var de *gpu.DeviceError
	if !errors.Is(err, gpu.ErrDeviceCapacity) || !errors.As(err, &de) {
		t.Fatalf("mailbox 65 of 64: %v", err)
	}
	g := busy.grid
	if g.grows != 4 || len(g.tab.entries) != 64 {
		t.Fatalf("%d growths to %d entries, want 4 to 64", g.grows, len(g.tab.entries))
	}
	if s := b.EpochStats(); s.Count < 4 {
		t.Fatalf("epoch stats %+v", s)
	}
	for i, k := range ks {
		seen := uint64(1)
		switch {
		case k == busy:
			busySeen++
			seen = busySeen
		case i < 3:
			seen = 2
		}
		if err := exchange(k, 5000+i, seen); err != nil {
			t.Fatalf("kernel %d: %v", i, err)
		}
	}
	for _, k := range ks {
		if err := k.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMailboxPinnedBound: a mailbox never pins more than the backend's
// bound. Messages of 48 KiB need 2 slots of about 48 KiB per ring, over
// the default 128 KiB: OpenMailbox refuses the kernel with
// ErrMailboxTooLarge (gpu.ErrDeviceCapacity, so an actor kernel runs its
// fallback, or fails Launch with WithOnDeviceCapacity(CapacityError)).
// With the bound at exactly that mailbox's size it opens and answers; one
// byte less and it is refused.
func TestMailboxPinnedBound(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	p := loadProgram(t, b, ProgramSpec{Name: "big", Code: bigCode, Handler: "big",
		Req: reflect.TypeFor[bigReq](), Resp: reflect.TypeFor[bigResp]()})
	_, slot := mailboxGeometry(p.src, Config{}, MailboxPinnedMax)
	_, _, need := ringLayout(2, slot)
	if need <= MailboxPinnedMax {
		t.Fatalf("a 2-slot mailbox of %d-byte slots pins %d bytes: not over the default bound", slot, need)
	}
	var de *gpu.DeviceError
	if _, err := b.Open(p, Config{}); !errors.Is(err, ErrMailboxTooLarge) || !errors.Is(err, gpu.ErrDeviceCapacity) || !errors.As(err, &de) {
		t.Fatalf("a %d-byte mailbox under the default bound: %v", need, err)
	}
	b.opt.MailboxPinnedMax = int(need) - 1
	if _, err := b.Open(p, Config{}); !errors.Is(err, ErrMailboxTooLarge) {
		t.Fatalf("one byte over the bound: %v", err)
	}
	b.opt.MailboxPinnedMax = int(need)
	k, err := b.Open(p, Config{})
	if err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	if got := k.PinnedBytes(); got != int(need) {
		t.Fatalf("pins %d bytes, want %d", got, need)
	}
	k.Activate()
	req := &bigReq{N: 5}
	var want bigResp
	for j := range req.N {
		req.X[j] = float32(j) + 1
		want.Y[j] = 2 * req.X[j]
		want.Sum += float64(req.X[j])
	}
	if h, got := exchangeProgram(t, k, 1, messages.FixedBytes(req)); h.Status != ring.StatusOK || string(got) != string(messages.FixedBytes(&want)) {
		t.Fatalf("reply %+v", h)
	}
	if err := k.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestMailboxPinnedTotal: the device's mailboxes together pin at most the
// runtime's total bound: with room for three mailboxes the fourth is
// refused with ErrMailboxPinnedFull (a capacity error) and nothing
// leaks; a closed mailbox gives its bytes back.
func TestMailboxPinnedTotal(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	p := loadSaxpy(t, b)
	first, err := b.Open(p, Config{})
	if err != nil {
		t.Fatal(err)
	}
	per := first.PinnedBytes()
	b.opt.MailboxPinnedTotal = 3 * per
	ks := []*Kernel{first}
	for range 2 {
		k, err := b.Open(p, Config{})
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
	}
	var de *gpu.DeviceError
	if _, err := b.Open(p, Config{}); !errors.Is(err, ErrMailboxPinnedFull) || !errors.As(err, &de) || de.Kind != gpu.DeviceCapacity {
		t.Fatalf("a fourth mailbox over the total: %v", err)
	}
	if s := b.MailboxStats(); s.Mailboxes != 3 || s.PinnedLimit != 3*per {
		t.Fatalf("stats %+v", s)
	}
	if err := ks[0].Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	k, err := b.Open(p, Config{})
	if err != nil {
		t.Fatalf("once a mailbox closed: %v", err)
	}
	k.Activate()
	ks = append(ks[1:], k)
	for _, k := range ks {
		if err := k.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
