//go:build linux && cgo

package cuda

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/gpu/ringmsg"
	"github.com/ringactor/ringactor/internal/testutil/ringtest"
)

// epochRequestsWaiting says how many DeviceEpoch calls are waiting for an
// epoch.
func epochRequestsWaiting(d *device) int {
	return d.Epochs.Pace.Waiting()
}

// TestRelaunchedRingHandlesBacklog: a ring relaunched by an epoch handles
// what was queued before the relaunch before the next epoch parks it,
// however late its loop starts. Here the relaunch is held on the ring's
// stream (as a slow launch would be) while the next epoch is asked for;
// that epoch used to park the ring at once, so the loop started, saw the
// park and exited having handled nothing (processed 0 of 5).
func TestRelaunchedRingHandlesBacklog(t *testing.T) {
	b, fd := newSimBackend(t, nil)
	WithEpochSpacing(0)(b) // the guarantee does not rest on the spacing
	k := launchRing(t, b)
	const queued = 5
	for i := range queued {
		if ok, err := k.TrySubmit(ringmsg.Sum.TypeID(), uint64(i), ringtest.SumMsg(float32(i))); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	// Epoch A: while the ring is parked, hold its stream and open its gate,
	// so that the 5 messages are queued before the relaunch and the
	// relaunch waits behind the held stream.
	err = d.Do(func() error {
		return d.Epoch(context.Background(), "test", func() error {
			k.Activate()
			return fd.Enqueue(ringStream(t, b), func() error { <-release; return nil })
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := k.Control().Processed.Load(); p != 0 {
		t.Fatalf("processed %d before the relaunch ran", p)
	}
	// Epoch B, asked for while the relaunch is held.
	done := make(chan error, 1)
	go func() {
		_, err := b.DeviceEpoch(context.Background())
		done <- err
	}()
	// Let the relaunch run once B has been asked for (it is waiting for the
	// ring) or has already parked the ring.
	for epochRequestsWaiting(d) == 0 && ring.TerminateMode(k.Control().Terminate.Load()) != ring.TerminateNow {
		runtime.Gosched()
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if p := k.Control().Processed.Load(); p != queued {
		t.Fatalf("the ring was parked again after handling %d of the %d messages queued before its relaunch", p, queued)
	}
	for i := range queued {
		if h, _, ok := k.TryPoll(); !ok || h.CorrelationID != uint64(i) {
			t.Fatalf("reply %d: %+v %v", i, h, ok)
		}
	}
	if st := b.EpochStats(); st.Count != 2 || st.Served != 2 {
		t.Fatalf("epoch stats %+v", st)
	}
}

// TestBacklogWaitsOnlyForWhatCanRun: an epoch does not wait for a backlog
// the ring cannot handle: a closed gate, or an output ring full of replies
// nobody reads. Both epochs complete at once and leave the messages
// queued.
func TestBacklogWaitsOnlyForWhatCanRun(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	WithEpochSpacing(0)(b)
	WithParkTimeout(time.Minute)(b)
	k := launchRing(t, b) // 16 slots, gate closed
	for i := range 16 {
		if ok, err := k.TrySubmit(ringmsg.Sum.TypeID(), uint64(i), ringtest.SumMsg(float32(i))); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	ctx := context.Background()
	for range 2 { // the second epoch's backlog is the 16 queued messages
		if _, err := b.DeviceEpoch(ctx); err != nil {
			t.Fatalf("epoch beside a closed gate: %v", err)
		}
	}
	if p := k.Control().Processed.Load(); p != 0 {
		t.Fatalf("processed %d behind a closed gate", p)
	}
	// Open the gate: the ring answers all 16 into its 16-slot output ring,
	// which nobody reads; then 16 more messages queue behind the full ring.
	k.Activate()
	for k.Control().Processed.Load() < 16 {
		runtime.Gosched()
	}
	for i := range 16 {
		if ok, err := k.TrySubmit(ringmsg.Sum.TypeID(), uint64(16+i), ringtest.SumMsg(float32(i))); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	for range 2 {
		if _, err := b.DeviceEpoch(ctx); err != nil {
			t.Fatalf("epoch beside a full output ring: %v", err)
		}
	}
	if p := k.Control().Processed.Load(); p != 16 {
		t.Fatalf("processed %d with the output ring full", p)
	}
	got := 0
	for got < 32 {
		if h, _, ok := k.TryPoll(); ok {
			if h.CorrelationID != uint64(got) {
				t.Fatalf("reply %d has correlation %d", got, h.CorrelationID)
			}
			got++
			continue
		}
		runtime.Gosched()
	}
}

// TestConcurrentEpochsCoalesce: DeviceEpoch calls waiting at once are
// served by one epoch, which parks the rings once; every caller gets its
// outcome. They used to park and relaunch the rings once each.
func TestConcurrentEpochsCoalesce(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	k := launchRing(t, b)
	k.Activate()
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	// Hold the device's thread while the callers gather.
	hold, held := make(chan struct{}), make(chan struct{})
	go func() {
		_ = d.Do(func() error { close(held); <-hold; return nil })
	}()
	<-held
	const callers = 8
	var wg sync.WaitGroup
	took := make([]time.Duration, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			took[i], errs[i] = b.DeviceEpoch(context.Background())
		}()
	}
	for epochRequestsWaiting(d) < callers {
		runtime.Gosched()
	}
	close(hold)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i, d := range took {
		if d <= 0 || d != took[0] {
			t.Fatalf("caller %d: took %v, caller 0 %v: not one epoch", i, d, took[0])
		}
	}
	if st := b.EpochStats(); st.Count != 1 || st.Served != callers || st.RingsParked != 1 {
		t.Fatalf("%d concurrent DeviceEpoch calls: epoch stats %+v, want one epoch serving all", callers, st)
	}
	ringtest.Exchange(t, k, 10, 1)
}

// TestEpochSpacing: epochs asked for back to back park no sooner than the
// spacing after the previous one ended: n epochs take at least n-1
// spacings (a lower bound the pacing guarantees whatever the machine's
// load, not a speed check). They used to follow each other at once.
func TestEpochSpacing(t *testing.T) {
	const spacing, n = 40 * time.Millisecond, 4
	b, _ := newSimBackend(t, nil)
	WithEpochSpacing(spacing)(b)
	k := launchRing(t, b)
	k.Activate()
	ctx := context.Background()
	if _, err := b.DeviceEpoch(ctx); err != nil { // the first parks at once
		t.Fatal(err)
	}
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	start := d.Epochs.Pace.LastEnd() // when the first relaunched the ring
	for range n - 1 {
		if _, err := b.DeviceEpoch(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el < (n-1)*spacing {
		t.Fatalf("%d epochs %v after the first ended: spaced less than %v apart", n-1, el, spacing)
	}
	if st := b.EpochStats(); st.Count != n {
		t.Fatalf("epoch stats %+v", st)
	}
	ringtest.Exchange(t, k, 10, 1)
}
